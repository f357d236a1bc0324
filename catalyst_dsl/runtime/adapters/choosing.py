"""Which adapter a step gets: its `provider`, else the first installed adapter of the
precedence, else the mock; never a silent fallback from one configured but unusable.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from catalyst_dsl.runtime.adapters.interface import (
    AI_ADAPTER_UNAVAILABLE,
    MOCK,
    AdapterError,
    AdapterFactory,
    AIAdapter,
    Unusable,
)
from catalyst_dsl.runtime.adapters.mock import MockAdapter


def choose_adapter(
    name: str | None,
    precedence: Sequence[str],
    available: Mapping[str, AdapterFactory],
    unusable: Mapping[str, Unusable] | None = None,
) -> str:
    """The name of the adapter a step gets: its explicit `provider`, else the first installed
    adapter of the precedence, else (when the precedence is empty: nothing configured) the mock.

    Never a silent fallback: a provider or a precedence entry that is configured but
    `unusable` is an AdapterError with the fix, and so is a precedence none of whose
    adapters is installed. Only plugin adapters missing from this machine are skipped.
    """
    unusable = {} if unusable is None else unusable
    if name is not None:
        if name == MOCK:
            return MOCK
        if name in unusable:
            raise AdapterError(
                AI_ADAPTER_UNAVAILABLE,
                f"AI provider '{name}' cannot be used: {unusable[name].problem}",
                guidance=unusable[name].fix,
            )
        if name not in available:
            from catalyst_dsl.dialects.values import suggest

            known = sorted({*available, MOCK} - set(unusable))
            hint = suggest(name, known)
            raise AdapterError(
                AI_ADAPTER_UNAVAILABLE,
                f"AI provider '{name}' is not available; available: {', '.join(known)}",
                guidance=hint or "install the plugin that provides it, or choose an available provider",
            )
        return name
    for candidate in precedence:
        if candidate == MOCK:
            return MOCK
        if candidate in unusable:
            why = unusable[candidate]
            raise AdapterError(
                AI_ADAPTER_UNAVAILABLE,
                f"the AI adapter '{candidate}' (ai-adapters) cannot be used: {why.problem}",
                guidance=f"{why.fix}; or remove it from ai-adapters",
            )
        if candidate in available:
            return candidate
    if precedence:
        raise AdapterError(
            AI_ADAPTER_UNAVAILABLE,
            f"none of the AI adapters of the ai-adapters setting is installed: {', '.join(precedence)}",
            guidance="install the plugin that provides one, or fix ai-adapters in catalyst.toml "
            "(built in: command, openai, and mock for the deterministic answers)",
        )
    return MOCK


def select_adapter(
    name: str | None,
    precedence: Sequence[str],
    available: Mapping[str, AdapterFactory],
    *,
    options: Mapping[str, object] | None = None,
    unusable: Mapping[str, Unusable] | None = None,
) -> AIAdapter:
    """The adapter for a step, chosen by `choose_adapter`. `options` go to the factory."""
    options = {} if options is None else options
    chosen = choose_adapter(name, precedence, available, unusable)
    factory = available.get(chosen)
    if factory is None:  # the mock, not overridden by the caller
        return MockAdapter()
    try:
        adapter = factory(options)
    except AdapterError:
        raise
    except Exception as exc:  # a plugin's bug or missing setup; the step fails, the run does not crash
        raise AdapterError(
            AI_ADAPTER_UNAVAILABLE, f"AI provider '{chosen}' failed to start: {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(getattr(adapter, "invoke", None)):
        raise AdapterError(
            AI_ADAPTER_UNAVAILABLE, f"AI provider '{chosen}' gave {type(adapter).__name__}, which has no invoke()"
        )
    return adapter
