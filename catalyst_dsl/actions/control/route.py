"""`route`: run the one branch whose `when` holds.

Unlike a chain of `if`/`else`, which runs the first branch that holds and never looks at
the others, a route asks every `when` first: when several hold it fails with
`RouteAmbiguous`, naming each, since which one was meant cannot be guessed; when none
holds it runs `otherwise`, or fails with `RoutingFailed` when it has none. cleo's guarded
edges lower to it (dialects/cleo/lowering.py), so a cantbook whose guards overlap at run
time stops as cleo does, and a native playbook gets the same exclusive choice.

A what-if that cannot know a `when` shows each branch that may run, as conditional.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, ArrayT, BOOLEAN, STEPS, STRING, obj, opt, req
from catalyst_dsl.actions.control.return_ import Return
from catalyst_dsl.ir import types as t

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.actions.control.checking import Checker, Scope
    from catalyst_dsl.actions.control.protocol import Engine, Simulator, StepRun

#: How the engine treats the step (see actions/control/__init__.py).
REPORTS_FINISH = True
KEEPS_RESULT = False
NAMES_RESULT = True

#: The error codes of a route that cannot choose.
SEVERAL_HOLD = "RouteAmbiguous"
NONE_HOLDS = "RoutingFailed"

#: One branch: when it runs, its steps, and how messages name it.
BRANCH = obj(
    when=req(ANY, "a boolean expression; exactly one branch's may hold"),
    steps=req(STEPS),
    label=opt(STRING, "how messages name the branch (default: its `when` as written)"),
)

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "route",
    "control",
    "Run the one branch whose `when` holds; several holding fail the step (RouteAmbiguous), and so does none"
    " (RoutingFailed) unless `otherwise` is given.",
    obj(
        branches=req(ArrayT(BRANCH)),
        otherwise=opt(STEPS, "the steps run when no branch holds"),
        label=opt(STRING, "how messages name the route (default: the step)"),
    ),
    "branches",
    obj(branch=STRING, executed=BOOLEAN),
    Effect.CONTROL,
    WhatIf.CONTROL,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    holding = [k for k, (when, _, _) in enumerate(_branches(run.step)) if engine.truthy(engine.value(run, when))]
    return _taken(engine, run, _chosen(engine, run, holding))


def simulate(engine: Simulator, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    values = [engine.value(run, when) for when, _, _ in _branches(run.step)]
    if engine.UNKNOWN not in values:
        return _known(engine, run, values)
    # Some `when` cannot be known: each branch that may run is shown, each conditional;
    # so is `otherwise` when none may hold.
    maybe = [k for k, value in enumerate(values) if value is engine.UNKNOWN or engine.truthy(value)]
    certain = [k for k in maybe if values[k] is not engine.UNKNOWN]
    if len(certain) > 1:
        _chosen(engine, run, certain)  # two that hold already: fails as the run would
    with engine.plan.conditional():
        for k in maybe:
            _, steps, name = _branches(run.step)[k]
            _run_body(engine, run, steps, run.at("branches", k), guarded=True, name=name)
        if not certain:
            _run_body(engine, run, run.step.config.get("otherwise"), run.at("otherwise"), guarded=True)
    return engine.UNKNOWN


def _known(engine: Engine, run: StepRun, values: list) -> dict[str, Any]:
    return _taken(engine, run, _chosen(engine, run, [k for k, v in enumerate(values) if engine.truthy(v)]))


def _branches(step: ir.Step) -> list[tuple[ir.Value, ir.Value | None, str]]:
    """Each branch's `when`, steps and name in messages, in order."""
    from catalyst_dsl.ir import nodes as ir

    found = []
    branches = step.config.get("branches")
    for branch in branches.items if isinstance(branches, ir.ListV) else ():
        if not isinstance(branch, ir.MapV):
            continue
        found.append((branch.get("when"), branch.get("steps"), branch_name(branch)))
    return found


