"""`ai-prompt` and `markdown`: prompts sent to an AI adapter, the answer streamed to the log.

The adapter comes from the documented precedence (the step's `provider`, then the
project's list, then the deterministic mock), so runs and tests need no credentials.
"""

from __future__ import annotations

import json
from typing import Any

from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.adapters.interface import MOCK
from catalyst_dsl.runtime.errors import StepError

#: Options passed through to the adapter when the step sets them.
OPTIONS = ("model", "role", "maxTokens", "temperature", "inactivityTimeout", "return")
#: Who answers (DIALECTS C-4, C-8): passed as options too, to an adapter that declares it
#: honours them (its `identity_keys`); any other adapter refuses the step before sending.
IDENTITY = ("command", "agent", "skill", "profile", "readPaths", "skills")
#: What an adapter that declares nothing honours: `command` is the prompt's first line, and
#: every `invoke` is a conversation of its own (the AIAdapter protocol).
IDENTITY_OF_ANY_ADAPTER = frozenset({"command"})


def _send(ctx: ActionContext, prompt: str, config: dict):
    adapter = ctx.adapter(config.get("provider"))
    tools = list(config.get("tools") or ())  # none given: read-only, as docs/running.md (AI steps) says
    used = [k for k in IDENTITY if config.get(k) is not None]
    honoured = getattr(adapter, "identity_keys", IDENTITY_OF_ANY_ADAPTER)
    refused = [k for k in used if k not in honoured]
    if refused:
        name = getattr(adapter, "name", type(adapter).__name__)
        raise StepError(
            "AIAdapterUnsupported",
            f"the {name} AI adapter cannot honour {', '.join(f'`{k}`' for k in refused)}",
            guidance="remove the key, or run the step through an adapter that supports it (the command adapter "
            "passes each to its program; docs/running.md, \"Agent identity\")",
        )
    options = {k: config[k] for k in (*OPTIONS, *used) if config.get(k) is not None}
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
    command = config.get("command")
    if command is not None:
        prompt = slash_prompt(str(command), str(prompt) if prompt else "")
    if not prompt:
        raise StepError("InvalidConfig", "ai-prompt needs `prompt`, `promptFile` or `command`")
    return _send(ctx, str(prompt), config)


def planned_prompt(config: dict) -> str | None:
    """The prompt a what-if shows for an `ai-prompt` step: its command line and inline
    prompt as they would be sent (a `promptFile` is read only by a run); None when there
    is no text to show or it cannot be composed."""
    prompt = config.get("prompt")
    command = config.get("command")
    if not isinstance(prompt, str):
        prompt = None
    if isinstance(command, str):
        try:
            return slash_prompt(command, prompt or "")
        except StepError:
            return None
    return prompt


def slash_prompt(command: str, prompt: str) -> str:
    """The prompt of a slash-command step: the command and its arguments, trimmed, alone on
    the first line (DIALECTS A4.6), then the step's own prompt, if any."""
    line = command.strip()
    if "\n" in line or "\r" in line:
        # A value in the arguments must not move text onto a line of its own, where the
        # agent would read it as instructions rather than as the command's argument.
        raise StepError(
            "InvalidConfig",
            "the slash command must be one line, but its arguments hold a line break",
            guidance="remove line breaks from the values passed as the command's arguments",
        )
    if not line.startswith("/"):
        raise StepError(
            "InvalidConfig",
            f"`command` is not a slash command: {line!r}",
            guidance="write the command as `/name` followed by its arguments",
        )
    return line + ("\n" + prompt if prompt else "")


def markdown(ctx: ActionContext, config: dict):
    return _send(ctx, _read(ctx, config["file"]), config)


def _rendered(ctx: ActionContext, written: str, text: str) -> str:
    """A prompt file's text with its `{{ }}` and `${{ }}` filled in, like an inline prompt.

    The file is read at run time, so the checker never saw its templates: a template that
    does not resolve fails the step naming the file, and one that would put a secret into
    the prompt is refused (a prompt file can be written during the run, from data nobody
    vetted, and must not be a way to send the run's secrets to an AI).
    """
    from catalyst_dsl.runtime.values import taint
    from catalyst_dsl.runtime.values.evaluate import EvaluationError, to_text
    from catalyst_dsl.syntax.expr.templates import might_be_template

    if ctx.render is None or not might_be_template(text):
        return text
    try:
        value = ctx.render(text)
    except (EvaluationError, KeyError, LookupError) as error:
        raise StepError(
            "TemplateError",
            f"the prompt file '{written}' has a template that cannot be filled in: {error}",
            guidance="fix the template in the file, or escape braces meant as text as \\{{",
        ) from None
    if isinstance(value, taint.SecretText) or taint.taint_of([value]):
        raise StepError(
            "SecretInPrompt",
            f"the prompt file '{written}' would put a secret into the prompt",
            guidance="pass secrets to programs through their environment, never in a prompt",
        )
    return to_text(value)


def _read(ctx: ActionContext, written: str) -> str:
    from catalyst_dsl.runtime.actions.files import MAX_READ_BYTES

    data = ctx.gateway.read_file(ctx.read_target(written), MAX_READ_BYTES)
    if data is None:
        raise StepError("FileNotFound", f"the prompt file '{written}' does not exist")
    return data.decode("utf-8")


def text_answer_cause(adapter: Any) -> tuple[str, str]:
    """Why an AI step whose answer had to be an object answered text, and the fix: the
    mock's answer is named as the cause, since it only ever answers what it is scripted to
    (or `mock answer to: …`), whatever the playbook asks of it."""
    if getattr(adapter, "name", None) == MOCK:
        return (
            "the mock AI adapter gave that answer, and it answers text (`mock answer to: …`) "
            "unless a script gives it an object",
            "configure a real AI adapter (the `ai-adapters`, `ai-command` or `openai-base-url` setting, "
            "docs/running.md \"AI steps\"), or give the mock a script (CATALYST_MOCK_AI_SCRIPT) "
            "whose entry for this prompt answers with `json:` an object",
        )
    name = getattr(adapter, "name", type(adapter).__name__)
    return (
        f"the {name} AI adapter answered text that is not a JSON object",
        "ask the AI for a JSON object in the prompt (the step's `return` says what to return)",
    )


ACTIONS = {"ai-prompt": ai_prompt, "markdown": markdown}
