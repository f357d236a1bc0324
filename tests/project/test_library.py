"""Library behaviour that golden projects cannot show: files outside the project."""

from __future__ import annotations

from pathlib import Path

from catalyst_dsl.compiler import discover
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.project.check import check_project
from catalyst_dsl.project.config import load_project

PLAYBOOK = "name: {name}\ndescription: d\nowner: Engineer\nsteps:\n  - {step}\n"


def test_a_call_never_reaches_a_file_outside_the_project(tmp_path: Path) -> None:
    (tmp_path / "outside.yaml").write_text(PLAYBOOK.format(name="outside", step='display: "secret"'))
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    (root / "playbooks" / "caller.yaml").write_text(PLAYBOOK.format(name="caller", step="playbook: ../../outside.yaml"))
    result = check_project(load_project(root, DiagnosticSink()), discover([str(root / "playbooks")]))
    assert [d.code for d in result.diagnostics] == ["C804"]
    assert str(tmp_path / "outside.yaml") not in result.library.loaded()


def test_a_write_to_a_protocol_path_that_leaves_its_base_is_reported_once(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    (root / "playbooks" / "escape.yaml").write_text(PLAYBOOK.format(name="escape", step="file-write: xe://../x.md"))
    result = check_project(load_project(root, DiagnosticSink()), discover([str(root / "playbooks")]))
    assert [d.code for d in result.diagnostics if d.severity.value == "error"] == ["C106"]


def test_a_write_to_a_templated_protocol_path_that_climbs_is_still_reported(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    step = 'file-write: "xe://../{{inputs.where}}"\n    content: x'
    text = PLAYBOOK.format(name="escape", step=step).replace(
        "steps:", "inputs:\n  - string: where\n    default: x.md\nsteps:"
    )
    (root / "playbooks" / "escape.yaml").write_text(text)
    result = check_project(load_project(root, DiagnosticSink()), discover([str(root / "playbooks")]))
    assert "C812" in [d.code for d in result.diagnostics]


def test_without_a_project_marker_the_working_directory_is_the_root(tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner

    from catalyst_dsl.cli.main import cli
    from catalyst_dsl.project.config import find_root

    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "a.yaml").write_text(
        "name: a\ndescription: d\nowner: Engineer\nsteps:\n  - playbook: b\n"
    )
    (tmp_path / "playbooks" / "b.yaml").write_text(
        "name: b\ndescription: d\nowner: Engineer\nsteps:\n  - display: hi\n"
    )
    monkeypatch.chdir(tmp_path)
    assert find_root(tmp_path / "playbooks" / "a.yaml", tmp_path) == (tmp_path.resolve(), None)
    # The file named, or the whole project: the same library, the same verdict.
    for args in (["check", "playbooks/a.yaml"], ["check"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
    # Outside the working directory, the file's own folder is the root.
    assert find_root(tmp_path / "playbooks" / "a.yaml", tmp_path / "elsewhere") == (
        (tmp_path / "playbooks").resolve(),
        None,
    )


def test_a_pyproject_without_settings_still_marks_the_root(tmp_path) -> None:
    from catalyst_dsl.project.config import find_root

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "sub").mkdir()
    assert find_root(tmp_path / "sub", tmp_path / "sub") == (tmp_path.resolve(), None)


GREET = """\
name: greet
description: d
owner: Engineer
inputs:
  - name: who
    type: string
    required: true
steps:
  - display: "hello {{ inputs.who }}"
"""


def test_a_check_of_one_file_finds_the_calls_into_it_that_it_breaks(tmp_path: Path) -> None:
    """`catalyst check` of a changed playbook (a pre-commit hook's) reports the callers that
    still pass an input it no longer has; a run's pre-flight, which checks one playbook for
    itself, does not."""
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    (root / "playbooks" / "greet.yaml").write_text(GREET)
    caller = 'playbook: greet\n    inputs:\n      person: world\n  - display: "bye"'
    (root / "playbooks" / "welcome.yaml").write_text(PLAYBOOK.format(name="welcome", step=caller))
    project = load_project(root, DiagnosticSink())
    changed = [str(root / "playbooks" / "greet.yaml")]
    found = check_project(project, changed, callers=True).diagnostics
    assert [(d.code, Path(d.span.file).name, d.span.line) for d in found] == [
        ("C805", "welcome.yaml", 5),
        ("C806", "welcome.yaml", 7),
    ]
    assert check_project(project, changed).diagnostics == []
    # Checked together, the caller's findings come once, from its own check.
    both = [*changed, str(root / "playbooks" / "welcome.yaml")]
    assert [d.code for d in check_project(project, both, callers=True).diagnostics] == ["C805", "C806"]


def test_a_callers_comments_silence_its_call_findings(tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner

    from catalyst_dsl.cli.main import cli

    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    (root / "playbooks" / "greet.yaml").write_text(GREET)
    caller = (
        "playbook: greet # catalyst: ignore[C805]\n    inputs:\n      person: world # catalyst: ignore[C806]\n"
        "  - display: bye # catalyst: ignore[C404]"
    )
    (root / "playbooks" / "welcome.yaml").write_text(PLAYBOOK.format(name="welcome", step=caller))
    monkeypatch.chdir(root)
    done = CliRunner().invoke(cli, ["check", "--no-cache", "playbooks/greet.yaml"], catch_exceptions=False)
    # The unused C404 suppression is the caller's own, reported when welcome.yaml is checked.
    assert done.exit_code == 0 and done.output == "checked 1 file(s): 0 error(s), 0 warning(s)\n"
    done = CliRunner().invoke(cli, ["check", "--no-cache", "playbooks/welcome.yaml"], catch_exceptions=False)
    assert "warning[C040]" in done.output


def test_a_named_pipe_among_the_playbooks_is_c001_and_never_opened(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    (root / "playbooks" / "fine.yaml").write_text(PLAYBOOK.format(name="fine", step='display: "hi"'))
    os.mkfifo(root / "playbooks" / "trap.yaml")  # committed by a hostile repository: no writer ever comes
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    # In a process of its own: opening the pipe would block the check forever.
    done = subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "check"], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "playbooks/trap.yaml:1:1" in done.stdout
    assert "cannot read the file: it is not a regular file (a named pipe" in done.stdout
    assert "checked 2 file(s): 1 error(s)" in done.stdout


def test_a_call_through_a_linked_folder_is_read_only_where_the_folder_really_is(tmp_path: Path) -> None:
    import os

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(PLAYBOOK.format(name="secret", step='display: "secret"'))
    root = tmp_path / "project"
    (root / "playbooks" / "real").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    (root / "playbooks" / "real" / "inner.yaml").write_text(PLAYBOOK.format(name="inner", step='display: "hi"'))
    # The files are no links; their folders are: one leads out of the project, one stays in it.
    os.symlink(outside, root / "playbooks" / "away")
    os.symlink(root / "playbooks" / "real", root / "playbooks" / "here")
    (root / "playbooks" / "caller.yaml").write_text(
        "name: caller\ndescription: d\nowner: Engineer\nsteps:\n"
        "  - playbook: away/secret.yaml\n  - playbook: here/inner.yaml\n"
    )
    result = check_project(load_project(root, DiagnosticSink()), [str(root / "playbooks" / "caller.yaml")])
    loaded = result.library.loaded()
    away, here = str(root / "playbooks" / "away" / "secret.yaml"), str(root / "playbooks" / "here" / "inner.yaml")
    assert loaded[away].playbook is None
    assert "a link that leads outside the project" in loaded[away].diagnostics[0].message
    assert loaded[here].playbook is not None and loaded[here].playbook.name == "inner"


def test_a_name_too_long_for_the_file_system_still_finds_its_project(tmp_path: Path) -> None:
    # An editor's unsaved buffer may bear any name: the tests of the name answer "no file".
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    for name in ("a" * 300 + ".yaml", "b" * 300 + "/c.yaml"):
        assert load_project(root / "playbooks" / name, DiagnosticSink()).root == root
