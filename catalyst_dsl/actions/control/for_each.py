"""`for-each`: run steps once per item of an array (or entry of an object).

Each iteration journals the item it ran for, so a resume refuses a list that changed
under it (see the engine's `same_item`). A what-if that cannot know the list shows the
body once, for an unknown item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, ArrayT, NUMBER, STEPS, STRING, obj, opt, req
from catalyst_dsl.ir import types as t

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
    from catalyst_dsl.actions.control.protocol import Engine, Simulator, StepRun

#: How the engine treats the step (see actions/control/__init__.py).
REPORTS_FINISH = True
KEEPS_RESULT = False
NAMES_RESULT = True

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "for-each",
    "control",
    "Run steps once per item of an array.",
    obj(
        item=req(STRING, "loop variable name"),
        in_=req(ArrayT(ANY), "the array"),
        index=opt(STRING, "index variable name (default `index`)"),
        steps=req(STEPS),
    ),
    "item",
    obj(iterations=NUMBER, completed=NUMBER, failed=NUMBER),
    Effect.CONTROL,
    WhatIf.CONTROL,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    return _loop(engine, run, config, engine.entry(run, "in", config))


def simulate(engine: Simulator, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    items = engine.entry(run, "in", config)
    if items is not engine.UNKNOWN:
        return _loop(engine, run, config, items)
    # How many items, and which, is not known: the body is shown once, for an unknown item.
    item_name, index_name = _names(engine, run, config)
    loop = run.child({item_name: engine.UNKNOWN, index_name: engine.UNKNOWN})
    with engine.plan.conditional():
        engine.run_steps(_body(run), run.frame, loop, run.at("each", 0))
    loop.hand_out(item_name, index_name)
    return engine.UNKNOWN


def _loop(engine: Engine, run: StepRun, config: dict[str, Any] | None, items: Any) -> dict[str, Any]:
    if isinstance(items, dict):
        items = list(items.items())
    if not isinstance(items, list):
        raise engine.error("TypeError", f"for-each needs an array in `in`, got {type(items).__name__}")
    item_name, index_name = _names(engine, run, config)
    steps = _body(run)
    if run.at("each", len(items), "item") in engine.replay:
        # Fewer items than the run already went through: their work would be dropped unseen.
        raise list_changed(engine, run.path, f"it had more than {len(items)} item(s)")
    for i, item in enumerate(items):
        engine.same_item(run.path, i, item)
        loop = run.child({item_name: item, index_name: i})
        engine.run_steps(steps, run.frame, loop, run.at("each", i))
        loop.hand_out(item_name, index_name)
    return {"iterations": len(items), "completed": len(items), "failed": 0}


def _names(engine: Engine, run: StepRun, config: dict[str, Any] | None) -> tuple[str, str]:
    """The loop's item and index variables (the index is `index` unless named)."""
    item_name = str(engine.entry(run, "item", config))
    index_name = str(engine.entry(run, "index", config)) if run.step.config.get("index") is not None else "index"
    return item_name, index_name


def _body(run: StepRun) -> tuple[ir.Step, ...]:
    from catalyst_dsl.ir import nodes as ir

    body = run.step.config.get("steps")
    return body.steps if isinstance(body, ir.StepsV) else ()


def list_changed(engine: Engine, path: str, how: str) -> Any:
    """A failure of the loop step, so the run ends consistently (failed, locks released) and
    resumes from the loop once the list is as it was."""
    return engine.error(
        "LoopListChanged",
        # The failure is the for-each step's, which the run's line names: the path stays internal.
        f"the list of the for-each changed since this run went through it: {how}",
        guidance="put the list back as it was (the file or value it comes from) and resume, or start a new run",
    )


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """The list typed; the body walked with the item (typed as the list's element) and its
    index. What the body defines may be missing after it, unless the loop is over a
    written, non-empty list (then its body runs)."""
    from catalyst_dsl.ir import nodes as ir

    cfg = step.config
    items = cfg.get("in")
    itype = checker.value(items, scope) if items is not None else t.ANY
    element = t.ANY
    if isinstance(itype, t.ArrayT):
        element = itype.item  # a non-array is reported where `in` is typed
    body = checker.inner(scope)
    item = cfg.get("item")
    if isinstance(item, ir.Lit) and isinstance(item.value, str):
        body.define(checker.binding(item.value, element, "loop", item.span, checker.value_origin(items, scope)))
    index = cfg.get("index")
    index_name = index.value if isinstance(index, ir.Lit) and isinstance(index.value, str) else "index"
    body.define(checker.binding(index_name, t.NUMBER, "loop", index.span if index is not None else step.span))
    steps = cfg.get("steps")
    if isinstance(steps, ir.StepsV):
        checker.guarded(steps.steps, body)
    runs = isinstance(items, ir.ListV) and len(items.items) > 0
    reason = f"defined only when the for-each at {checker.line(step.span)} runs at least once"
    never = [] if runs else [(checker.inner(scope), reason, None)]
    checker.flow_out(scope, [(body, reason, None)] + never, step.span)
    return checker.catalog.get(step.action).result
