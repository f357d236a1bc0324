"""Fuzz targets: functions of bytes that return when catalyst takes the input as it
promises (a result or diagnostics, never a traceback) and raise when it does not.

They import no fuzzer: `fuzz/run.py` hands them to atheris, and
tests/test_fuzz_regressions.py runs each on every input a fuzzer once found breaking it
(tests/data/fuzz/<target>/), so a crash fixed stays fixed without atheris installed.
"""

from __future__ import annotations

import json
from typing import Callable

#: Where each front end's file is taken to be: the dialect is chosen by place and suffix.
PATHS = {
    "yaml": "fuzz.yaml",
    "markdown": "fuzz.md",
    "kai": "project/.playbooks/playbooks/fuzz.yaml",
    "cleo": "fuzz.cantbook",
}


def _compiles(data: bytes, path: str) -> None:
    """As `catalyst check` and `compile` take one file: compiled, its findings rendered as
    text and JSON, its IR written as JSON when it has no errors."""
    from catalyst_dsl.compiler import compile_bytes
    from catalyst_dsl.diagnostics.text import render_text
    from catalyst_dsl.ir.serialize import to_json
    from catalyst_dsl.report.diagnostics import render_json

    result = compile_bytes(data, path)
    for diagnostic in result.diagnostics:
        if not (diagnostic.code and diagnostic.message):
            raise AssertionError(f"a finding without a code or a message: {diagnostic!r}")
    sources = {path: result.source} if result.source is not None else {}
    render_text(result.diagnostics, sources)
    json.loads(render_json(result.diagnostics, [path]))
    if result.playbook is not None and not result.has_errors:
        json.loads(to_json(result.playbook))


def yaml(data: bytes) -> None:
    _compiles(data, PATHS["yaml"])


def markdown(data: bytes) -> None:
    _compiles(data, PATHS["markdown"])


def kai(data: bytes) -> None:
    _compiles(data, PATHS["kai"])


def cleo(data: bytes) -> None:
    _compiles(data, PATHS["cleo"])


def expression(data: bytes) -> None:
    """A template split into its parts, and its text parsed as an expression and as a
    reference: a syntax error is the only failure allowed."""
    from catalyst_dsl.syntax.expr import parser
    from catalyst_dsl.syntax.expr.templates import parse_template

    text = data.decode("utf-8", "replace")
    parse_template(text)
    for start in ("expression", "reference"):
        try:
            parser.parse(text, start)
        except parser.ExpressionSyntaxError:
            pass


def lsp(data: bytes) -> None:
    """Messages to a language server that keeps running (see lsp_session.py)."""
    from fuzz.lsp_session import shared_session

    shared_session().take(data)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "yaml": yaml,
    "markdown": markdown,
    "expression": expression,
    "kai": kai,
    "cleo": cleo,
    "lsp": lsp,
}
