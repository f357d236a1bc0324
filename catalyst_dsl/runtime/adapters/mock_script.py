"""The mock AI adapter's script files: a list of entries, each one scripted answer.

Kept apart from mock.py, which every run with AI steps imports: only a run whose mock is given a
script reads one. A script is read by the package's one reader of records
(catalyst_dsl._internal.serialization) in YAML's words: every problem names its entry and key.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from catalyst_dsl._internal.records import record
from catalyst_dsl._internal.serialization import YAML_WORDS, Format, Invalid, unknown_keys
from catalyst_dsl.runtime.adapters.interface import AI_ADAPTER_ERROR, SCRIPT_ENV, AdapterError


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT: Any = _Absent()
_PASCAL = re.compile(r"[A-Z][A-Za-z0-9]*")


@record
class ScriptEntry:
    """One scripted answer: used for the first prompt `match` finds, once unless `repeat`."""

    match: re.Pattern[str] | None = None
    response: str | None = None
    json: Any = _ABSENT
    chunks: int = 1
    error: str | None = None
    repeat: bool = False

    def problem(self) -> str | None:
        """What is wrong with an entry whose every field has its type, or None."""
        if self.chunks < 1:
            return f"'chunks' is {self.chunks}; it must be at least 1"
        if self.error is not None and not _PASCAL.fullmatch(self.error):
            return f"'error' is {self.error!r}; it must be a PascalCase error code such as RateLimitExceeded"
        given = [
            key
            for key, absent in (("response", None), ("json", _ABSENT), ("error", None))
            if getattr(self, key) is not absent
        ]
        if len(given) != 1:
            said = f"it has {' and '.join(given)}" if given else "it has none"
            return f"an entry needs exactly one of 'response', 'json' or 'error'; {said}"
        if self.error is not None and self.chunks != 1:
            return "'chunks' splits a response; an 'error' entry has none"
        return None

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
        raise bad(f"must be a list of entries, not {YAML_WORDS.kind(document)}")
    for index, item in enumerate(document, start=1):
        if not isinstance(item, dict):
            raise bad(f"entry {index} must be a mapping, not {YAML_WORDS.kind(item)}")
    try:
        return _format().structure(document, list[ScriptEntry])
    except Invalid as exc:
        raise bad("; ".join(map(_located, exc.problems))) from None


def _located(problem: tuple[str, tuple]) -> str:
    """A problem of `[index, key]` as `entry 1, 'chunks': text` (entries count from 1)."""
    text, path = problem
    if not path:
        return text
    index, *key = path
    return f"entry {index + 1}{f', {key[0]!r}' if key else ''}: {text}"


def _unknown(unknown: list[str], known: list[str]) -> str:
    """Unknown keys, with the key one of them was most likely meant to be, or all of them."""
    from catalyst_dsl.diagnostics.suggest import suggest

    hint = suggest(unknown[0], known) if len(unknown) == 1 else None
    return unknown_keys(unknown, known) + (f" ({hint})" if hint else f" (keys: {', '.join(known)})")


def _pattern(value: object) -> re.Pattern[str]:
    if not isinstance(value, str):
        raise TypeError(f"expected a regular expression string, got {YAML_WORDS.kind(value)}")
    try:
        return re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None


@functools.cache
def _format() -> Format:
    """Scripts as the package reads records, in YAML's words: field names as keys, nothing
    loose, each entry checked once its fields read (`ScriptEntry.problem`)."""
    return Format(words=YAML_WORDS, unknown=_unknown, check=ScriptEntry.problem, leaves={re.Pattern: (None, _pattern)})
