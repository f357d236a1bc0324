"""`test` (real pytest runs in a throwaway project), `script` (real node) and `powershell`.

The actions are called as the interpreter calls them: `run(ctx, config)` with a context
whose gateway performs effects for real.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from catalyst_dsl.runtime.actions import script as script_actions
from catalyst_dsl.runtime.actions import testing
from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.gateway import EffectsGateway, RealPerformer
from catalyst_dsl.runtime.effects.grants import Grants
from catalyst_dsl.runtime.engine.scope import Scope

# Without the entry-point plugins of this environment (hypothesis alone takes most of a second).
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"


class Harness:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.gateway = EffectsGateway(root, root / ".scratch", (Grants.of("test", None),), RealPerformer())
        self.lines: list[tuple[str, str]] = []
        self.logs: list[tuple[str, str]] = []

    def ctx(
        self, action: str, *, timeout: float | None = None, writes: tuple[str, ...] = (), variables=None
    ) -> ActionContext:
        return ActionContext(
            "run-1",
            f"{action}@1",
            action,
            self.gateway,
            writes,
            timeout,
            lambda level, message, data: self.logs.append((level, message)),
            lambda stream, line: self.lines.append((stream, line)),
            lambda name: None,
            variables=variables,
        )

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def run(self, action, config: dict, **kw):
        return action(self.ctx(action.__name__, **kw), config)


@pytest.fixture
def project(tmp_path):
    harness = Harness(tmp_path / "project")
    harness.write(
        "tests/test_good.py",
        """\
        def test_adds():
            assert 1 + 1 == 2
        """,
    )
    harness.write(
        "tests/test_bad.py",
        """\
        def test_breaks():
            assert "spam" == "eggs"
        """,
    )
    return harness


def _coverage_json(percent: float) -> str:
    """A report as `coverage json` writes it (coverage.py 7)."""
    return json.dumps(
        {
            "meta": {
                "format": 3,
                "version": "7.6.1",
                "timestamp": "2026-01-01T00:00:00",
                "branch_coverage": False,
                "show_contexts": False,
            },
            "files": {
                "app.py": {
                    "executed_lines": [1, 2],
                    "summary": {
                        "covered_lines": 2,
                        "num_statements": 3,
                        "percent_covered": percent,
                        "percent_covered_display": f"{percent:.0f}",
                        "missing_lines": 1,
                        "excluded_lines": 0,
                    },
                    "missing_lines": [3],
                    "excluded_lines": [],
                }
            },
            "totals": {
                "covered_lines": 2,
                "num_statements": 3,
                "percent_covered": percent,
                "percent_covered_display": f"{percent:.0f}",
                "missing_lines": 1,
                "excluded_lines": 0,
            },
        }
    )


def _cobertura(rate: float) -> str:
    """A report as `coverage xml` writes it (Cobertura)."""
    return textwrap.dedent(f"""\
        <?xml version="1.0" ?>
        <!DOCTYPE coverage SYSTEM 'https://raw.githubusercontent.com/cobertura/web/master/htdocs/xml/coverage-04.dtd'>
        <coverage version="7.6.1" timestamp="1767225600000" lines-valid="4" lines-covered="3" line-rate="{rate}" \
branches-covered="0" branches-valid="0" branch-rate="0" complexity="0">
            <sources><source>/tmp/project</source></sources>
            <packages><package name="." line-rate="{rate}" branch-rate="0" complexity="0">\
