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
    ctx.transcript(prompt)
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
        prompt = _rendered(ctx, config["promptFile"], _read(ctx, config["promptFile"]))
    if not prompt:
        raise StepError("InvalidConfig", "ai-prompt needs `prompt` or `promptFile`")
    return _send(ctx, str(prompt), config)


def markdown(ctx: ActionContext, config: dict):
    return _send(ctx, _read(ctx, config["file"]), config)


def _rendered(ctx: ActionContext, written: str, text: str) -> str:
    """A prompt file's text with its `{{ }}` and `${{ }}` filled in, like an inline prompt.

    The file is read at run time, so the checker never saw its templates: a template that
    does not resolve fails the step naming the file, and one that would put a secret into
    the prompt is refused (a prompt file can be written during the run, from data nobody
    vetted, and must not be a way to send the run's secrets to an AI).
    """
    from catalyst_dsl.runtime import taint
    from catalyst_dsl.runtime.evaluate import EvaluationError, to_text
    from catalyst_dsl.syntax.templates import might_be_template

    if ctx.render is None or not might_be_template(text):
        return text
    try:
        value = ctx.render(text)
    except (EvaluationError, KeyError, LookupError) as error:
        raise StepError("TemplateError", f"the prompt file '{written}' has a template that cannot be filled in: {error}",
                        guidance="fix the template in the file, or escape braces meant as text as \\{{") from None
    if isinstance(value, taint.SecretText) or taint.taint_of([value]):
        raise StepError("SecretInPrompt", f"the prompt file '{written}' would put a secret into the prompt",
                        guidance="pass secrets to programs through their environment, never in a prompt")
    return to_text(value)


def _read(ctx: ActionContext, written: str) -> str:
    from catalyst_dsl.runtime.actions.files import MAX_READ_BYTES

    data = ctx.gateway.read_file(ctx.read_target(written), MAX_READ_BYTES)
    if data is None:
        raise StepError("FileNotFound", f"the prompt file '{written}' does not exist")
    return data.decode("utf-8")


ACTIONS = {"ai-prompt": ai_prompt, "markdown": markdown}
