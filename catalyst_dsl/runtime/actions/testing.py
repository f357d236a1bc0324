"""`test`: the project's test command, its reports and its coverage threshold.

The command is a shell command line, run with `bash -o pipefail -c` through the gateway
(the step's `writes:` checked first), in `cwd` with `env` added, output streamed to the
log. Paths (`reports`, `coverageReport`) are project paths, as everywhere in a playbook.

Result: `{exitCode, stdout, stderr, reports, coverage}`, where `reports` lists the
report paths that exist after the run and `coverage` is the line coverage in percent
(rounded to two decimals) read from `coverageReport`, or null.

Failures: a non-zero exit is `TestsFailed` (the result as metadata, so an error policy
of Continue still sees it); coverage under `coverageThreshold` is
`CoverageBelowThreshold`; a missing or unreadable coverage report when a threshold
is set is `CoverageReportMissing` / `InvalidCoverageReport`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.actions.failure_line import failure_line
from catalyst_dsl.runtime.actions.process import scratch_paths
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.jsvalues import as_written

#: Coverage reports larger than this are refused (JSON reports are read whole).
MAX_REPORT_BYTES = 64 * 1024 * 1024


def test(ctx: ActionContext, config: dict) -> dict:
    command = config.get("command")
    if not isinstance(command, str) or not command.strip():
        raise StepError("InvalidConfig", "`test` needs the test command line in `command`")
    threshold = _threshold(config)
    shell = shutil.which("bash")
    if shell is None:
        raise StepError(
            "ActionUnavailable",
            "bash is not installed on this machine; `test` runs its command with bash",
            guidance="install bash",
        )
    env = {str(key): str(value) for key, value in (config.get("env") or {}).items()}
    outcome = ctx.gateway.run_process(
        [shell, "-o", "pipefail", "-c", scratch_paths(ctx, command)],
        declared_writes=ctx.writes,
        cwd=config.get("cwd"),
        env=env,
        timeout=ctx.remaining(),
        on_output=ctx.output,
    )
    result = {
        "exitCode": outcome.exit_code,
        "stdout": outcome.stdout,
        "stderr": outcome.stderr,
        "reports": _existing(ctx, config.get("reports") or ()),
        "coverage": None,
    }
    if outcome.timed_out:
        raise StepError(
            "StepTimeout", f"the test command was stopped after the step's timeout of {ctx.timeout:g}s", metadata=result
        )
    report = config.get("coverageReport")
    if report is not None:
        # Read before judging the exit code, so a failed run's result still shows it.
        result["coverage"] = _coverage(ctx, str(report), required=threshold is not None and outcome.exit_code == 0)
    if outcome.exit_code != 0:
        # Test runners report on stdout: its line that tells why (failure_line.py), else stderr's.
        said = failure_line(outcome.stdout, outcome.stderr)
        detail = f": {said}" if said else ""
        raise StepError(
            "TestsFailed",
            f"the tests failed (exit code {outcome.exit_code}){detail}",
            metadata=result,
            guidance="the log has the test output; errorPolicy Continue goes on with the result in the step's variable",
        )
    if threshold is not None:
        coverage = result["coverage"]
        if coverage < threshold:
            raise StepError(
                "CoverageBelowThreshold",
                f"coverage is {coverage:g}%, below the threshold of {threshold:g}%",
                metadata={**result, "threshold": threshold},
                guidance=f"add tests for the uncovered lines ({report} lists them), or lower coverageThreshold",
            )
    return result


def _threshold(config: dict) -> float | None:
    threshold = config.get("coverageThreshold")
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 100:
        given = as_written(threshold)
        raise StepError("InvalidConfig", f"coverageThreshold is {given}; it is a percentage from 0 to 100")
    if not config.get("coverageReport"):
        raise StepError(
            "InvalidConfig",
            "coverageThreshold needs coverageReport: the report to read the coverage from",
            guidance="e.g. coverageReport: coverage.json (coverage json) or coverage.xml (Cobertura, coverage xml)",
        )
    return float(threshold)


def _existing(ctx: ActionContext, reports) -> list[str]:
    if isinstance(reports, str):
        reports = [reports]
    return [str(report) for report in reports if ctx.read_path(str(report)).is_file()]


def _coverage(ctx: ActionContext, written: str, *, required: bool) -> float | None:
    path = ctx.read_path(written)
    if not path.is_file():
        if required:
            raise StepError(
                "CoverageReportMissing",
                f"the coverage report '{written}' does not exist after the tests ran",
                guidance=(
                    "make the test command write it (e.g. `coverage json -o coverage.json`), or fix coverageReport"
                ),
            )
        ctx.log("warning", f"the coverage report '{written}' does not exist after the tests ran", None)
        return None
    try:
        return round(read_coverage(path), 2)
    except StepError as error:
        if required:
            raise
        ctx.log("warning", error.message, None)
        return None


def read_coverage(path: Path) -> float:
    """Line coverage in percent: Cobertura XML (the root's `line-rate` × 100) or a
    coverage.py JSON report (`totals.percent_covered`). StepError `InvalidCoverageReport`
    for anything else."""
    with path.open("rb") as stream:
        head = stream.read(512).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        return _cobertura(path)
    if head.startswith(b"{"):
        return _coverage_json(path)
    raise _invalid(path, "it is neither Cobertura XML nor a coverage.py JSON report")


def _cobertura(path: Path) -> float:
    # Imported here: only a coverage check reads XML, and every run imports this module.
    import xml.etree.ElementTree as ElementTree

    try:
        with path.open("rb") as stream:
            # Only the root element is needed: stop at its start tag.
            _event, root = next(ElementTree.iterparse(stream, events=("start",)))
    except (ElementTree.ParseError, StopIteration) as error:
        raise _invalid(path, f"it is not well-formed XML ({error})") from None
    if root.tag != "coverage":
        raise _invalid(path, f"its root element is <{root.tag}>, not Cobertura's <coverage>")
    rate = root.get("line-rate")
    try:
        value = float(rate)
    except (TypeError, ValueError):
        raise _invalid(path, f"its <coverage> element has no numeric line-rate (found {rate!r})") from None
    if not 0 <= value <= 1:
        raise _invalid(path, f"its line-rate {value:g} is not between 0 and 1")
    return value * 100


def _coverage_json(path: Path) -> float:
    if path.stat().st_size > MAX_REPORT_BYTES:
        raise _invalid(path, f"it is larger than {MAX_REPORT_BYTES // 1024 // 1024} MiB")
    try:
        document = json.loads(path.read_bytes())
    except ValueError as error:
        raise _invalid(path, f"it is not valid JSON ({error})") from None
    totals = document.get("totals") if isinstance(document, dict) else None
    value = totals.get("percent_covered") if isinstance(totals, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _invalid(path, "it has no number at totals.percent_covered (write it with `coverage json`)")
    if not 0 <= value <= 100:
        raise _invalid(path, f"its totals.percent_covered {value:g} is not between 0 and 100")
    return float(value)


def _invalid(path: Path, problem: str) -> StepError:
    return StepError(
        "InvalidCoverageReport",
        f"cannot read the coverage from {path.name}: {problem}",
        guidance="coverageReport reads Cobertura XML (`coverage xml`, line-rate) or coverage.py JSON (`coverage json`)",
    )


ACTIONS = {"test": test}
