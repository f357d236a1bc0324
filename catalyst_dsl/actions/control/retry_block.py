"""`retry-block`: run steps again, from the start or a named step, when they fail."""

from __future__ import annotations

from catalyst_dsl import expr_builtins as B
from catalyst_dsl.diagnostics.ids import ERROR_CODE_CASE, RETRY_BLOCK_ATTEMPTS, RETRY_FROM_UNKNOWN_STEP
from catalyst_dsl.diagnostics.suggest import suggest
from catalyst_dsl.actions.control.checking import Checker, Scope
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.ir.language import LAST_ERROR, MAX_BLOCK_ATTEMPTS
from catalyst_dsl.lazy_pattern import LazyPattern

_PASCAL = LazyPattern(r"^[A-Z][A-Za-z0-9]*$")


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """Its attempts bound (C613), its codes PascalCase (C309), its body with `__lastError`,
    and the steps `retryFrom` names found in the block (C615)."""
    cap = step.config.get("maxAttempts")
    checker.value(cap, scope)
    if isinstance(cap, ir.Lit) and isinstance(cap.value, (int, float)) and not isinstance(cap.value, bool):
        if cap.value != int(cap.value) or not 1 <= cap.value <= MAX_BLOCK_ATTEMPTS:
            checker.sink.report(
                RETRY_BLOCK_ATTEMPTS,
                f"maxAttempts is {cap.value}; a retry-block has from 1 to {MAX_BLOCK_ATTEMPTS} attempts",
                cap.span,
                help="attempts are counted for the whole run; a block that needs more should fail and be looked at",
            )
    _error_codes(checker, step, scope)
    body = checker.inner(scope)
    body.define(checker.binding(LAST_ERROR, t.union(B.ERROR_TYPE, t.NULL), "error", step.span))
    steps = step.config.get("steps")
    if isinstance(steps, ir.StepsV):
        checker.walk(steps.steps, body)
    _retry_from(checker, step, scope, steps)
    return checker.catalog.get(step.action).result


def _error_codes(checker: Checker, step: ir.Step, scope: Scope) -> None:
    codes = step.config.get("retryOn")
    checker.value(codes, scope)
    for code in codes.items if isinstance(codes, ir.ListV) else ():
        if isinstance(code, ir.Lit) and isinstance(code.value, str) and not _PASCAL.match(code.value):
            checker.sink.report(
                ERROR_CODE_CASE,
                f"the error code '{code.value}' is not PascalCase",
                code.span,
                help="error codes look like PostconditionFailed",
            )


def _retry_from(checker: Checker, step: ir.Step, scope: Scope, steps: ir.Value | None) -> None:
    sources = step.config.get("retryFrom")
    checker.value(sources, scope)
    if isinstance(sources, ir.ListV) and isinstance(steps, ir.StepsV):
        names = {inner.name for top in steps.steps for inner in ir.steps_within(top) if inner.name}
        for source in sources.items:
            if isinstance(source, ir.Lit) and isinstance(source.value, str) and source.value not in names:
                checker.sink.report(
                    RETRY_FROM_UNKNOWN_STEP,
                    f"retryFrom names '{source.value}', which is not a step of this block",
                    source.span,
                    help=suggest(source.value, names) or "name a step inside the block (its `name:`)",
                )
