"""`display` and the `log-*` actions: messages for the console and the run's log."""

from __future__ import annotations

from catalyst_dsl.runtime.actions.context import ActionContext


def display(ctx: ActionContext, config: dict) -> None:
    ctx.log("display", _text(config["message"]), None)


def _logger(level: str):
    def log(ctx: ActionContext, config: dict) -> None:
        data = {k: config[k] for k in ("action", "source", "data") if config.get(k) is not None}
        ctx.log(level, _text(config["message"]), data or None)
    return log


def _text(value) -> str:
    from catalyst_dsl.runtime.evaluate import to_text

    return to_text(value)


ACTIONS = {"display": display, **{f"log-{level}": _logger(level) for level in ("error", "warning", "info", "verbose", "debug", "trace")}}
