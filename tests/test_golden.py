"""Golden cases: each playbook under golden/check/ with its expected diagnostics beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalyst_dsl.compiler import compile_path
from catalyst_dsl.report.diagnostics import render_text

HERE = Path(__file__).parent / "golden" / "check"
CASES = sorted(p for p in HERE.iterdir() if p.suffix in (".yaml", ".yml", ".md"))


def render(path: Path) -> str:
    result = compile_path(str(path))
    sources = {str(path): result.source} if result.source is not None else {}
    text = render_text(result.diagnostics, sources, relative_to=str(HERE))
    return (text.rstrip("\n") + "\n") if text else "no diagnostics\n"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case: Path, update_golden: bool) -> None:
    expected_file = case.with_name(case.name + ".expected")
    actual = render(case)
    if update_golden or not expected_file.exists():
        expected_file.write_text(actual, encoding="utf-8", newline="\n")
    assert actual == expected_file.read_text(encoding="utf-8")
