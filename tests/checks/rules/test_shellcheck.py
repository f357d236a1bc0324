"""ShellCheck on bash scripts (C640-C643, C648), with the real ShellCheck: each finding at
its line and column in the playbook, whatever the scalar's style, values given by
reference, the settings' level, suppressions by our code or ShellCheck's."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.project import shellcheck as runner
from catalyst_dsl.project.check import check_project
from catalyst_dsl.project.config import load_project
from catalyst_dsl.project.rules import reported

pytestmark = pytest.mark.skipif(runner.version_of(runner.find_program()) is None, reason="ShellCheck is not installed")

HEAD = "name: demo\ndescription: d\nowner: Engineer\nsteps:\n"


def check(tmp_path: Path, steps: str, settings: str = "", name: str = "demo.yaml") -> list[tuple[int, int, str, str]]:
    """(line, column, code, SC code) of each ShellCheck finding `catalyst check` reports."""
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True, exist_ok=True)
    (root / "catalyst.toml").write_text(settings, encoding="utf-8")
    path = root / "playbooks" / name
    path.write_text(HEAD + steps if name.endswith(".yaml") else steps, encoding="utf-8")
    project = load_project(root, DiagnosticSink())
    result = check_project(project, [str(path)])
    shown = reported(result.diagnostics, result.sources.values(), project.config)
    return [
        (d.span.line, d.span.col, d.code, d.message.split(":", 1)[0] if d.code != "C648" else "")
        for d in shown
        if d.code.startswith("C64")
    ]


def test_the_issues_example_is_no_longer_clean(tmp_path: Path) -> None:
    found = check(tmp_path, "  - bash: if [ $x = 1 ] then echo; fi\n    writes: []\n")
    assert found == [(5, 16, "C641", "SC2154"), (5, 25, "C641", "SC1010")]


# (the step as written, where SC1010's `then` is: line, column). Line 5 is the step's first.
STYLES = {
    "plain": ("  - bash: if true then echo; fi\n", (5, 19)),
    "plain over lines": ("  - bash: if true\n      then echo; fi\n", None),
    "single-quoted": ("  - bash: 'echo ''a''; if true then echo; fi'\n", (5, 32)),
    "double-quoted with escapes": ('  - bash: "echo \\"a\\"\\tb; if true then echo; fi"\n', (5, 35)),
    "double-quoted over lines": ('  - bash: "echo a;\n      if true then echo; fi"\n', (6, 15)),
    "literal block": ("  - bash: |\n      echo a\n      if true then\n        echo\n      fi\n", (7, 15)),
    "literal block, kept and indented": ("  - bash: |2+\n        echo a\n        if true then echo; fi\n", (7, 17)),
    "folded block": ("  - bash: >\n      echo a;\n      if true then echo; fi\n", (7, 15)),
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_a_finding_is_placed_where_it_is_written_in_every_scalar_style(tmp_path: Path, style: str) -> None:
    step, where = STYLES[style]
    found = [f for f in check(tmp_path, step + "    writes: []\n") if f[3] == "SC1010"]
    if where is None:  # a plain scalar over lines is folded: `if true then` is one line to bash
        assert len(found) == 1 and found[0][0] == 6
        return
    assert found == [(*where, "C641", "SC1010")]


def test_values_reach_shellcheck_as_bash_gets_them_quoted_by_reference(tmp_path: Path) -> None:
    # A run gives `{{ }}` to bash as "${CATALYST_V_n}": no SC2086 for the values, and the
    # author's own unquoted $name is still found, after them on the same line.
    steps = (
        "  - bash: |\n"
        "      echo {{ inputs.who }} '{{ inputs.who }}' && cp {{ inputs.who }} $name\n"
        "    writes: []\n"
        "inputs:\n  - string: who\n"
    )
    found = check(tmp_path, steps, 'shellcheck = "info"\n')
    assert found == [(6, 71, "C641", "SC2154"), (6, 71, "C642", "SC2086")]


def test_a_variable_the_steps_env_gives_is_assigned(tmp_path: Path) -> None:
    steps = '  - bash: echo "$target" "$other"\n    env:\n      target: "{{ inputs.t }}"\n    writes: []\n'
    steps += "inputs:\n  - string: t\n"
    assert check(tmp_path, steps) == [(5, 27, "C641", "SC2154")]


def test_the_setting_chooses_the_least_level_reported(tmp_path: Path) -> None:
    step = '  - bash: |\n      echo $(( $N + 1 )) $HOME\n      for f in $@; do echo "$f"; done\n    writes: []\n'
    levels = {
        "error": ["C640"],
        "warning": ["C640"],
        "info": ["C642", "C640"],
        "style": ["C643", "C642", "C640"],
        "off": [],
    }
    for level, codes in levels.items():
        assert [f[2] for f in check(tmp_path, step, f'shellcheck = "{level}"\n')] == codes, level


def test_findings_are_silenced_by_our_code_by_shellchecks_and_by_shellcheck_itself(tmp_path: Path) -> None:
    steps = (
        "  - bash: if [ $x = 1 ] then echo; fi  # catalyst: ignore[SC2154, C641]\n"
        "    writes: []\n"
        "  - bash: |\n"
        "      echo start\n"
        "      # shellcheck disable=SC2068\n"
        '      for f in $@; do echo "$f"; done\n'
        "      # catalyst: ignore[SC2068]\n"
        '      for f in $@; do echo "$f"; done\n'
        '      for f in $@; do echo "$f"; done\n'
        "    writes: []\n"
    )
    assert check(tmp_path, steps) == [(13, 16, "C640", "SC2068")]


def test_an_sc_suppression_that_silences_nothing_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "project"
    check(tmp_path, "  - bash: echo hi  # catalyst: ignore[SC2086]\n    writes: []\n")
    project = load_project(root, DiagnosticSink())
    result = check_project(project, [str(root / "playbooks" / "demo.yaml")])
    shown = reported(result.diagnostics, result.sources.values(), project.config)
    assert [(d.code, d.message) for d in shown] == [
        ("C040", "the suppression of SC2086 silences nothing: no SC2086 on line 5")
    ]


def test_a_markdown_playbooks_steps_are_placed_in_its_front_matter(tmp_path: Path) -> None:
    text = "---\nsteps:\n  - bash: |\n      if true then echo; fi\n    writes: []\n---\n# Demo\n\nSay hello.\n"
    found = check(tmp_path, text, name="demo.md")
    assert [f for f in found if f[3] == "SC1010"] == [(4, 15, "C641", "SC1010")]


def test_without_shellcheck_the_check_says_so_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATALYST_SHELLCHECK", "no-shellcheck-here")
    steps = "  - bash: if true then echo; fi\n    writes: []\n  - bash: echo $y\n    writes: []\n"
    assert check(tmp_path, steps) == [(5, 5, "C648", "")]


@pytest.mark.parametrize("without", ["missing", "off"])
def test_without_shellcheck_its_suppressions_are_not_called_unused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, without: str
) -> None:
    # ShellCheck did not look: whether the comments silence something is not known.
    settings = 'shellcheck = "off"\n' if without == "off" else ""
    if without == "missing":
        monkeypatch.setenv("CATALYST_SHELLCHECK", "no-shellcheck-here")
    root = tmp_path / "project"
    steps = (
        "  - bash: if true then echo; fi  # catalyst: ignore[SC1010]\n    writes: []\n"
        "  - bash: echo $y  # catalyst: ignore[C641, C404]\n    writes: []\n"
    )
    check(tmp_path, steps, settings)
    project = load_project(root, DiagnosticSink())
    result = check_project(project, [str(root / "playbooks" / "demo.yaml")])
    shown = reported(result.diagnostics, result.sources.values(), project.config)
    # The others still are.
    assert [(d.code, d.message) for d in shown if d.code != "C648"] == [
        ("C040", "the suppression of C404 silences nothing: no C404 on line 7")
    ]


def test_one_shellcheck_process_checks_every_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = []
    real = runner._check
    monkeypatch.setattr(runner, "_check", lambda *args: runs.append(args) or real(*args))
    monkeypatch.setattr(runner, "_asked", {})
    steps = "".join(f"  - bash: echo {i} $y{i}\n    writes: []\n" for i in range(5))
    assert len(check(tmp_path, steps)) == 5
    assert len(runs) == 1 and len(runs[0][2]) == 5


def test_explain_shows_a_real_shellcheck_finding() -> None:
    from click.testing import CliRunner

    from catalyst_dsl.cli.main import cli

    shown = CliRunner().invoke(cli, ["explain", "C640"]).output
    assert shown.startswith("C640 shellcheck-error (error)\n")
    assert "error[C640]: SC2068: Double quote array expansions" in shown


def test_a_runs_own_check_is_not_stopped_by_shellchecks_errors(tmp_path: Path) -> None:
    # `catalyst check` reports SC2068 as an error (C640); the run's pre-flight leaves
    # ShellCheck's advice out, so the run goes on.
    from catalyst_dsl.runtime.lifecycle.preflight import checked

    step = '  - bash: for f in $@; do echo "$f"; done\n    writes: []\n'
    assert [f[2] for f in check(tmp_path, step)] == ["C640"]
    root = tmp_path / "project"
    result = checked(load_project(root, DiagnosticSink()), str(root / "playbooks" / "demo.yaml"))
    assert not any(d.code.startswith("C64") for d in result.diagnostics)


def test_a_script_shellcheck_fails_on_leaves_the_others_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As when one deeply nested script takes all of ShellCheck's memory: it fails on the
    # whole batch. The others' findings were lost with it.
    real = runner.find_program()
    fake = tmp_path / "shellcheck"
    fake.write_text(
        "#!/bin/sh\n"
        'for f in "$@"; do case "$f" in *.sh) if grep -q HUGE "$f"; then '
        'echo "shellcheck: out of memory" >&2; exit 251; fi;; esac; done\n'
        f'exec "{real}" "$@"\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    monkeypatch.setenv("CATALYST_SHELLCHECK", str(fake))
    monkeypatch.setattr(runner, "_asked", {})
    steps = (
        "  - bash: if true then echo; fi\n    writes: []\n"
        "  - bash: echo HUGE\n    writes: []\n"
        "  - bash: echo $y\n    writes: []\n"
    )
    found = check(tmp_path, steps)
    assert (7, 5, "C648", "") in found
    assert {f[0] for f in found if f[2] != "C648"} == {5, 9}  # the first script's findings and the last's


def test_a_shellcheck_that_fails_on_everything_is_started_once_a_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its failure is the program's: halving the batch down to each script would start it
    # again for every script, on every check.
    fake = tmp_path / "shellcheck"
    fake.write_text('#!/bin/sh\ncase "$1" in --version) echo "version: 0.0.1"; exit 0;; esac\nexit 4\n')
    fake.chmod(0o755)
    monkeypatch.setenv("CATALYST_SHELLCHECK", str(fake))
    monkeypatch.setattr(runner, "_asked", {})
    monkeypatch.setattr(runner, "_ANSWERING", {})
    runs = []
    real = runner._check
    monkeypatch.setattr(runner, "_check", lambda *args: runs.append(len(args[2])) or real(*args))
    steps = "".join(f"  - bash: echo {i}\n    writes: []\n" for i in range(8))
    assert check(tmp_path, steps) == [(5, 5, "C648", "")]
    assert runs == [8, 1]  # the batch, then one script of one word that tells the program fails
