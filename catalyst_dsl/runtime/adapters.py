"""AI adapters: the interface `ai-prompt` talks to, the scripted mock, and which one a step gets.

An adapter streams text chunks for a prompt; `collect` joins them while passing each one
on (to the log, as it arrives). The mock is the default when no adapter is configured:
it never leaves the machine and answers the same prompt the same way, so runs and tests
are reproducible. The real ones are built in (`ai_adapters.py`) or come as plugins
(`catalyst.adapters` entry points); one that is configured but unusable is an error, never
a quiet switch to the mock.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from catalyst_dsl.records import record
from catalyst_dsl.runtime.errors import StepError

if TYPE_CHECKING:
    from catalyst_dsl.runtime.mock_script import ScriptEntry

AI_ADAPTER_ERROR = "AIAdapterError"
AI_ADAPTER_UNAVAILABLE = "AIAdapterUnavailable"

MOCK = "mock"
SCRIPT_ENV = "CATALYST_MOCK_AI_SCRIPT"


@runtime_checkable
class AIAdapter(Protocol):
    name: str

    def invoke(self, prompt: str, tools: Sequence[str], options: Mapping[str, object]) -> Iterator[str]:
        """Stream the answer to `prompt` as text chunks; raise AdapterError on failure."""
        ...


#: Makes an adapter from the step's options (provider settings, model, ...).
AdapterFactory = Callable[[Mapping[str, object]], AIAdapter]


class AdapterError(StepError):
    """An AI adapter failed (`AIAdapterError`, or a scripted code) or is missing (`AIAdapterUnavailable`)."""


def collect(chunks: Iterator[str], on_chunk: Callable[[str], None] | None = None) -> str:
    """The whole answer of a stream, calling `on_chunk` with each chunk as it arrives."""
    parts = []
    for chunk in chunks:
        if not isinstance(chunk, str):
            raise AdapterError(AI_ADAPTER_ERROR, f"the AI adapter sent {type(chunk).__name__} instead of text")
        if on_chunk is not None:
            on_chunk(chunk)
        parts.append(chunk)
    return "".join(parts)


# --- the mock ----------------------------------------------------------------------------


def split(text: str, parts: int) -> list[str]:
    """`text` in `parts` consecutive pieces whose lengths differ by at most one."""
    size, extra = divmod(len(text), parts)
    pieces, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


class _Script:
    """A loaded script and which of its entries are spent."""

    def __init__(self, path: Path, entries: list[ScriptEntry]) -> None:
        self.path = path
        self.entries = entries
        self.spent = [False] * len(entries)

    def take(self, prompt: str) -> ScriptEntry:
        for index, entry in enumerate(self.entries):
            if self.spent[index] or (entry.match is not None and not entry.match.search(prompt)):
                continue
            self.spent[index] = not entry.repeat
            return entry
        raise AdapterError(
            AI_ADAPTER_ERROR,
            f"no unused entry of the mock AI script {self.path} matches the prompt: {_first_line(prompt)!r}",
            guidance="add an entry whose 'match' finds this prompt, or mark an entry 'repeat: true'",
        )


class MockAdapter:
    """The deterministic default adapter, optionally scripted from a YAML or JSON file.

    The script is `options["script"]`, else `$CATALYST_MOCK_AI_SCRIPT`, else the project
    setting given here. Relative paths from options and settings are taken from `root`;
    the environment's from the working directory, as a shell would.
    """

    name = MOCK
    #: A stand-in for any agent: it has no agents, skills or profiles to tell apart and reads
    #: nothing, so every identity key holds for it (the run says once that the mock answers).
    identity_keys = frozenset({"command", "agent", "skill", "profile", "readPaths", "skills"})

    def __init__(
        self,
        script: str | os.PathLike[str] | None = None,
        *,
        root: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._setting = script
        self._root = Path(root) if root is not None else None
        self._environ = os.environ if environ is None else environ
        self._scripts: dict[Path, _Script] = {}
        # Steps in a `parallel` block share the adapter; an entry is taken once.
        self._lock = threading.Lock()

    def invoke(self, prompt: str, tools: Sequence[str], options: Mapping[str, object]) -> Iterator[str]:
        path = self._script_path(options)
        if path is None:
            return iter([f"mock answer to: {_first_line(prompt)}"])
        with self._lock:
            script = self._scripts.get(path)
            if script is None:
                from catalyst_dsl.runtime.mock_script import load_script

                script = self._scripts[path] = _Script(path, load_script(path))
            entry = script.take(prompt)
        if entry.error is not None:
            raise AdapterError(
                entry.error, f"scripted error from the mock AI script {path}", metadata={"script": str(path)}
            )
        return iter(split(entry.text(), entry.chunks))

    def _script_path(self, options: Mapping[str, object]) -> Path | None:
        chosen = options.get("script")
        if chosen is not None:
            if not isinstance(chosen, str) or not chosen:
                raise AdapterError(
                    AI_ADAPTER_ERROR, f"the mock adapter's 'script' option must be a file path, not {chosen!r}"
                )
            return self._from_root(chosen)
        if self._environ.get(SCRIPT_ENV):
            return Path(self._environ[SCRIPT_ENV]).absolute()
        if self._setting is not None:
            return self._from_root(self._setting)
        return None

    def _from_root(self, path: str | os.PathLike[str]) -> Path:
        return ((self._root or Path.cwd()) / path).absolute()


def _first_line(prompt: str) -> str:
    """The prompt's first line that is not blank, whole: a test that checks what was sent
    must see all of it, however long."""
    return next((line.strip() for line in prompt.splitlines() if line.strip()), "")


# --- choosing an adapter -------------------------------------------------------------------


@record
class Unusable:
    """Why an adapter the settings configure cannot be used, and where to fix that."""

    problem: str
    fix: str


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
