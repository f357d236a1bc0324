"""A whole check answered from the check cache (cache.replay): given back only while every
fact it depends on holds, never when a file, a folder, a probed file or a program changed;
a damaged, foreign or forged record is ignored and replaced."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.project import check as project_check
from catalyst_dsl.project import observed
from catalyst_dsl.project.cache import replay
from catalyst_dsl.project.cache.codec import CacheEntryError

from tests.project.cache.test_check_cache import BROKEN, library

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "library"
KAI_CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "kai"
#: The commands kai's auto-validate runs, and an index that lists it.
COMMANDS = ("qa.plan", "qa.run")
INDEX = (
    "playbooks:\n  - name: auto-validate\n"
    "    file: playbooks/auto-validate.yaml\n    description: x\n    steps: \"1\"\n"
)


def run(*args: str):
    result = CliRunner().invoke(cli, ["check", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def records(root: Path) -> list[Path]:
    """The cache's entries that are check records (JSON with a `facts` list), not files' results."""
    found = []
    for entry in (root / ".xe" / "cache").rglob("*"):
        if entry.is_file() and entry.name != ".gitignore" and b'"facts":' in entry.read_bytes():
            found.append(entry)
    return found


@pytest.fixture
def replay_only(monkeypatch):
    """After it is used, a check that is not replayed fails the test."""

    def forbidden(*args, **kwargs):
        raise AssertionError("checked again instead of replayed")

    return lambda: monkeypatch.setattr(project_check, "check_project", forbidden)


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    root = library(tmp_path / "project", 6)
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_replayed_check_prints_what_a_full_one_does(project: Path, replay_only, fmt: str) -> None:
    plain = run("--no-cache", "--format", fmt)
    assert plain[0] == 1 and "C804" in plain[1]
    assert run("--format", fmt) == plain  # checked, and kept
    assert len(records(project)) == 1
    replay_only()
    assert run("--format", fmt) == plain


def test_a_replay_gives_back_exactly_the_findings_of_a_full_check(project: Path, replay_only) -> None:
    expected = {args: run("--no-cache", *args) for args in [(), ("--quiet",), ("--strict",)]}
    run()
    replay_only()
    for args, plain in expected.items():
        assert run(*args) == plain


def test_other_files_asked_for_are_another_record(project: Path) -> None:
    whole = run()
    one = run("playbooks/broken.yaml")
    assert one != whole and one == run("--no-cache", "playbooks/broken.yaml")
    assert len(records(project)) == 2


def changes(root: Path) -> dict:
    """Each a change to the project that must make the next check look again."""
    return {
        "a file's bytes": lambda: (root / "playbooks" / "broken.yaml").write_text(BROKEN.replace("flow-99", "flow-98")),
        "a new playbook a call now finds": lambda: (root / "playbooks" / "flow-99.yaml").write_text(
            (root / "playbooks" / "flow-1.yaml").read_text().replace("name: flow-1", "name: flow-99")
        ),
        "a playbook removed": lambda: (root / "playbooks" / "flow-5.yaml").unlink(),
        "the settings": lambda: (root / "catalyst.toml").write_text('ignore = ["C804"]\n'),
    }


@pytest.mark.parametrize("change", list(changes(Path("."))))
def test_a_change_makes_the_check_look_again(project: Path, change: str) -> None:
    run()
    assert run() == run()  # replayed
    changes(project)[change]()
    after = run()
    assert after == run("--no-cache")
    assert after == run()  # and the new findings are replayed in turn


def test_a_slash_command_file_appearing_is_seen(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "slash"
    shutil.copytree(GOLDEN / "C635-slash-command-missing", root)
    monkeypatch.chdir(root)
    assert "C635" in run()[1] and "C635" in run()[1]
    (root / ".claude" / "commands" / "speckit.tasks.md").write_text("tasks\n")
    assert "C635" not in run()[1]


def test_a_program_installed_is_seen(tmp_path: Path, monkeypatch, node_but_no_pwsh: Path) -> None:
    root = tmp_path / "programs"
    shutil.copytree(GOLDEN / "C819-program-not-installed", root)
    monkeypatch.chdir(root)
    assert "C819" in run()[1] and "C819" in run()[1]
    pwsh = node_but_no_pwsh / "pwsh"
    pwsh.write_text("#!/bin/sh\n")
    pwsh.chmod(0o755)
    assert "C819" not in run()[1]


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "another key's seal", "empty"])
def test_a_damaged_or_foreign_record_is_ignored_and_replaced(project: Path, damage: str) -> None:
    plain = run("--no-cache")
    run()
    (record,) = records(project)
    raw = record.read_bytes()
    if damage == "flip a byte":
        at = raw.index(b'"diagnostics":') + 20
        raw = raw[:at] + bytes([raw[at] ^ 1]) + raw[at + 1 :]
    elif damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "another key's seal":
        raw = raw.replace(raw.split(b"\n")[1], b"0" * 64, 1)
    else:
        raw = b""
    record.write_bytes(raw)
    assert run() == plain
    assert records(project) and records(project)[0].read_bytes() != raw  # written again


def test_a_forged_record_cannot_hide_findings(project: Path) -> None:
    """Someone who can write the cache folder but not read the user's key cannot make a
    record that the checker takes: its seal does not check out, so the findings stay."""
    plain = run("--no-cache")
    run()
    (record,) = records(project)
    magic, seal, body = record.read_bytes().split(b"\n", 2)
    body = body.replace(b'"diagnostics":[', b'"diagnostics":[],"x":[', 1)
    record.write_bytes(magic + b"\n" + seal + b"\n" + body)
    assert run() == plain


def _unknown_code(finding: list) -> None:
    finding[0] = "C999"  # no code of the table: every format looks its name up


def _negative_position(finding: list) -> None:
    finding[3][1:] = [-5, -5, -5, -5]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
@pytest.mark.parametrize("spoil", [_unknown_code, _negative_position], ids=["unknown-code", "negative-position"])
def test_a_resealed_record_holding_what_a_check_never_finds_is_checked_again(project: Path, fmt: str, spoil) -> None:
    """Sealed with the user's key (someone who can read it can forge), a record still
    decodes only into findings a check can make: a code of the table, positions that are
    not negative. Anything else is checked again, never a traceback while printing it."""
    import json

    from catalyst_dsl.project.cache.keys import cache_key
    from catalyst_dsl.project.cache.store import MAGIC
    from tests.project.cache.test_check_cache import sealed_with

    plain = run("--no-cache", "--format", fmt)
    run()
    (record,) = records(project)
    body = json.loads(record.read_bytes().split(b"\n", 2)[2])
    spoil(body["diagnostics"][0])
    text = json.dumps(body).encode()
    record.write_bytes(MAGIC + sealed_with(cache_key(), text) + b"\n" + text)
    assert run("--format", fmt) == plain


@pytest.mark.skipif(not KAI_CORPUS.is_dir(), reason="the shared corpus is not beside this checkout")
def test_a_kai_project_is_replayed_until_its_index_or_commands_change(tmp_path: Path, monkeypatch, replay_only) -> None:
    root = tmp_path / "kai"
    (root / ".playbooks" / "playbooks").mkdir(parents=True)
    shutil.copy(KAI_CORPUS / "auto-validate.yaml", root / ".playbooks" / "playbooks")
    (root / ".playbooks" / "_index.yaml").write_text("playbooks: []\n")
    monkeypatch.chdir(root)
    plain = run("--no-cache")
    assert "C914" in plain[1] and "C635" not in plain[1]  # no commands folder: commands come from elsewhere
    assert run() == plain
    assert len(records(root)) == 1
    (root / ".playbooks" / "_index.yaml").write_text(INDEX)
    assert "C914" not in run()[1]
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "commands" / f"{COMMANDS[0]}.md").write_text("x\n")
    some = run()
    assert some == run("--no-cache") and "C635" in some[1]  # the project keeps commands now: the others are missing
    for name in COMMANDS:
        (root / ".claude" / "commands" / f"{name}.md").write_text("x\n")
    fresh = run()
    assert fresh == run("--no-cache") and "C635" not in fresh[1]
    replay_only()
    assert run() == fresh


@pytest.mark.skipif(not KAI_CORPUS.is_dir() or os.name != "posix", reason="the shared corpus and symbolic links")
def test_a_loop_of_links_among_kai_playbooks_is_checked_and_replayed(tmp_path: Path, monkeypatch) -> None:
    """kai's index check follows each playbook's links (observed.resolved), and so does a
    replay: a link that loops is a file that cannot be read (C001), not a traceback."""
    root = tmp_path / "kai"
    (root / ".playbooks" / "playbooks").mkdir(parents=True)
    shutil.copy(KAI_CORPUS / "auto-validate.yaml", root / ".playbooks" / "playbooks")
    (root / ".playbooks" / "_index.yaml").write_text(INDEX)
    (root / ".playbooks" / "playbooks" / "loop.yaml").symlink_to("loop.yaml")
    monkeypatch.chdir(root)
    plain = run("--no-cache")
    assert plain[0] == 1 and "C001" in plain[1]
    assert run() == plain
    assert run() == plain  # replayed: the loop is asked about again


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_recording_notes_each_kind_of_fact(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    with observed.recording() as facts:
        observed.is_file(tmp_path / "a")
        observed.which("no-such-program-here")
        observed.read_bytes(tmp_path / "a")
        observed.resolved(tmp_path / "link")
        observed.listdir(tmp_path)
        observed.listdir(tmp_path / "a")
    assert facts == {
        ("is-file", str(tmp_path / "a")): True,
        ("which", "no-such-program-here"): None,
        ("bytes", str(tmp_path / "a")): observed.digest(b"x"),
        ("resolved", str(tmp_path / "link")): str((tmp_path / "a").resolve()),
        ("listdir", str(tmp_path)): ["a", "link"],
        ("listdir", str(tmp_path / "a")): None,
    }
    for (kind, question), answer in facts.items():
        assert replay._holds(kind, question, answer, {})
    (tmp_path / "b").write_text("y")
    assert not replay._holds("listdir", str(tmp_path), ["a", "link"], {})
    observed.note("is-file", "outside any recording", True)  # noted nowhere, and no error


def test_an_unknown_fact_is_a_broken_record() -> None:
    with pytest.raises(CacheEntryError):
        replay._holds("the moon", "phase", "full", {})


def test_a_file_over_the_size_limit_is_never_replayed(project: Path, monkeypatch) -> None:
    """C015 names the file's size, which the bytes read (the limit and one more) do not fix."""
    monkeypatch.setattr(replay, "MAX_FILE_BYTES", 64)
    path = project / "playbooks" / "broken.yaml"
    assert not replay._holds("bytes", str(path), observed.digest(path.read_bytes()[:65]), {})
