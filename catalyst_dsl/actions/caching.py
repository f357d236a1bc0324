"""Which steps may reuse an earlier result (`cache:`), for the check and the engine alike.

A result may stand in for running the step again only when running it again would
change nothing but the answer: an AI step given no tool that changes things, `http-get`
and `github-repo`. A step that writes files, runs a program or
sends a change is never cached: skipping it would skip its effects.
"""

from __future__ import annotations

from catalyst_dsl.actions.catalog import ActionSpec
from catalyst_dsl.ir import nodes as ir

#: How long `cache: true` keeps a result: a day.
DEFAULT_SECONDS = 86400.0
#: The network actions that only read.
READING_NETWORK_ACTIONS = ("http-get", "github-repo")
#: The AI actions catalyst runs itself: a plugin's action in the `ai` group may do anything
#: beside asking (write files, open a pull request), which a reused answer would skip.
AI_ACTIONS = ("ai-prompt", "markdown")


def refusal(step: ir.Step, spec: ActionSpec | None) -> str | None:
    """Why `step`'s result may not be reused, in words, or None when it may (as far as the
    playbook says: a value known only at run time is checked again then, `run_time_refusal`)."""
    if spec is None:
        return None  # an unknown action is reported already
    if spec.group == "ai" and step.action in AI_ACTIONS:
        tools = step.config.get("tools")
        if isinstance(tools, ir.ListV):
            from catalyst_dsl.actions.builtin import writing_tools

            granted = writing_tools([item.value for item in tools.items if isinstance(item, ir.Lit)])
            if granted:
                return (
                    f"its AI is given tools that change things ({', '.join(granted)}), which a reused answer would skip"
                )
        return None
    if step.action in READING_NETWORK_ACTIONS:
        return None
    return f"`{step.action}` {_why(spec)}; only AI steps, `http-get` and `github-repo` may reuse a result"


def run_time_refusal(step: ir.Step, config: dict) -> str | None:
    """Why a step whose values are now known may not reuse a result, or None."""
    tools = config.get("tools")
    if isinstance(tools, list):
        from catalyst_dsl.actions.builtin import writing_tools

        granted = writing_tools(tools)
        if granted:
            return f"its AI is given tools that change things ({', '.join(granted)})"
    return None


def _why(spec: ActionSpec) -> str:
    effect = spec.effect.value
    return {
        "write": "changes files",
        "external": "runs a program whose effects a reused result would skip",
        "network": "sends a change",
        "control": "runs other steps",
        "human": "waits for a person",
        "read": "reads what may have changed, and costs nothing to run again",
        "pure": "computes its value, and costs nothing to run again",
    }.get(effect, "cannot reuse a result")
