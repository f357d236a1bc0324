"""AI adapters: the interface `ai-prompt` talks to, the scripted mock, and which one a step gets.

An adapter streams text chunks for a prompt; `collect` joins them while passing each one
on (to the log, as it arrives). The mock is the default when no adapter is configured:
it never leaves the machine and answers the same prompt the same way, so runs and tests
are reproducible. The real ones are built in (`ai_adapters.py`) or come as plugins
(`catalyst.adapters` entry points); one that is configured but unusable is an error, never
a quiet switch to the mock.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Protocol, Sequence, runtime_checkable

import attrs

from catalyst_dsl.runtime.errors import StepError

if TYPE_CHECKING:
    import cattrs

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

class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT: Any = _Absent()
_PASCAL = re.compile(r"[A-Z][A-Za-z0-9]*")


@attrs.frozen
class ScriptEntry:
    """One scripted answer: used for the first prompt `match` finds, once unless `repeat`."""

    match: re.Pattern[str] | None = None
    response: str | None = None
    json: Any = _ABSENT
    chunks: int = attrs.field(default=1)
    error: str | None = attrs.field(default=None)
    repeat: bool = False

    @chunks.validator
    def _positive(self, _attribute, value: int) -> None:
        if value < 1:
            raise ValueError(f"'chunks' is {value}; it must be at least 1")

    @error.validator
    def _pascal(self, _attribute, value: str | None) -> None:
        if value is not None and not _PASCAL.fullmatch(value):
            raise ValueError(f"'error' is {value!r}; it must be a PascalCase error code such as RateLimitExceeded")

    def __attrs_post_init__(self) -> None:
        given = [key for key, absent in (("response", None), ("json", _ABSENT), ("error", None)) if getattr(self, key) is not absent]
        if len(given) != 1:
            said = f"it has {' and '.join(given)}" if given else "it has none"
            raise ValueError(f"an entry needs exactly one of 'response', 'json' or 'error'; {said}")
        if self.error is not None and self.chunks != 1:
            raise ValueError("'chunks' splits a response; an 'error' entry has none")

    def text(self) -> str:
        if self.response is not None:
            return self.response
        return json.dumps(self.json, ensure_ascii=False)


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
        raise AdapterError(AI_ADAPTER_ERROR, f"no unused entry of the mock AI script {self.path} matches the prompt: {_first_line(prompt)!r}",
                           guidance="add an entry whose 'match' finds this prompt, or mark an entry 'repeat: true'")


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

    def __init__(self, script: str | os.PathLike[str] | None = None, *, root: str | os.PathLike[str] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
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
                script = self._scripts[path] = _Script(path, load_script(path))
            entry = script.take(prompt)
        if entry.error is not None:
            raise AdapterError(entry.error, f"scripted error from the mock AI script {path}", metadata={"script": str(path)})
        return iter(split(entry.text(), entry.chunks))

    def _script_path(self, options: Mapping[str, object]) -> Path | None:
        chosen = options.get("script")
        if chosen is not None:
            if not isinstance(chosen, str) or not chosen:
                raise AdapterError(AI_ADAPTER_ERROR, f"the mock adapter's 'script' option must be a file path, not {chosen!r}")
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


def load_script(path: Path) -> list[ScriptEntry]:
    """The entries of a mock AI script; AdapterError naming the file and the problem."""

    def bad(problem: str, guidance: str = "a script is a list of entries {match, response | json | error, chunks, repeat}") -> AdapterError:
        return AdapterError(AI_ADAPTER_ERROR, f"mock AI script {path}: {problem}", guidance=guidance)

    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise bad(f"cannot be read: {exc.strerror or exc}", f"check the path, or unset {SCRIPT_ENV} / the 'script' option") from None
    except UnicodeDecodeError:
        raise bad("is not UTF-8 text") from None
    if path.suffix.lower() == ".json":
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise bad(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    else:
        import yaml

        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc)
            raise bad(f"invalid YAML{where}: {problem}") from None
    if document is None or document == []:
        raise bad("is empty")
    if not isinstance(document, list):
        raise bad(f"must be a list of entries, not {_kind(document)}")
    for index, item in enumerate(document, start=1):
        if not isinstance(item, dict):
            raise bad(f"entry {index} must be a mapping, not {_kind(item)}")
    import cattrs

    try:
        return _converter().structure(document, list[ScriptEntry])
    except cattrs.BaseValidationError as exc:
        problems = cattrs.transform_error(exc, format_exception=_describe)
        raise bad("; ".join(_locate(problem) for problem in problems)) from None


def _kind(value: object) -> str:
    names = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "a mapping"}
    return names.get(type(value), type(value).__name__)


def _describe(exc: BaseException, _type: object) -> str:
    from cattrs.errors import ForbiddenExtraKeysError

    if isinstance(exc, ForbiddenExtraKeysError):
        from catalyst_dsl.dialects.values import suggest

        keys = [f.name for f in attrs.fields(ScriptEntry)]
        unknown = sorted(exc.extra_fields)
        hint = suggest(unknown[0], keys) if len(unknown) == 1 else None
        return f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)}" + (f" ({hint})" if hint else f" (keys: {', '.join(keys)})")
    if isinstance(exc, re.error):
        return f"not a valid regular expression: {exc}"
    return str(exc)


def _locate(problem: str) -> str:
    """`message @ $[0].chunks` as `entry 1: message`."""
    found = re.fullmatch(r"(.*) @ \$\[(\d+)\](?:\.(\w+))?", problem, re.DOTALL)
    if found is None:
        return problem
    message, index, key = found.groups()
    return f"entry {int(index) + 1}{f', {key!r}' if key else ''}: {message}"


def _strict(kind: type, word: str):
    def hook(value: object, _type: object) -> object:
        if type(value) is not kind:
            raise TypeError(f"expected {word}, got {_kind(value)}")
        return value

    return hook


def _pattern(value: object, _type: object) -> re.Pattern[str]:
    if not isinstance(value, str):
        raise TypeError(f"expected a regular expression string, got {_kind(value)}")
    return re.compile(value)


@functools.cache
def _converter() -> cattrs.Converter:
    import cattrs

    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(str, _strict(str, "a string"))
    conv.register_structure_hook(int, _strict(int, "an integer"))
    conv.register_structure_hook(bool, _strict(bool, "true or false"))
    conv.register_structure_hook_func(lambda t: t is re.Pattern or typing.get_origin(t) is re.Pattern, _pattern)
    conv.register_structure_hook_func(lambda t: t is Any, lambda value, _: value)
    return conv


# --- choosing an adapter -------------------------------------------------------------------

@attrs.frozen
class Unusable:
    """Why an adapter the settings configure cannot be used, and where to fix that."""

    problem: str
    fix: str


def choose_adapter(name: str | None, precedence: Sequence[str], available: Mapping[str, AdapterFactory],
                   unusable: Mapping[str, Unusable] | None = None) -> str:
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
            raise AdapterError(AI_ADAPTER_UNAVAILABLE, f"AI provider '{name}' cannot be used: {unusable[name].problem}", guidance=unusable[name].fix)
        if name not in available:
            from catalyst_dsl.dialects.values import suggest

            known = sorted({*available, MOCK} - set(unusable))
            hint = suggest(name, known)
            raise AdapterError(AI_ADAPTER_UNAVAILABLE, f"AI provider '{name}' is not available; available: {', '.join(known)}",
                               guidance=hint or "install the plugin that provides it, or choose an available provider")
        return name
    for candidate in precedence:
        if candidate == MOCK:
            return MOCK
        if candidate in unusable:
            why = unusable[candidate]
            raise AdapterError(AI_ADAPTER_UNAVAILABLE, f"the AI adapter '{candidate}' (ai-adapters) cannot be used: {why.problem}",
                               guidance=f"{why.fix}; or remove it from ai-adapters")
        if candidate in available:
            return candidate
    if precedence:
        raise AdapterError(AI_ADAPTER_UNAVAILABLE, f"none of the AI adapters of the ai-adapters setting is installed: {', '.join(precedence)}",
                           guidance="install the plugin that provides one, or fix ai-adapters in catalyst.toml "
                                    "(built in: command, openai, and mock for the deterministic answers)")
    return MOCK


def select_adapter(name: str | None, precedence: Sequence[str], available: Mapping[str, AdapterFactory], *,
                   options: Mapping[str, object] | None = None, unusable: Mapping[str, Unusable] | None = None) -> AIAdapter:
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
        raise AdapterError(AI_ADAPTER_UNAVAILABLE, f"AI provider '{chosen}' failed to start: {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(adapter, "invoke", None)):
        raise AdapterError(AI_ADAPTER_UNAVAILABLE, f"AI provider '{chosen}' gave {type(adapter).__name__}, which has no invoke()")
    return adapter
