"""`display` and the `log-*` actions: messages for the console and the run's log."""

from __future__ import annotations

from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.values.jsvalues import to_text


def display(ctx: ActionContext, config: dict) -> None:
    ctx.log("display", to_text(config["message"]), None)


def _logger(level: str):
    def log(ctx: ActionContext, config: dict) -> None:
        data = {k: config[k] for k in ("action", "source", "data") if config.get(k) is not None}
        ctx.log(level, to_text(config["message"]), data or None)

    return log


ACTIONS = {
    "display": display,
    **{f"log-{level}": _logger(level) for level in ("error", "warning", "info", "verbose", "debug", "trace")},
}
