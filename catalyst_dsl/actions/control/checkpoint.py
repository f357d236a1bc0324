"""`checkpoint`: pause the run for a person's approval, optionally choosing among options.

Not a control action (it runs no other steps, and a resume restores it from the journal
like any action), but the engine runs it itself, through its pauses: it is declared and
run here beside the control actions. The shapes of an approval policy live here too:
the `checkpoint:` key of a step (a gate) takes the same policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
from catalyst_dsl.ir.types import ANY, BOOLEAN, DURATION, NULL, STRING, ArrayT, EnumT, obj, opt, req, union

if TYPE_CHECKING:  # the engine's and the checker's sides, as types only: each passes itself in
    from catalyst_dsl.actions.control.protocol import Engine, Simulator, StepRun

CHECKPOINT_OPTION = obj(
    key=req(STRING),
    label=opt(STRING),
    description=opt(STRING),
    emphasis=opt(EnumT(("recommended", "suggested"))),
    allowText=opt(BOOLEAN),
    cancel=opt(BOOLEAN, "choosing this option ends the run `cancelled`"),
)
#: One rule of an approval policy: when `pattern` (a regular expression) is found in a
#: command the pause guards, the rule decides, with `reason` recorded.
POLICY_RULE = obj(
    action=req(EnumT(("require-human", "auto-approve")), "`require-human` rules are tried first, then `auto-approve`"),
    reason=req(STRING, "recorded with the decision"),
    pattern=req(STRING, "a regular expression searched in each command"),
)
#: Who passed a checkpoint (its result's `approval`): `via` is terminal, cli, token, webhook,
#: autonomous or policy; `at` is ISO 8601 UTC; `note` the approver's comment or the reason.
APPROVAL_RECORD = obj(by=STRING, role=union(STRING, NULL), at=STRING, note=union(STRING, NULL), via=STRING)
#: Who may pass a pause: `human` (only a person, never `--mode autonomous`), or rules over
#: the commands it guards (docs/running.md). Shared by the `checkpoint` action and `checkpoint:`.
APPROVAL_POLICY = union(
    EnumT(("human",)),
    obj(
        rules=req(
            union(ArrayT(POLICY_RULE), EnumT(("project",))), "the rules, or `project`: the approval-rules setting"
        ),
        commands=opt(ArrayT(STRING), "what the rules read; the guarded step's own command when absent"),
    ),
)

#: The action's declaration (actions/builtin.py lists it with the others).
SPEC = ActionSpec(
    "checkpoint",
    "human",
    "Pause for approval (ENTER on a terminal, `catalyst approve` otherwise), optionally choosing among options; "
    "an option with `cancel: true` ends the run `cancelled`; `policy` says who may pass it "
    "(`human`: never autonomous mode).",
    obj(
        message=opt(STRING),
        options=opt(ArrayT(CHECKPOINT_OPTION)),
        default=opt(ANY),
        timeout=opt(DURATION),
        multiSelect=opt(BOOLEAN),
        header=opt(STRING),
        headerColor=opt(STRING),
        context=opt(STRING),
        policy=opt(APPROVAL_POLICY, "who may pass it: `human`, or `{rules: [...]}`"),
    ),
    "message",
    obj(ANY, selected=ANY, hasTextInput=BOOLEAN, textInput=STRING, approval=APPROVAL_RECORD),
    Effect.HUMAN,
    WhatIf.PAUSE,
)


def run(engine: Engine, run: StepRun, config: dict[str, Any] | None = None) -> Any:
    """Wait for the answer; an option with `cancel: true` chosen ends the run `cancelled`."""
    config = engine.config(run)
    options = list(config.get("options") or [])
    selection, by = engine.answer(
        run.path,
        run.label,
        str(config.get("message") or "approve to continue"),
        options,
        config.get("default"),
        run.frame,
        policy=engine.approval_policy(run.step.config.get("policy")),
    )
    if any(
        isinstance(o, dict) and o.get("cancel") is True and o.get("key") == selection.get("selected") for o in options
    ):
        raise engine.cancelled(by, f"{run.label}: answered {selection.get('selected')} at its checkpoint")
    return selection


def simulate(engine: Simulator, run: StepRun, config: dict[str, Any], entry: dict) -> Any:
    """Its plan entry: it would pause, unless its approval rules pass it by themselves."""
    policy = engine.approval_policy(run.step.config.get("policy"))
    verdict = policy.judge(policy.commands or ()) if policy is not None else None
    if verdict is not None and verdict.passes:
        entry["change"], entry["reason"] = "no-op", verdict.reason
    else:
        entry["change"] = "would-pause"
        entry["approval"] = {
            "message": engine.plan.shown(config.get("message") or "approve to continue"),
            "roles": list(run.frame.playbook.reviewers.required),
        }
        if verdict is not None:
            entry["approval"]["policy"] = verdict.reason
    # Who would pass it is not known before the run.
    unknown = engine.UNKNOWN
    who = {"by": unknown, "role": unknown, "at": unknown, "comment": unknown, "via": unknown}
    return result(config.get("default"), list(config.get("options") or []), record=who)


def result(selected: Any, options: list, text: str | None = None, record: dict | None = None) -> dict[str, Any]:
    """A checkpoint's result; `approval` says who passed it, in which role, when, with what
    note and how (a person at the terminal, `catalyst approve`, a token, autonomous mode, its
    rules), so later steps can route on the decision (cleo's `__lastApproval`)."""
    answer = {"selected": selected, "hasTextInput": bool(text), "textInput": text or "", "approved": True}
    if record is not None:
        answer["approval"] = {
            "by": record.get("by"),
            "role": record.get("role"),
            "at": record.get("at"),
            "note": record.get("comment"),
            "via": record.get("via"),
        }
    return answer
