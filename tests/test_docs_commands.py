"""Every `$ catalyst …` shown in README.md and docs/ is run, and its output compared.

A ```text block is a transcript: a line starting with `$ ` is a command, the lines under
it are what it prints. The commands of one page run in order in one fresh copy of the
repository's sample project (its `playbooks/` and `pyproject.toml`), as a reader following
the page would run them from a clone. What differs from run to run is normalised before
comparing: run ids (the one a page shows stands for the one the run made, also in later
commands), durations and the bars of a run's timeline.

A ```yaml block whose first line is a comment naming a file of the project
(`# playbooks/first.yaml`) is that file: it is written into the project where it stands on
the page, so the commands after it see it, as they would for a reader who saved it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(text|yaml)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SAVED_AS = re.compile(r"# ((?:playbooks|\.xe)/[\w./-]+\.ya?ml)$")
RUN_ID = re.compile(r"\b\d{8}-\d{6}-[a-z0-9-]+?-\d{3}\b")
DURATION = re.compile(r"\b\d+(?:\.\d+)? (?:ms|s)\b")
#: A bar of `runs show`'s timeline: where its step's time sat in the run, which varies too.
BAR = re.compile(r"\|[█ ]{2,}\|")


def transcripts(page: Path) -> list[tuple[str, str]]:
    """The (command, expected output) pairs of a page, in order."""
    return [(c, o) for c, o in steps(page) if c.startswith("catalyst ")]


def steps(page: Path) -> list[tuple[str, str]]:
    """What a reader of the page does, in order: ("catalyst …", what it prints) for a
    command, (a project path, its text) for a file the page saves."""
    found = []
    for kind, block in BLOCK.findall(page.read_text(encoding="utf-8")):
        if kind == "yaml":
            saved = SAVED_AS.match(block.split("\n", 1)[0])
            if saved:
                found.append((saved.group(1), block))
            continue
        command, output = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command is not None and command.startswith("catalyst "):
                    found.append((command, "\n".join(output)))
                command, output = line[2:], []
            elif command is not None:
                output.append(line)
        if command is not None and command.startswith("catalyst "):
            found.append((command, "\n".join(output)))
    return found


PAGES_WITH_COMMANDS = [p for p in PAGES if transcripts(p)]


def _normalise(text: str, ids: dict[str, str]) -> str:
    def run_id(match: re.Match) -> str:
        return ids.setdefault(match.group(0), f"<run {len(ids) + 1}>")

    return BAR.sub("|<bar>|", DURATION.sub("<t>", RUN_ID.sub(run_id, text))).rstrip()


@pytest.mark.parametrize("page", PAGES_WITH_COMMANDS, ids=lambda p: p.name)
def test_every_shown_command_prints_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "playbooks", project / "playbooks")
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    shutil.copytree(ROOT / "tests" / "golden" / "check", project / "tests" / "golden" / "check")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
        "CATALYST_LANDLOCK": os.environ.get("CATALYST_LANDLOCK", ""),
    }
    # Run ids are numbered in order of first appearance, on the page and in what the tool
    # printed: the same placeholder on both sides means the same run.
    shown: dict[str, str] = {}
    made: dict[str, str] = {}
    for command, expected in steps(page):
        if not command.startswith("catalyst "):
            (project / command).parent.mkdir(parents=True, exist_ok=True)
            (project / command).write_text(expected, encoding="utf-8")
            continue
        real = {token: run_id for run_id, token in made.items()}
        argv = [real.get(shown.get(word, ""), word) for word in shlex.split(command)]
        done = subprocess.run(
            [sys.executable, "-m", "catalyst_dsl", *argv[1:]],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
        assert _normalise(done.stdout, made) == _normalise(expected, shown), (
            f"{page.name}: `{command}` printed\n{done.stdout}"
        )