def branch_name(branch: ir.MapV) -> str:
    """How messages, findings and a plan's addresses name a branch: its label, else its
    `when` as written (a literal as JSON writes it: `true`, not Python's `True`)."""
    from catalyst_dsl.ir import nodes as ir

    label, when = branch.get("label"), branch.get("when")
    if isinstance(label, ir.Lit) and isinstance(label.value, str):
        return label.value
    if isinstance(when, ir.Tmpl):
        return when.text
    import json  # here: a check loads this module for its declaration only

    return json.dumps(getattr(when, "value", None), ensure_ascii=False, default=str)


def _chosen(engine: Engine, run: StepRun, holding: list[int]) -> int | None:
    """The branch to run (None: `otherwise`), or the error of a route that cannot choose."""
    from catalyst_dsl.ir import nodes as ir

    names = [name for _, _, name in _branches(run.step)]
    label = run.step.config.get("label")
    subject = label.value if isinstance(label, ir.Lit) and isinstance(label.value, str) else run.label
    if len(holding) > 1:
        held = "; ".join(names[k] for k in holding)
        raise engine.error(
            SEVERAL_HOLD,
            f"{subject}: {len(holding)} branches hold ({held}); exactly one may",
            guidance="make the conditions exclusive, so that at most one holds for any value",
            metadata={"branches": [names[k] for k in holding]},
        )
    if holding:
        return holding[0]
    if not isinstance(run.step.config.get("otherwise"), ir.StepsV):
        raise engine.error(
            NONE_HOLDS,
            f"{subject}: no branch holds ({'; '.join(names)})",
            guidance="add `otherwise:` steps, or a branch for the remaining values",
            metadata={"branches": names},
        )
    return None


def _taken(engine: Engine, run: StepRun, chosen: int | None) -> dict[str, Any]:
    if chosen is None:
        _run_body(engine, run, run.step.config.get("otherwise"), run.at("otherwise"))
        return {"branch": "otherwise", "executed": True}
    _, steps, name = _branches(run.step)[chosen]
    _run_body(engine, run, steps, run.at("branches", chosen), name=name)
    return {"branch": name, "executed": True}


def _run_body(
    engine: Engine, run: StepRun, body: Any, path: str, guarded: bool = False, name: str | None = None
) -> None:
    from catalyst_dsl.ir import nodes as ir

    if not isinstance(body, ir.StepsV):
        return
    if name is not None:
        engine.name_part(path, name)
    inner = run.child()
    try:
        engine.run_steps(body.steps, run.frame, inner, path)
    except Return:
        if not guarded:
            raise
        # a return in one possible branch of a plan: the plan goes on with the others
    inner.hand_out()


# -- the reference checker's scope rule (checks/references/control.py) ---------------------


def check_scope(checker: Checker, step: ir.Step, scope: Scope) -> t.Type:
    """Each `when` checked as a condition (before any branch runs: a branch's names are not
    seen by another's `when`); each branch, and `otherwise`, walked in a scope of its own.
    A name every way out defines is defined after the route: with no `otherwise`, the way
    where no branch holds fails the step and leads nowhere."""
    from catalyst_dsl.ir import nodes as ir

    where = checker.line(step.span)
    branches = _branches(step)
    for when, _, _ in branches:
        if when is not None:
            checker.condition(when, scope, "route")
    paths_out = []
    for k, (_, steps, name) in enumerate(branches):
        inner = checker.inner(scope)
        if isinstance(steps, ir.StepsV):
            checker.guarded(steps.steps, inner)
        paths_out.append((inner, f"defined only when the route at {where} takes its branch {k + 1} ({name})", None))
    otherwise = step.config.get("otherwise")
    if isinstance(otherwise, ir.StepsV):
        inner = checker.inner(scope)
        checker.guarded(otherwise.steps, inner)
        paths_out.append((inner, f"defined only when no branch of the route at {where} holds", None))
    if paths_out:
        checker.flow_out(scope, paths_out, step.span)
    for label in [step.config.get("label")] + [b.get("label") for b in _maps(step.config.get("branches"))]:
        if label is not None:
            checker.value(label, scope)
    return checker.catalog.get(step.action).result


def _maps(value: Any) -> list:
    from catalyst_dsl.ir import nodes as ir

    return [item for item in value.items if isinstance(item, ir.MapV)] if isinstance(value, ir.ListV) else []
