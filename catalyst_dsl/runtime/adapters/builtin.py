"""What a project has of the built-in real AI adapters: the ones its settings make
available, their precedence, and the ones configured but unusable (and why).
"""

from __future__ import annotations

import os
import shlex
from typing import Callable, Mapping

from catalyst_dsl.project.addresses import CLEAR_TEXT_FIX, in_clear_text, on_this_machine
from catalyst_dsl.runtime.adapters.attempts import Runner, shared_limiter
from catalyst_dsl.runtime.adapters.command import COMMAND, CommandAdapter
from catalyst_dsl.runtime.adapters.interface import AI_ADAPTER_UNAVAILABLE, AdapterError, AdapterFactory, Unusable
from catalyst_dsl.runtime.adapters.openai_compatible import (
    API_KEY_ENV,
    API_KEY_SECRET,
    OPENAI,
    OpenAIAdapter,
    clear_text_problem,
)


def available_adapters(
    settings,
    secret: Callable[[str], str | None],
    *,
    runner: Runner | None = None,
    environ: Mapping[str, str] | None = None,
    mask: Callable[[str], None] | None = None,
) -> dict[str, AdapterFactory]:
    """The built-in adapters the project's settings configure, as factories for `select_adapter`:
    `command` when `ai-command` is set, `openai` when `openai-base-url` is.

    `runner` runs the command adapter's program (use `gateway_runner(gateway)`). The API
    key is looked up when an adapter is made: the secret `openai-api-key`, else
    `$OPENAI_API_KEY`, else none. A key from the environment is handed to `mask` (the
    run's masker), as `secret` does for the keys it finds.
    """
    environ = os.environ if environ is None else environ
    found: dict[str, AdapterFactory] = {}
    rate = getattr(settings, "ai_rate_limit", None)
    argv = getattr(settings, "ai_command", None)
    if argv:

        def command(options: Mapping[str, object]) -> CommandAdapter:
            if runner is None:
                raise AdapterError(
                    AI_ADAPTER_UNAVAILABLE, "the command AI adapter cannot run programs here (no runner was given)"
                )
            return CommandAdapter(argv, runner, limiter=shared_limiter(rate))

        found[COMMAND] = command
    base_url = getattr(settings, "openai_base_url", None)
    if base_url:

        def openai(options: Mapping[str, object]) -> OpenAIAdapter:
            key = secret(API_KEY_SECRET)
            if not key:
                key = environ.get(API_KEY_ENV) or None
                if key and mask is not None:
                    mask(key)
            return OpenAIAdapter(base_url, getattr(settings, "openai_model", None), key, limiter=shared_limiter(rate))

        found[OPENAI] = openai
    return found


def precedence(settings) -> tuple[str, ...]:
    """The adapters a step without `provider` gets, in order: `ai-adapters`, else the built-in
    ones the settings configure (`ai-command`: command, `openai-*`: openai). Empty: nothing is
    configured, and the mock answers."""
    listed = tuple(getattr(settings, "ai_adapters", ()) or ())
    if listed:
        return listed
    implied = []
    if getattr(settings, "ai_command", None):
        implied.append(COMMAND)
    if getattr(settings, "openai_base_url", None) or getattr(settings, "openai_model", None):
        implied.append(OPENAI)
    return tuple(implied)


def unusable_adapters(
    settings,
    secret: Callable[[str], str | None],
    *,
    environ: Mapping[str, str] | None = None,
    root: os.PathLike[str] | str | None = None,
) -> dict[str, Unusable]:
    """The built-in adapters that cannot be used with these settings, each with what is
    missing and where to set it. What only the provider can tell (a model it does not know,
    a key it refuses) is an error of the step that asks it."""
    environ = os.environ if environ is None else environ
    found: dict[str, Unusable] = {}
    argv = getattr(settings, "ai_command", None)
    if not argv:
        found[COMMAND] = Unusable(
            "the ai-command setting is not set",
            'set ai-command in ~/.config/catalyst/config.toml, e.g. ai-command = ["llm", "-m", "gpt-4o"]',
        )
    else:
        words = shlex.split(argv) if isinstance(argv, str) else [str(part) for part in argv]
        program = words[0] if words else ""
        if not _runnable(program, root, environ):
            found[COMMAND] = Unusable(
                f"its program `{program}` (the first word of ai-command) is not found on PATH or is not executable",
                "install the program, or fix ai-command in ~/.config/catalyst/config.toml",
            )
    base_url = getattr(settings, "openai_base_url", None)
    if not base_url:
        found[OPENAI] = Unusable(
            "the openai-base-url setting is not set",
            'set openai-base-url in ~/.config/catalyst/config.toml, e.g. openai-base-url = "https://api.openai.com/v1"',
        )
    else:
        from urllib.parse import urlsplit

        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            found[OPENAI] = Unusable(
                f"openai-base-url is {base_url!r}, which is not an http(s) URL",
                'fix openai-base-url in ~/.config/catalyst/config.toml, e.g. openai-base-url = "https://api.openai.com/v1"',
            )
        elif not (secret(API_KEY_SECRET) or environ.get(API_KEY_ENV)):
            if not on_this_machine(parts.hostname):
                found[OPENAI] = Unusable(
                    f"it has no API key for {parts.hostname}",
                    f"set the secret '{API_KEY_SECRET}' (CATALYST_SECRET_OPENAI_API_KEY, or secrets-file) "
                    f"or ${API_KEY_ENV}; "
                    f"only a server on this machine (localhost) is asked without a key",
                )
        elif in_clear_text(base_url):
            found[OPENAI] = Unusable(
                clear_text_problem(base_url),
                f"fix openai-base-url in ~/.config/catalyst/config.toml: {CLEAR_TEXT_FIX}",
            )
    return found


def _runnable(program: str, root: os.PathLike[str] | str | None, environ: Mapping[str, str]) -> bool:
    import shutil

    if not program:
        return False
    if os.sep in program or (os.altsep and os.altsep in program):
        # A path: the gateway starts programs in the project root.
        path = os.path.join(root, program) if root is not None and not os.path.isabs(program) else program
        return os.path.isfile(path) and os.access(path, os.X_OK)
    return shutil.which(program, path=environ.get("PATH", os.defpath)) is not None
