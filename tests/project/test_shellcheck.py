"""Running ShellCheck for a check (project/shellcheck.py): its comments kept in the check
cache under names that cover its version, and a replayed check that asks the version again."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.project import shellcheck as runner
from catalyst_dsl.project.cache.store import CheckCache

pytestmark = pytest.mark.skipif(runner.version_of(runner.find_program()) is None, reason="ShellCheck is not installed")

PLAYBOOK = "name: demo\ndescription: d\nowner: Engineer\nsteps:\n  - bash: echo $name\n    writes: []\n"
OTHER = PLAYBOOK.replace("demo", "other").replace("$name", "$other_name")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    (root / "playbooks" / "demo.yaml").write_text(PLAYBOOK, encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.setattr(runner, "_asked", {})  # what this process asked before: not this test's
    return root


def check() -> str:
    return CliRunner().invoke(cli, ["check"], catch_exceptions=False).output


def counting(monkeypatch: pytest.MonkeyPatch) -> list:
    runs: list = []
    real = runner._check
    monkeypatch.setattr(runner, "_check", lambda *args: runs.append(args) or real(*args))
    return runs


def test_comments_are_read_from_the_cache_while_the_script_and_version_are_the_same(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = counting(monkeypatch)
    first = check()
    assert "SC2154" in first and len(runs) == 1
    # Another file changed: the check runs again, ShellCheck's comments come from the cache.
    (project / "playbooks" / "other.yaml").write_text(OTHER, encoding="utf-8")
    monkeypatch.setattr(runner, "_asked", {})
    assert check().count("warning[C641]") == 2
    assert len(runs) == 2 and len(runs[1][2]) == 1  # only the new file's script was asked
    # Another version of ShellCheck: every script is asked again.
    monkeypatch.setattr(runner, "_asked", {})
    monkeypatch.setattr(runner, "version_of", lambda program: "99.0.0")
    (project / "playbooks" / "other.yaml").write_text(OTHER + "# x\n", encoding="utf-8")
    assert check().count("warning[C641]") == 2
    assert len(runs) == 3 and len(runs[2][2]) == 2


def test_a_replayed_check_is_checked_again_when_shellcheck_changes(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = counting(monkeypatch)
    assert "SC2154" in check()
    assert "SC2154" in check() and len(runs) == 1  # replayed: nothing ran
    monkeypatch.setattr(runner, "version_of", lambda program: "99.0.0")
    monkeypatch.setattr(runner, "_asked", {})
    assert "SC2154" in check() and len(runs) == 2  # the version is a fact of the check


def test_an_entry_not_written_by_the_runner_is_not_trusted(tmp_path: Path) -> None:
    cache = CheckCache(tmp_path / "cache", b"k" * 32)
    name = runner._entry_name(cache, "0.11.0", "bash", "echo $x")
    cache.write_sealed(name, b'[{"level": "error"}]')
    assert runner._read_entry(cache, name) is None
    runner._write_entry(cache, name, [])
    assert runner._read_entry(cache, name) == []


def test_shellcheck_opts_in_the_environment_change_nothing(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLCHECK_OPTS", "--exclude=SC2154")
    assert "SC2154" in check()


def test_a_finding_is_placed_alike_when_the_files_result_comes_from_the_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A template's map back into the file is not kept in the cache: it is made again.
    steps = "  - bash: |\n      echo {{ inputs.x }}\n      echo $name\n    writes: []\ninputs:\n  - string: x\n"
    (project / "playbooks" / "demo.yaml").write_text(PLAYBOOK.split("  - bash")[0] + steps, encoding="utf-8")
    first = check()
    assert "demo.yaml:7:12" in first
    (project / "playbooks" / "other.yaml").write_text(OTHER, encoding="utf-8")  # not a replay
    assert "demo.yaml:7:12" in check()


def test_each_distinct_script_is_asked_once_and_batches_keep_their_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "_asked", {})
    asked: list[str] = []
    check = runner._check

    def counting(program, shell, texts):
        asked.extend(texts)
        return check(program, shell, texts)

    monkeypatch.setattr(runner, "_check", counting)
    # Over two batches: unset names ($v0, $v2, …: SC2154) between clean scripts, each twice.
    texts = [f"echo $v{i}" if i % 2 == 0 else f'echo "line {i}"' for i in range(runner.BATCH + 50)]
    output = runner.run([("bash", text) for text in texts + texts])
    assert output.problem == "" and sorted(asked) == sorted(texts)
    for i, comments in enumerate(output.comments):
        codes = {c["code"] for c in comments}
        assert (2154 in codes) == (i % len(texts) % 2 == 0), (i, texts[i % len(texts)], codes)
