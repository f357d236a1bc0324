"""`catalyst check --fix` and its kin, from the cases of tests/golden/fix/: each case is a
playbook checked alone in a project of its own with the options below; beside it,
CASE.fixed is the file after the fixes and CASE.out what the command printed
(`--update-golden` rewrites both)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli

HERE = Path(__file__).resolve().parents[1] / "golden" / "fix"
OPTIONS = {
    "typos.yaml": ["--fix"],
    "unsafe.yaml": ["--fix"],
    "unsafe-fixes.yaml": ["--unsafe-fixes"],
    "writes.yaml": ["--fix"],
    "refused.yaml": ["--fix"],
    "suppress.yaml": ["--suppress"],
    "markdown.md": ["--fix", "--suppress"],
    "front-matter.md": ["--fix", "--suppress"],
    "quoted.yaml": ["--fix"],
    "flow.yaml": ["--fix"],
    "cleo.cantbook": ["--fix"],
    "values.yaml": ["--suppress"],
    "script-comments.yaml": ["--fix"],
    "bom-front-matter.md": ["--suppress"],
    "scoped.yaml": ["--unsafe-fixes"],
    "dotted.yaml": ["--fix"],
    "converges.yaml": ["--fix"],
    "selected.yaml": ["--select", "C404", "--fix"],
    "unused-below.yaml": ["--fix"],
}


def project_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    (tmp_path / "playbooks").mkdir()
    shutil.copyfile(HERE / name, tmp_path / "playbooks" / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "playbooks" / name


def check(*args: str):
    return CliRunner().invoke(cli, ["check", "--no-cache", *args])


def test_every_case_has_its_options() -> None:
    cases = {p.name for p in HERE.iterdir() if p.suffix in (".yaml", ".md", ".cantbook")}
    assert cases == set(OPTIONS)


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_fix_case(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, update_golden: bool) -> None:
    playbook = project_with(tmp_path, monkeypatch, name)
    before = check("--format", "json").stdout
    result = check(*OPTIONS[name])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    fixed, out = playbook.read_text(encoding="utf-8"), result.stdout
    if update_golden:
        (HERE / f"{name}.fixed").write_text(fixed, encoding="utf-8", newline="\n")
        (HERE / f"{name}.out").write_text(out, encoding="utf-8", newline="\n")
    assert fixed == (HERE / f"{name}.fixed").read_text(encoding="utf-8")
    assert out == (HERE / f"{name}.out").read_text(encoding="utf-8")
    # No fix brings a finding that was not there before (a note may follow a fixed error;
    # a message that names a line names the line it moved to).
    import json
    import re

    def findings(text: str) -> list[tuple[str, str]]:
        return [
            (d["code"], re.sub(r"\bline \d+", "line N", d["message"]))
            for d in json.loads(text)["diagnostics"]
            if d["severity"] != "info"
        ]

    after = findings(check("--format", "json").stdout)
    assert all(f in findings(before) for f in after)
    # Fixing again changes nothing.
    again = check(*OPTIONS[name])
    assert playbook.read_text(encoding="utf-8") == fixed
    assert "Fixed 0 findings" in again.stdout


def test_diff_shows_the_fixes_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    playbook = project_with(tmp_path, monkeypatch, "typos.yaml")
    original = playbook.read_text(encoding="utf-8")
    result = check("--diff")
    assert playbook.read_text(encoding="utf-8") == original
    assert "-descripton: \"Typos the fixer corrects\"   # the comment stays\n" in result.stdout
    assert "+description: \"Typos the fixer corrects\"   # the comment stays\n" in result.stdout
    assert result.stdout.startswith("--- a/playbooks/typos.yaml\n+++ b/playbooks/typos.yaml\n")
    assert result.stdout.endswith("Would fix 3 findings (0 remaining).\n")
    # The files are as they were: the exit status is theirs.
    assert result.exit_code == 1


def test_suppress_with_diff_shows_only_the_comments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project_with(tmp_path, monkeypatch, "typos.yaml")
    result = check("--suppress", "--diff")
    assert "+descripton: \"Typos the fixer corrects\"   # the comment stays  # catalyst: ignore[C202]" in result.stdout
    assert "display" not in result.stdout


def test_line_ends_and_byte_order_mark_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "playbooks").mkdir()
    monkeypatch.chdir(tmp_path)
    playbook = tmp_path / "playbooks" / "crlf.yaml"
    playbook.write_bytes(b"\xef\xbb\xbfname: crlf\r\ndescription: d\r\nowner: me\r\nsteps:\r\n  - dispaly: x\r\n")
    check("--fix")
    assert playbook.read_bytes() == (
        b"\xef\xbb\xbfname: crlf\r\ndescription: d\r\nowner: me\r\nsteps:\r\n  - display: x\r\n"
    )


def test_the_check_after_fixing_is_the_check_of_the_file_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "playbooks").mkdir()
    monkeypatch.chdir(tmp_path)
    playbook = tmp_path / "playbooks" / "bom.yaml"
    playbook.write_bytes(b"\xef\xbb\xbfname: bom\r\ndescription: d\r\nowner: me\r\nsteps:\r\n  - dispaly: x\r\n")
    fixed = check("--fix", "--strict")
    # The byte-order mark is kept, and so is its warning (C003): --strict still fails.
    assert "C003" in fixed.stdout and fixed.exit_code == 1
    assert fixed.stdout.endswith("Fixed 1 finding (1 remaining).\n")
    assert check("--strict").stdout.endswith(fixed.stdout.split("\n", 1)[1].rsplit("\n", 2)[0] + "\n")


def test_a_file_with_mixed_line_ends_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "playbooks").mkdir()
    monkeypatch.chdir(tmp_path)
    playbook = tmp_path / "playbooks" / "mixed.yaml"
    data = b"name: mixed\r\ndescription: d\nowner: me\nsteps:\n  - dispaly: x\n"
    playbook.write_bytes(data)
    result = check("--fix")
    assert playbook.read_bytes() == data
    assert "not fixed playbooks/mixed.yaml: its line ends are mixed" in result.stdout


def test_json_output_stays_json_and_the_fixes_go_to_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    project_with(tmp_path, monkeypatch, "typos.yaml")
    result = check("--fix", "--format", "json")
    assert json.loads(result.stdout)["summary"]["error"] == 0
    assert "Fixed 3 findings (0 remaining)." in result.stderr


@pytest.mark.parametrize(
    ("word", "wanted", "safe"),
    [
        ("dispaly", "display", True),  # two neighbours swapped
        ("file-reed", "file-read", True),  # one letter changed
        ("descripton", "description", True),  # one letter dropped
        ("ownerr", "owner", True),  # one letter added
        ("Display", "display", True),  # only the case
        ("file-rd", "file-read", False),  # two letters dropped
        ("dsplay", "display", True),
        ("dsiplya", "display", False),
    ],
)
def test_a_did_you_mean_is_safe_one_slip_of_the_keys_away(word: str, wanted: str, safe: bool) -> None:
    from catalyst_dsl.cli.fixing import _one_typo_apart

    assert _one_typo_apart(word, wanted) is safe


def test_a_file_named_by_a_relative_path_is_fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    playbook = project_with(tmp_path, monkeypatch, "typos.yaml")
    result = check("--fix", "playbooks/typos.yaml")
    assert result.exit_code == 0, result.output
    assert playbook.read_text(encoding="utf-8") == (HERE / "typos.yaml.fixed").read_text(encoding="utf-8")


TYPO = b"name: NAME\ndescription: d\nowner: me\nsteps:\n  - dispaly: x\n"


def test_a_link_out_of_the_project_is_never_written_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project / "playbooks").mkdir(parents=True)
    (project / "catalyst.toml").write_text("")
    elsewhere.mkdir()
    (elsewhere / "outside.yaml").write_bytes(TYPO.replace(b"NAME", b"outside"))
    (project / "playbooks" / "outside.yaml").symlink_to(elsewhere / "outside.yaml")
    (project / "playbooks" / "inside.yaml").write_bytes(TYPO.replace(b"NAME", b"inside"))
    monkeypatch.chdir(project)
    # Named first, the link does not make the project the directory it leads to.
    result = check("--fix", "playbooks/outside.yaml", "playbooks/inside.yaml")
    assert (elsewhere / "outside.yaml").read_bytes() == TYPO.replace(b"NAME", b"outside")
    assert "not fixed playbooks/outside.yaml: it is a link to " in result.stdout
    assert "error[C001]" in result.stdout
    assert b"- display: x" in (project / "playbooks" / "inside.yaml").read_bytes()


def test_a_link_inside_the_project_is_fixed_in_its_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "catalyst.toml").write_text("")
    target = tmp_path / "shared" / "linked.yaml"
    target.write_bytes(TYPO.replace(b"NAME", b"linked"))
    target.chmod(0o640)
    (tmp_path / "playbooks" / "linked.yaml").symlink_to("../shared/linked.yaml")
    monkeypatch.chdir(tmp_path)
    assert check("--fix", "playbooks/linked.yaml").exit_code == 0
    assert (tmp_path / "playbooks" / "linked.yaml").is_symlink()
    assert target.read_bytes() == TYPO.replace(b"NAME", b"linked").replace(b"dispaly", b"display")
    assert target.stat().st_mode & 0o777 == 0o640


def test_a_file_that_cannot_be_written_is_named_and_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from catalyst_dsl.cli import fixing

    playbook = project_with(tmp_path, monkeypatch, "typos.yaml")
    original = playbook.read_bytes()
    real_access = os.access
    monkeypatch.setattr(fixing.os, "access", lambda p, mode: mode != os.W_OK and real_access(p, mode))
    result = check("--fix")
    assert playbook.read_bytes() == original
    assert "not fixed playbooks/typos.yaml: it cannot be written (no permission)" in result.stdout
    assert result.exit_code == 1 and "Traceback" not in result.output


def test_a_failed_write_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from catalyst_dsl.cli import fixing

    playbook = project_with(tmp_path, monkeypatch, "typos.yaml")
    original = playbook.read_bytes()

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fixing.os, "replace", full_disk)
    with pytest.raises(OSError):
        fixing.write(str(playbook), "name: typos\n")
    assert playbook.read_bytes() == original
    assert sorted(p.name for p in playbook.parent.iterdir()) == ["typos.yaml"]


def test_a_line_break_in_a_file_name_stays_in_the_diffs_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "playbooks").mkdir()
    monkeypatch.chdir(tmp_path)
    name = "x\n::error file=a::b.yaml"
    (tmp_path / "playbooks" / name).write_bytes(TYPO.replace(b"NAME", b"x"))
    result = check("--diff")
    assert result.stdout.startswith("--- a/playbooks/x\\x0a::error file=a::b.yaml\n+++ b/playbooks/x\\x0a::error")
    assert not any(line.startswith("::") for line in result.stdout.splitlines())


def test_fixes_of_one_title_on_different_lines_are_refused_apart() -> None:
    from catalyst_dsl.cli.fixing import Fix

    def writes(line: int, context: str) -> Fix:
        return Fix("p.yaml", 0, 0, "writes: []\n", "C817", line, 5, "safe", "added `writes: []`", context)

    assert writes(5, "- {bash: make}").key != writes(6, "- bash: ls").key
    # The same step, moved down by a fix above it, is the same fix.
    assert writes(5, "- bash: ls").key == writes(7, "- bash: ls").key


def test_a_file_saved_while_it_is_fixed_keeps_what_was_saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from catalyst_dsl.cli import fixing

    playbook = project_with(tmp_path, monkeypatch, "writes.yaml")
    before = playbook.read_text(encoding="utf-8")
    found = fixing.fix_project

    def saved_meanwhile(*args, **kwargs):
        outcome = found(*args, **kwargs)  # the fixes are worked out from the file as it was
        playbook.write_text(before + "# saved by the user\n", encoding="utf-8")
        return outcome

    monkeypatch.setattr(fixing, "fix_project", saved_meanwhile)
    result = check("--fix")

    assert result.exit_code == 1
    assert playbook.read_text(encoding="utf-8") == before + "# saved by the user\n"
    assert "error: playbooks/writes.yaml changed while it was being fixed: its fixes were not written" in result.output


@pytest.mark.parametrize("given", [["--format", "sarif"], ["--output-file", "report.txt"]])
def test_diff_makes_no_report_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: list[str]) -> None:
    project_with(tmp_path, monkeypatch, "writes.yaml")
    result = check("--diff", *given)
    assert result.exit_code == 2 and "--diff prints the fixes as a diff, and no report: leave out" in result.output
    assert not (tmp_path / "report.txt").exists()


def test_a_diff_cuts_lines_at_line_ends_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "u.yaml").write_text(
        'name: u\ndescription: "a\u2028b"\nowner: me\nsteps:\n  - bash: "make a"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    diff = check("--diff").stdout
    assert diff.startswith("--- a/playbooks/u.yaml\n+++ b/playbooks/u.yaml\n@@ -3,3 +3,4 @@\n owner: me\n")
    assert "No newline" not in diff