<classes/></package></packages>
        </coverage>
        """)


# --- test ---------------------------------------------------------------------------------------------


def test_passing_tests_give_the_result_and_existing_reports(project):
    result = project.run(
        testing.test,
        {
            "command": f"{PYTEST} tests/test_good.py --junitxml=reports/junit.xml",
            "reports": ["reports/junit.xml", "reports/missing.xml"],
        },
    )
    assert result["exitCode"] == 0 and "1 passed" in result["stdout"]
    assert result["reports"] == ["reports/junit.xml"]
    assert result["coverage"] is None
    assert any("1 passed" in line for stream, line in project.lines if stream == "stdout")  # streamed to the log


def test_failing_tests_raise_tests_failed_with_the_result(project):
    with pytest.raises(StepError) as caught:
        project.run(testing.test, {"command": f"{PYTEST} tests", "reports": ["nothing.xml"]})
    error = caught.value
    assert error.code == "TestsFailed" and "exit code 1" in error.message and "1 failed, 1 passed" in error.message
    assert error.metadata["exitCode"] == 1 and "assert 'spam' == 'eggs'" in error.metadata["stdout"]
    assert error.metadata["reports"] == []


def test_coverage_json_above_the_threshold(project):
    project.write("fixtures/coverage.json", _coverage_json(83.33333))
    result = project.run(
        testing.test,
        {
            "command": f"{PYTEST} tests/test_good.py && cp fixtures/coverage.json coverage.json",
            "coverageReport": "coverage.json",
            "coverageThreshold": 80,
        },
    )
    assert result["coverage"] == 83.33 and result["exitCode"] == 0


def test_coverage_json_below_the_threshold(project):
    project.write("fixtures/coverage.json", _coverage_json(61.5))
    with pytest.raises(StepError) as caught:
        project.run(
            testing.test,
            {
                "command": f"{PYTEST} tests/test_good.py && cp fixtures/coverage.json coverage.json",
                "coverageReport": "coverage.json",
                "coverageThreshold": 75,
            },
        )
    error = caught.value
    assert error.code == "CoverageBelowThreshold"
    assert "61.5%" in error.message and "75%" in error.message
    assert error.metadata["coverage"] == 61.5 and error.metadata["threshold"] == 75 and error.metadata["exitCode"] == 0


def test_cobertura_xml_thresholds(project):
    project.write("fixtures/coverage.xml", _cobertura(0.75))
    command = f"{PYTEST} tests/test_good.py && cp fixtures/coverage.xml coverage.xml"
    result = project.run(testing.test, {"command": command, "coverageReport": "coverage.xml", "coverageThreshold": 70})
    assert result["coverage"] == 75.0
    with pytest.raises(StepError) as caught:
        project.run(testing.test, {"command": command, "coverageReport": "coverage.xml", "coverageThreshold": 90})
    assert (
        caught.value.code == "CoverageBelowThreshold"
        and "75%" in caught.value.message
        and "90%" in caught.value.message
    )


@pytest.mark.skipif(
    shutil.which("coverage") is None and not any((Path(p) / "coverage").is_dir() for p in sys.path if p),
    reason="coverage.py is not installed",
)
def test_real_coverage_report(project):
    project.write("app.py", "def add(a, b):\n    return a + b\n\ndef unused():\n    return 0\n")
    project.write("tests/test_app.py", "import app\n\ndef test_add():\n    assert app.add(1, 2) == 3\n")
    py = shlex.quote(sys.executable)
    command = (
        f"{py} -m coverage run --source=app -m pytest -q -p no:cacheprovider tests/test_app.py "
        f"&& {py} -m coverage json -o coverage.json"
    )
    result = project.run(
        testing.test,
        {"command": command, "coverageReport": "coverage.json", "coverageThreshold": 50, "env": {"PYTHONPATH": "."}},
    )
    assert 50 < result["coverage"] < 100


def test_missing_and_invalid_coverage_reports(project):
    with pytest.raises(StepError) as caught:
        project.run(testing.test, {"command": "true", "coverageReport": "coverage.json", "coverageThreshold": 50})
    assert caught.value.code == "CoverageReportMissing"
    project.write("coverage.json", '{"totals": {}}')
    with pytest.raises(StepError) as caught:
        project.run(testing.test, {"command": "true", "coverageReport": "coverage.json", "coverageThreshold": 50})
    assert caught.value.code == "InvalidCoverageReport" and "percent_covered" in caught.value.message
    project.write("coverage.xml", "<report line-rate='0.9'/>")
    with pytest.raises(StepError) as caught:
        project.run(testing.test, {"command": "true", "coverageReport": "coverage.xml", "coverageThreshold": 50})
    assert caught.value.code == "InvalidCoverageReport" and "<report>" in caught.value.message
    # Without a threshold a missing report is only a warning.
    result = project.run(testing.test, {"command": "true", "coverageReport": "absent.json"})
    assert result["coverage"] is None and project.logs[-1][0] == "warning"


def test_threshold_needs_a_report(project):
    with pytest.raises(StepError) as caught:
        project.run(testing.test, {"command": "true", "coverageThreshold": 50})
    assert caught.value.code == "InvalidConfig"


def test_env_and_cwd(project):
    (project.root / "sub").mkdir()
    result = project.run(
        testing.test, {"command": 'echo "$GREETING from $(basename "$PWD")"', "cwd": "sub", "env": {"GREETING": "hi"}}
    )
    assert result["stdout"] == "hi from sub\n"


def test_pipefail_makes_a_failing_pipeline_fail(project):
    with pytest.raises(StepError) as caught:
        project.run(testing.test, {"command": "false | cat"})
    assert caught.value.code == "TestsFailed"


def test_declared_writes_are_checked_before_the_run(project):
    with pytest.raises(StepError) as caught:
        project.run(testing.test, {"command": "touch ran"}, writes=("../outside/*",))
    assert caught.value.code == "PermissionDenied"
    assert not (project.root / "ran").exists()


def test_timeout_stops_the_tests(project):
    with pytest.raises(StepError) as caught:
        project.run(testing.test, {"command": "sleep 10"}, timeout=0.3)
    assert caught.value.code == "StepTimeout"


# --- script ---------------------------------------------------------------------------------------------

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@needs_node
def test_script_get_set_and_return(project):
    variables = {"inputs": {"name": "Ann"}, "name": "Ann", "build": {"files": ["a.py", "b.py"], "ok": True}}
    result = project.run(
        script_actions.script,
        {
            "code": textwrap.dedent("""\
        const files = get('build.files');
        console.log('checking', files.length, 'files');
        set('count', get('build.files.length'));
        set('summary', {who: get('inputs.name'), first: get('build.files.0'), \
missing: get('build.nope') === undefined});
        await new Promise((resolve) => setTimeout(resolve, 10));
        return {count: get('count'), ok: get('build.ok')};
        """)
        },
        variables=variables,
    )
    assert result == {
        "result": {"count": 2, "ok": True},
        "set": {"count": 2, "summary": {"who": "Ann", "first": "a.py", "missing": True}},
    }
    assert project.lines == [("stdout", "checking 2 files")]  # the outcome line is not shown


@needs_node
def test_script_without_return_gives_null_and_require_works(project):
    project.write("lib.js", "module.exports = {twice: (x) => x * 2};")
    assert project.run(script_actions.script, {"code": "set('x', require('./lib').twice(21))"}) == {
        "result": None,
        "set": {"x": 42},
    }
    assert project.run(script_actions.script, {"code": "return 'text'"}) == {"result": "text", "set": {}}


@needs_node
def test_script_output_without_a_final_newline_is_kept(project):
    project.run(script_actions.script, {"code": "process.stdout.write('no newline'); return 1"})
    assert project.lines == [("stdout", "no newline")]


@needs_node
def test_script_syntax_error(project):
    with pytest.raises(StepError) as caught:
        project.run(script_actions.script, {"code": "const x = ;"})
    assert caught.value.code == "ScriptError" and "SyntaxError" in caught.value.message
    assert "script.js:1" in caught.value.message


@needs_node
def test_script_exception_names_the_line_and_keeps_no_set(project):
    with pytest.raises(StepError) as caught:
        project.run(script_actions.script, {"code": "set('a', 1);\n\nthrow new RangeError('too far');"})
    error = caught.value
    assert error.code == "ScriptError" and "script.js:3" in error.message and "RangeError: too far" in error.message
    assert error.metadata["set"] == {"a": 1} and error.metadata["error"]["name"] == "RangeError"


@needs_node
def test_script_values_must_be_json(project):
    with pytest.raises(StepError, match="cannot be turned into JSON"):
        project.run(script_actions.script, {"code": "return 10n"})
    with pytest.raises(StepError, match="without dots"):
        project.run(script_actions.script, {"code": "set('a.b', 1)"})


@needs_node
def test_script_that_exits_early_fails(project):
    with pytest.raises(StepError) as caught:
        project.run(script_actions.script, {"code": "set('a', 1); process.exit(0)"})
    assert caught.value.code == "ScriptError" and "process.exit" in caught.value.message


@needs_node
def test_script_timeout(project):
    with pytest.raises(StepError) as caught:
        project.run(script_actions.script, {"code": "while (true) {}"}, timeout=0.5)
    assert caught.value.code == "StepTimeout"


@needs_node
def test_script_cannot_forge_its_outcome(project):
    result = project.run(
        script_actions.script,
        {"code": 'console.log(\'\\x1e__catalyst_script_0__ {"ok": true, "result": "forged"}\'); return "real"'},
    )
    assert result["result"] == "real"


def test_script_without_node(project, monkeypatch, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(StepError) as caught:
        project.run(script_actions.script, {"code": "return 1"})
    assert caught.value.code == "ActionUnavailable" and "node" in caught.value.message


def test_visible_variables_and_apply_set():
    outer = Scope(values={"a": 1, "shared": "outer"})
    inner = Scope(outer, {"shared": "inner", "b": 2})
    visible = script_actions.visible_variables(inner, {"who": "Ann", "a": "input"})
    assert visible == {"inputs": {"who": "Ann", "a": "input"}, "who": "Ann", "a": 1, "shared": "inner", "b": 2}
    script_actions.apply_set(inner.assign, {"result": None, "set": {"a": 10, "new": [1]}})
    assert outer.values["a"] == 10 and inner.values["new"] == [1] and "new" not in outer.values
    script_actions.apply_set(inner.assign, None)  # a failed step's result: nothing to apply


# --- powershell ---------------------------------------------------------------------------------------------


def test_powershell_without_pwsh(project, monkeypatch, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(StepError) as caught:
        project.run(script_actions.powershell, {"script": "Write-Output 'hi'"})
    assert caught.value.code == "ActionUnavailable" and "pwsh" in caught.value.message


def test_powershell_runs_the_script_file_with_pwsh(project, monkeypatch, tmp_path):
    # A stand-in pwsh that prints its arguments and the script file it was given.
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    fake = bin_dir / "pwsh"
    fake.write_text('#!/bin/bash\necho "args: ${*:1:$#-1}"\ncat "${@: -1}"\n', encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    result = project.run(script_actions.powershell, {"script": "Write-Output 'hi'"})
    assert result["exitCode"] == 0
    lines = result["stdout"].splitlines()
    assert lines[0] == "args: -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -File"
    assert "$ErrorActionPreference = 'Stop'" in lines[1] and lines[2] == "Write-Output 'hi'"
    assert list((project.root / ".scratch" / "powershell").iterdir()) == []  # the script file is gone
