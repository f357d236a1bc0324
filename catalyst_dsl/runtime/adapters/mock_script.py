"""The mock AI adapter's script files: a list of entries, each one scripted answer.

Kept apart from mock.py, which every run with AI steps imports: only a run whose mock is given a
script reads one. `ScriptEntry` is still an attrs class, for the validators cattrs runs
while it reads an entry (its errors name the entry and the key).
"""

from __future__ import annotations

import functools
import json
import re
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from catalyst_dsl.runtime.adapters.interface import AI_ADAPTER_ERROR, SCRIPT_ENV, AdapterError

if TYPE_CHECKING:
    import cattrs


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
        given = [
            key
            for key, absent in (("response", None), ("json", _ABSENT), ("error", None))
            if getattr(self, key) is not absent
        ]
        if len(given) != 1:
            said = f"it has {' and '.join(given)}" if given else "it has none"
            raise ValueError(f"an entry needs exactly one of 'response', 'json' or 'error'; {said}")
        if self.error is not None and self.chunks != 1:
            raise ValueError("'chunks' splits a response; an 'error' entry has none")

    def text(self) -> str:
        if self.response is not None:
            return self.response
        return json.dumps(self.json, ensure_ascii=False)


def load_script(path: Path) -> list[ScriptEntry]:
    """The entries of a mock AI script; AdapterError naming the file and the problem."""

    def bad(
        problem: str, guidance: str = "a script is a list of entries {match, response | json | error, chunks, repeat}"
    ) -> AdapterError:
        return AdapterError(AI_ADAPTER_ERROR, f"mock AI script {path}: {problem}", guidance=guidance)

    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise bad(
            f"cannot be read: {exc.strerror or exc}", f"check the path, or unset {SCRIPT_ENV} / the 'script' option"
        ) from None
    except UnicodeDecodeError:
        raise bad("is not UTF-8 text") from None
    if path.suffix.lower() == ".json":
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise bad(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    else:
        from catalyst_dsl.syntax.pyyaml import yaml

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
    names = {
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }
    return names.get(type(value), type(value).__name__)


def _describe(exc: BaseException, _type: object) -> str:
    from cattrs.errors import ForbiddenExtraKeysError

    if isinstance(exc, ForbiddenExtraKeysError):
        from catalyst_dsl.diagnostics.suggest import suggest

        keys = [f.name for f in attrs.fields(ScriptEntry)]
        unknown = sorted(exc.extra_fields)
        hint = suggest(unknown[0], keys) if len(unknown) == 1 else None
        return f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)}" + (
            f" ({hint})" if hint else f" (keys: {', '.join(keys)})"
        )
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
