"""Which AI adapter each step of a run gets, checked before any step runs: never a silent mock.

The settings configure adapters (`ai-adapters`, `ai-command`, `openai-*`) and steps name
them (`provider:`). One that is configured but cannot be used (its setting missing, its
program not installed, no API key for a remote server) stops the run at pre-flight with
what is missing and where to set it, when the step names its provider plainly; a provider
chosen by a template is checked when its step runs. The deterministic mock answers only
when nothing is configured, and the run says so once, in the console and the JSON log.
"""

from __future__ import annotations

from typing import Any, Callable

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.adapters.builtin import available_adapters, precedence, unusable_adapters
from catalyst_dsl.runtime.adapters.choosing import choose_adapter, select_adapter
from catalyst_dsl.runtime.adapters.interface import MOCK, AdapterError, Unusable
from catalyst_dsl.runtime.adapters.mock import MockAdapter
from catalyst_dsl.runtime.adapters.command import COMMAND, CommandAdapter
from catalyst_dsl.runtime.adapters.openai_compatible import NO_MODEL, OPENAI, OpenAIAdapter
from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort

#: The actions that send a prompt to an adapter.
AI_ACTIONS = ("ai-prompt", "markdown")

MOCK_NOTICE = "no AI adapter is configured: ai-prompt steps get the deterministic mock's answers"


class AdapterChoice:
    """The adapters of one session: what the settings configure, what is installed, and the
    one mock whose scripted answers are shared by every step."""

    def __init__(
        self,
        project,
        plugins,
        secret: Callable[[str], str | None],
        runner: Callable[[], Any],
        notice: Callable[[str], None],
        mask: Callable[[str], None],
    ) -> None:
        self.project = project
        self.plugins = plugins
        self._secret = secret
        self._runner = runner
        self._notice = notice
        self._mask = mask
        self._mock: MockAdapter | None = None
        self._known: tuple[tuple[str, ...], dict[str, Unusable]] | None = None
        self._noticed = False
        #: Pre-flight found a step the mock (or the detected adapter) will answer by
        #: default: `announce` says so.
        self._mock_by_default = False
        self._detected_by_default = False
        from catalyst_dsl.runtime.adapters.detection import detect, detected_settings

        #: The adapter the environment offers when the settings name none (detection.py).
        self.detected = detect(project.config, root=project.root)
        #: The settings as the adapters read them: the project's, or what was detected.
        self.settings = detected_settings(project.config, self.detected)

    def _settings(self) -> tuple[tuple[str, ...], dict[str, Unusable]]:
        """The precedence and the configured-but-unusable built-in adapters, looked up once."""
        if self._known is None:
            self._known = (
                precedence(self.settings),
                unusable_adapters(self.settings, self._secret, root=self.project.root),
            )
        return self._known

    def _available(self, name: str | None, order: tuple[str, ...]) -> dict[str, Any]:
        if self._mock is None:
            self._mock = MockAdapter(root=self.project.root)
        mock = self._mock
        available: dict[str, Any] = {MOCK: lambda options: mock}
        if name != MOCK and (name or order):
            available.update(self.plugins.adapters())
            available.update(available_adapters(self.settings, self._secret, runner=self._runner(), mask=self._mask))
        return available

    def adapter(self, name: str | None):
        """The adapter a step gets (its `provider`, or None); AdapterError when it cannot be used."""
        order, unusable = self._settings()
        adapter = select_adapter(name, order, self._available(name, order), unusable=unusable)
        if not self._noticed:
            if name is None and not order:
                self._noticed = True
                self._notice(MOCK_NOTICE)
            elif self._by_detection(name):
                self._noticed = True
                self._notice(self.detected_notice())
        return adapter

    def _by_detection(self, name: str | None) -> bool:
        """Whether a step asking for `name` gets the adapter found in the environment: by
        default, or by naming that adapter (`provider: command` with no `ai-command` set
        gets the detected program, which must not answer unannounced)."""
        return self.detected is not None and (name is None or name == self.detected.adapter)

    def detected_notice(self) -> str:
        """What the run says once when a step gets the adapter found in the environment."""
        found = self.detected
        return (
            f"AI steps use {found.described()}, found in the environment ({found.because}): no AI adapter "
            "is configured; set ai-adapters to choose one, or ai-detect = false for the deterministic mock"
        )

    def preflight(self, playbook: ir.Playbook) -> None:
        """RunAbort (exit 1) when an AI step that every run of `playbook` reaches names, or would
        get, an adapter that cannot be used; the mock's notice when a step will get it by
        default. Nothing runs first.

        Only the playbook's own top-level steps without a `condition` are certain to run:
        steps in `if` branches, loops and handlers are often guarded by exactly the setting
        that makes their adapter usable (an API key present), so they are checked when they
        run, where an unusable adapter is the same error, never the mock."""
        order, unusable = self._settings()
        problems = []
        implicit_mock = implicit_detected = False
        for step in playbook.steps:
            if step.action not in AI_ACTIONS or step.condition is not None:
                continue
            provider = step.config.get("provider")
            if provider is not None and not isinstance(provider, ir.Lit):
                continue  # a template: known when the step runs
            name = None if provider is None else str(provider.value)
            try:
                chosen = choose_adapter(name, order, self._available(name, order), unusable)
            except AdapterError as error:
                problems.append((_named(step), error.message, error.guidance))
                continue
            implicit_mock = implicit_mock or (name is None and not order)
            implicit_detected = implicit_detected or self._by_detection(name)
            if chosen == OPENAI and step.config.get("model") is None and not self.settings.openai_model:
                problems.append((_named(step), NO_MODEL.problem, NO_MODEL.fix))
            refused = unhonoured_identity(chosen, step)
            if refused:
                problems.append(
                    (
                        _named(step),
                        f"the {chosen} AI adapter cannot honour {', '.join(f'`{k}`' for k in refused)}",
                        "remove the key, or name an adapter that supports it with `provider:` "
                        '(docs/running.md, "Agent identity")',
                    )
                )
        if problems:
            first = problems[0]
            raise RunAbort(
                EXIT_INVALID,
                f"{first[0]} cannot get its AI adapter: {first[1]}; nothing was run",
                help=first[2],
                details=tuple(f"{where}: {message}\n    fix: {fix}" for where, message, fix in problems[1:]),
            )
        self._mock_by_default = implicit_mock
        self._detected_by_default = implicit_detected

    def announce(self) -> None:
        """Say once, when the run has started, that the mock (or the adapter found in the
        environment) answers by default, if it will."""
        if self._noticed:
            return
        if self._mock_by_default:
            self._noticed = True
            self._notice(MOCK_NOTICE)
        elif self._detected_by_default:
            self._noticed = True
            self._notice(self.detected_notice())


def unhonoured_identity(chosen: str, step: ir.Step) -> list[str]:
    """The identity keys of an `ai-prompt` step that the built-in adapter `chosen` cannot
    honour (docs/running.md, "Agent identity"). A plugin's adapter is asked when the step runs."""
    from catalyst_dsl.runtime.actions.ai import IDENTITY

    honoured = {
        MOCK: MockAdapter.identity_keys,
        COMMAND: CommandAdapter.identity_keys,
        OPENAI: OpenAIAdapter.identity_keys,
    }.get(chosen)
    if honoured is None or step.action != "ai-prompt":
        return []
    return [key for key in IDENTITY if step.config.get(key) is not None and key not in honoured]


def _named(step: ir.Step) -> str:
    where = f" (line {step.span.line})" if step.span is not None else ""
    return f"step {step.name or step.action}{where}"
