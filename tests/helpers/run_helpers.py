"""Helpers for tests that run playbooks: a throwaway project, `catalyst` in-process, snapshots.

A project is a directory with `catalyst.toml` and `playbooks/*.yaml`. `RunProject.cli`
invokes the real command line (`catalyst_dsl.cli.main:cli`) through click's CliRunner from
inside the project, so runs go through the same session, checks and exit codes as a user's.
"""

from __future__ import annotations

import contextlib
import json
import signal
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from catalyst_dsl.cli.main import cli
from catalyst_dsl.runtime.effects.confinement import Confinement

#: Playbooks several test files share: one that pauses at a checkpoint between two values,
#: one that pauses for an Architect, and one that opens a pull request and waits for its
#: review (against the fake GitHub API).
GATE = """
name: gate
description: A value, a checkpoint, a value.
owner: Engineer
steps:
  - var: first
    value: 1
  - checkpoint: review
    message: Look at it
  - var: second
    value: ${{ first + 1 }}
"""

REVIEWED = """
    name: reviewed
    description: pauses for an architect
    owner: Engineer
    reviewers:
      required: [Architect]
    steps:
      - name: review
        checkpoint: "Look at it"
      - name: after
        log-info: "after the review"
"""

PROPOSE = """
    name: propose
    description: opens a pull request and waits for its review
    owner: Engineer
    reviewers:
      required: [Architect]
    steps:
      - name: pr
        github-pr-create: Add the widget
        head: feature
        base: main
        repository: acme/widgets
        waitForReview: true
      - log-info: "merged after review"
"""


def approval_by_hand(path: str, by: str, at: str) -> dict[str, Any]:
    """An approval as Architect of the checkpoint at `path`, released, as a snapshot records
    one, but written into the snapshot by hand: no token, no signature, no command behind it."""
    return {
        "path": path,
        "role": "Architect",
        "by": by,
        "at": at,
        "comment": None,
        "via": "cli",
        "released": True,
        "selected": None,
        "decision": "approve",
        "token": None,
        "subject": None,
        "delivered": False,
        "signedText": None,
        "signature": None,
    }


class RunProject:
    def __init__(self, root: Path, monkeypatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch
        root.mkdir(parents=True, exist_ok=True)
        (root / "playbooks").mkdir(exist_ok=True)
        # The temp folder beside the project, not holding it, as on a user's machine: what a
        # step's program may write without declaring it (tests keep their logs there).
        self.temp = root.parent / "temp"
        self.temp.mkdir(exist_ok=True)
        monkeypatch.setenv("TMPDIR", str(self.temp))
        monkeypatch.setattr(tempfile, "tempdir", str(self.temp))
        # Each program's TMPDIR is a folder of its own that dies with it; here every program
        # gets this one, kept, so tests can read what steps logged there (test_confinement
        # puts the real one back to test it).
        monkeypatch.setattr(Confinement, "temp_folder", lambda confinement: contextlib.nullcontext(self.temp))
        self.settings("")
        monkeypatch.chdir(root)

    # -- files

    def settings(self, toml: str) -> None:
        (self.root / "catalyst.toml").write_text(textwrap.dedent(toml), encoding="utf-8")

    def user_settings(self, toml: str) -> Path:
        """Write the user's own configuration ($XDG_CONFIG_HOME/catalyst/config.toml, in a
        directory of this test's own): the settings a repository may not give."""
        home = self.root.parent / "config-home"
        (home / "catalyst").mkdir(parents=True, exist_ok=True)
        self.monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
        path = home / "catalyst" / "config.toml"
        path.write_text(textwrap.dedent(toml), encoding="utf-8")
        return path

    def playbook(self, name: str, yaml_text: str) -> Path:
        """Write playbooks/NAME.yaml; the text is dedented."""
        path = self.root / "playbooks" / f"{name}.yaml"
        path.write_text(textwrap.dedent(yaml_text).lstrip("\n"), encoding="utf-8")
        return path

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def read(self, relative: str) -> str:
        return (self.root / relative).read_text(encoding="utf-8")

    def read_temp(self, name: str) -> str:
        """A file a program wrote to `$TMPDIR/name`."""
        return (self.temp / name).read_text(encoding="utf-8")

    def exists(self, relative: str) -> bool:
        return (self.root / relative).exists()

    # -- the command line

    def cli(self, *args: str) -> Result:
        """`catalyst ARGS` in-process; the SIGTERM handler a run installs is put back after."""
        before = signal.getsignal(signal.SIGTERM)
        try:
            return CliRunner().invoke(cli, list(args), catch_exceptions=False)
        finally:
            signal.signal(signal.SIGTERM, before)

    def run(self, name: str, *args: str, **inputs: Any) -> Result:
        """`catalyst run NAME -i k=v … ARGS`; keyword inputs use `_` for `-`."""
        given = [f"{key.replace('_', '-')}={value}" for key, value in inputs.items()]
        return self.cli("run", name, *[a for pair in given for a in ("-i", pair)], *args)

    # -- snapshots

    @property
    def state_dir(self) -> Path:
        return self.root / ".xe" / "runs"

    def live_snapshots(self) -> list[Path]:
        return sorted(self.state_dir.glob("run-*.json")) if self.state_dir.is_dir() else []

    def archived_snapshots(self) -> list[Path]:
        return sorted((self.state_dir / "history").glob("*/*/*/run-*.json")) if self.state_dir.is_dir() else []

    def snapshot_files(self) -> list[Path]:
        return sorted(self.live_snapshots() + self.archived_snapshots(), key=lambda p: p.name)

    def snapshot(self, run_id: str | None = None) -> dict[str, Any]:
        """The snapshot of RUN_ID, or of the only (else the newest) run."""
        files = self.snapshot_files()
        if run_id is not None:
            files = [p for p in files if p.name == f"run-{run_id}.json"]
        assert files, f"no snapshot{' of ' + run_id if run_id else ''} under {self.state_dir}"
        return json.loads(files[-1].read_text(encoding="utf-8"))

    def run_id(self) -> str:
        return self.snapshot()["runId"]

    def listed(self) -> dict[str, dict[str, Any]]:
        """`catalyst runs list --json` by run id: what any store shows, files or database."""
        result = self.cli("runs", "list", "--json")
        assert result.exit_code == 0, result.output
        return {run["runId"]: run for run in json.loads(result.output)["runs"]}

    def steps(self, run_id: str | None = None) -> list[dict[str, Any]]:
        return self.snapshot(run_id)["steps"]

    def step(self, name: str, run_id: str | None = None) -> dict[str, Any]:
        """The last journal entry of the step named NAME."""
        found = [s for s in self.steps(run_id) if s["name"] == name]
        assert found, f"no journal entry for {name}: {[s['name'] for s in self.steps(run_id)]}"
        return found[-1]
