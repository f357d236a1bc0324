"""Golden cases: each playbook under golden/check/ with its expected diagnostics beside it.

A case is `CXXX-topic.yaml` (or `.md`), named after the main code it shows, with
`CXXX-topic.yaml.expected` beside it. Cases that cannot be checked in (a file over the
size limit) are generated: GENERATED gives their bytes, they are written to a temporary
directory under their name and checked there, and their expected file lives in
golden/check/ like any other. `pytest tests/test_golden.py --update-golden` (re)writes
the expected files; without it a missing expected file is a failure.

Library cases are projects: a directory golden/library/CXXX-topic/ (its playbooks, and a
catalyst.toml when the case needs settings) checked as a whole by `catalyst check` run in
it, with golden/library/CXXX-topic.expected beside it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from catalyst_dsl.compiler import MAX_FILE_BYTES, compile_path
from catalyst_dsl.diagnostics.codes import CODES
from catalyst_dsl.diagnostics.text import render_text
from catalyst_dsl.report.reference import HEADER

HERE = Path(__file__).parent / "golden" / "check"
LIBRARY = Path(__file__).parent / "golden" / "library"
SUFFIXES = (".yaml", ".yml", ".md", ".cantbook")
CASES = sorted(p for p in HERE.iterdir() if p.suffix in SUFFIXES)
PROJECTS = sorted(p.name for p in LIBRARY.iterdir() if p.is_dir())


def _file_too_large() -> bytes:
    """A valid playbook padded with comment lines to 6 MiB, beyond the 5 MiB limit."""
    head = (
        b"name: file-too-large\n"
        b"description: A playbook file over the size limit is not read at all\n"
        b"owner: Engineer\n"
        b"steps:\n"
        b'  - display: "hello"\n'
        b"# Wrong: the comment lines below pad the file to 6 MiB (the limit is 5 MiB).\n"
    )
    line = b"# " + b"padding " * 9 + b"\n"
    size = 6 * 1024 * 1024
    data = head + line * ((size - len(head)) // len(line))
    data += b"#" * (size - len(data) - 1) + b"\n"
    assert len(data) == size > MAX_FILE_BYTES
    return data


#: Generated cases: file name -> its content. Checked like the files in golden/check/.
GENERATED: dict[str, Callable[[], bytes]] = {
    "C015-file-too-large.yaml": _file_too_large,
}

NAMES = sorted([*(c.name for c in CASES), *GENERATED])


def render(path: Path) -> str:
    result = compile_path(str(path))
    sources = {str(path): result.source} if result.source is not None else {}
    text = render_text(result.diagnostics, sources, relative_to=str(path.parent))
    return (text.rstrip("\n") + "\n") if text else "no diagnostics\n"


def expected_file(name: str) -> Path:
    return HERE / (name + ".expected")


@pytest.mark.parametrize("name", NAMES)
def test_golden(name: str, tmp_path: Path, update_golden: bool) -> None:
    if name in GENERATED:
        case = tmp_path / name
        case.write_bytes(GENERATED[name]())
    else:
        case = HERE / name
    expected = expected_file(name)
    actual = render(case)
    if update_golden:
        expected.write_text(actual, encoding="utf-8", newline="\n")
    if not expected.exists():
        pytest.fail(
            f"{expected.relative_to(HERE.parents[2])} is missing: run "
            "`python3 -m pytest tests/test_golden.py --update-golden` and review the new file",
            pytrace=False,
        )
    assert actual == expected.read_text(encoding="utf-8")


def test_generated_cases_are_not_checked_in() -> None:
    clash = sorted(n for n in GENERATED if (HERE / n).exists())
    assert not clash, f"generated cases also exist as files in {HERE}: {', '.join(clash)}"


def test_every_expected_file_has_its_case() -> None:
    orphans = sorted(p.name for p in HERE.glob("*.expected") if p.name[: -len(".expected")] not in NAMES)
    assert not orphans, f"expected files without a case (delete them or restore the case): {', '.join(orphans)}"


def render_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check"], catch_exceptions=False)
    return result.output + f"exit status {result.exit_code}\n"


#: The environment a library case is checked in, where it needs its own.
ENVIRONMENTS = {"C648-shellcheck-unavailable": {"CATALYST_SHELLCHECK": "no-shellcheck-here"}}


@pytest.mark.parametrize("name", PROJECTS)
def test_golden_library(
    name: str, monkeypatch: pytest.MonkeyPatch, update_golden: bool, node_but_no_pwsh: Path
) -> None:
    for variable, value in ENVIRONMENTS.get(name, {}).items():
        monkeypatch.setenv(variable, value)
    expected = LIBRARY / (name + ".expected")
    actual = render_project(LIBRARY / name, monkeypatch)
    if update_golden:
        expected.write_text(actual, encoding="utf-8", newline="\n")
    if not expected.exists():
        pytest.fail(
            f"{expected.name} is missing: run `python3 -m pytest tests/test_golden.py --update-golden` and review it",
            pytrace=False,
        )
    assert actual == expected.read_text(encoding="utf-8")


def _codes_in(name: str) -> set[str]:
    path = expected_file(name) if name not in PROJECTS else LIBRARY / (name + ".expected")
    return {m.group(2) for m in HEADER.finditer(path.read_text(encoding="utf-8"))} if path.exists() else set()


def test_every_code_has_a_golden_case() -> None:
    shown = set().union(*(_codes_in(n) for n in [*NAMES, *PROJECTS]))
    missing = sorted(c for c in set(CODES) - shown if not CODES[c].retired)
    assert not missing, (
        f"codes that appear in no golden expected file: {', '.join(missing)}; "
        "add a case tests/golden/check/CXXX-topic.yaml that triggers each"
    )


@pytest.mark.parametrize("name", [n for n in [*NAMES, *PROJECTS] if re.match(r"C\d{3}-", n)])
def test_case_shows_the_code_it_is_named_after(name: str) -> None:
    code = name[:4]
    assert code in CODES, f"{name} is named after {code}, which is not in the code registry"
    shown = _codes_in(name)
    if shown:  # a missing expected file fails in test_golden
        assert code in shown, (
            f"{name} is named after {code} but its expected output shows only {', '.join(sorted(shown))}"
        )
