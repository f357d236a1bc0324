"""`ai-prompt` and `markdown`: prompts sent to an AI adapter, the answer streamed to the log.

The adapter comes from the documented precedence (the step's `provider`, then the
project's list, then the deterministic mock), so runs and tests need no credentials.
"""

from __future__ import annotations

import json

from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.errors import StepError

#: Options passed through to the adapter when the step sets them.
OPTIONS = ("model", "role", "maxTokens", "temperature", "inactivityTimeout", "return")


def _send(ctx: ActionContext, prompt: str, config: dict):
    adapter = ctx.adapter(config.get("provider"))
    tools = list(config.get("tools") or ())  # none given: read-only, as LANGUAGE.md asks
    options = {k: config[k] for k in OPTIONS if config.get(k) is not None}
    if config.get("context") is not None:
        options["context"] = config["context"]
    if ctx.remaining() is not None:
        options["timeout"] = ctx.remaining()  # the adapter stops a silent program or server in time
    chunks = []
    pending = ""  # the part of a line not ended yet: shown once it is whole
    for chunk in adapter.invoke(prompt, tools, options):
        ctx.check_deadline()
        chunks.append(chunk)
        *lines, pending = (pending + chunk).split("\n")
        for line in lines:
            ctx.output("ai", line)
    if pending:
        ctx.output("ai", pending)
    answer = "".join(chunks)
    if config.get("return"):
        # A prompt that asks for a structured answer gets it parsed when it is JSON.
        try:
            return json.loads(answer)
        except ValueError:
            return answer
    return answer


def ai_prompt(ctx: ActionContext, config: dict):
    prompt = config.get("prompt")
    if prompt is None and config.get("promptFile"):
        prompt = _read(ctx, config["promptFile"])
    if not prompt:
        raise StepError("InvalidConfig", "ai-prompt needs `prompt` or `promptFile`")
    return _send(ctx, str(prompt), config)


def markdown(ctx: ActionContext, config: dict):
    return _send(ctx, _read(ctx, config["file"]), config)


def _read(ctx: ActionContext, written: str) -> str:
    from catalyst_dsl.runtime.actions.files import MAX_READ_BYTES

    data = ctx.gateway.read_file(ctx.read_target(written), MAX_READ_BYTES)
    if data is None:
        raise StepError("FileNotFound", f"the prompt file '{written}' does not exist")
    return data.decode("utf-8")


ACTIONS = {"ai-prompt": ai_prompt, "markdown": markdown}
