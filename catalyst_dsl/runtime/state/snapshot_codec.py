"""A run snapshot as a file's bytes and back: strict JSON, and every damage named.

Saving: one key per line and one journal entry per line, so files stay readable and
diffable; the journal is encoded once per entry (`JournalCache`), so a save costs about
the same after step 1,000 as after step 1.

Loading never shows a traceback: any problem with a file (not UTF-8, truncated, not JSON,
another format version, a wrong type, an unknown key, a journal that contradicts itself)
is a `Damaged` whose problems read `text @ $.json.path`, with the keys the file has
(`$.steps[3].attempts`). The store turns it into a message naming the file and how to
recover.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, Callable

from catalyst_dsl._internal import records
from catalyst_dsl._internal.serialization import JSON_WORDS, Format, Invalid, camel
from catalyst_dsl.runtime.state.integrity import results, seal
from catalyst_dsl.runtime.machine import parse_time
from catalyst_dsl.runtime.state.snapshot import FORMAT, VERSION, RunState, StepRecord


# -- (de)serialization: one strict format ----------------------------------------------

#: A field's key in the file (integrity/guard.py names a journal entry's keys with it too).
_camel = camel


@functools.cache
def converter() -> Format:
    """The one format between `RunState` and JSON data: camelCase keys, nothing loose."""
    return Format(camel_case=True, positions=True)


_ONE_PER_LINE = frozenset({"steps", "approvals", "failures"})
# ensure_ascii: text from commands may hold lone surrogates, which UTF-8 cannot encode;
# escaped, every snapshot is ASCII and always writable. No `indent`: it disables the C
# encoder (several times slower); one key per line and one journal entry per line keep
# the file readable and diffable instead.
_to_json = json.JSONEncoder(ensure_ascii=True).encode


class JournalCache:
    """Each journal entry encoded once, so that neither a journal record (journal/) nor a
    full snapshot encodes again what an earlier save of the run already did.

    Entries are kept by the identity of their `StepRecord`: a step record never changes
    once it is in the journal (a step run again gets a new record), so an entry's text and
    its seal digest (integrity/seal.py) hold for as long as the record is in the journal,
    wherever it moves. The digest is worked out only when a full snapshot needs it. `text`
    keeps only the records of the journal it is given.

    `spill(data) -> sha256`, when given, keeps a result whose JSON is over
    `results.LIMIT` bytes outside the snapshot; the entry then holds its hash.
    """

    def __init__(self, spill: Callable[[bytes], str] | None = None) -> None:
        self._spill = spill
        #: id(record) -> [record, entry, its data, digest or None]; the record is kept so
        #: that its id stays its own.
        self._known: dict[int, list] = {}

    def _known_of(self, record: StepRecord) -> list:
        known = self._known.get(id(record))
        if known is None or known[0] is not record:
            known = self._known[id(record)] = [record, *self._encode(record), None]
        return known

    def entry(self, record: StepRecord) -> str:
        """The entry's JSON text."""
        return self._known_of(record)[1]

    def text(self, journal: list[StepRecord]) -> str:
        """The journal's entries as the snapshot file writes them; forgets the records that left it."""
        known = [self._known_of(record) for record in journal]
        if len(self._known) > len(journal):
            self._known = {id(each[0]): each for each in known}
        return ",\n  ".join(each[1] for each in known)

    def digests(self, journal: list[StepRecord]) -> list[str]:
        """Each entry's seal digest."""
        found = []
        for record in journal:
            known = self._known_of(record)
            if known[3] is None:
                known[3] = seal.entry_digest([_to_json(value) for value in known[2].values()])
            found.append(known[3])
        return found

    def _encode(self, record: StepRecord) -> tuple[str, dict[str, Any]]:
        """The entry's text, and its data (for its digest, worked out when a snapshot needs it)."""
        data = converter().unstructure(record)
        if self._spill is not None and data["result"] is not None:
            result = _to_json(data["result"])
            if len(result) > results.LIMIT:
                data["resultBlob"] = self._spill(result.encode("ascii"))
                data["result"] = None
        return _to_json(data), data

    def forget(self) -> None:
        self._known = {}


def encode(state: RunState, cache: JournalCache | None = None) -> bytes:
    """The file's bytes for `state`, unsealed (see `encode_parts` for what the store saves)."""
    body, _ = encode_parts(state, cache)
    return (body + "\n}\n").encode("ascii")


#: The lists of a snapshot that only grow (journal/delta.py), by their keys in the file.
GROWING = frozenset({"steps", "approvals", "failures", "trustedEdits"})


def encode_parts(
    state: RunState, cache: JournalCache | None = None, texts: dict[str, str] | None = None
) -> tuple[str, dict[str, Any]]:
    """The file's text up to its last value (the seal goes after it), and the seal's field digests.

    A `cache` kept across one run's saves spares re-encoding its journal. `texts`, when
    given, receives the JSON of every other field, as `field_texts` writes it.
    """
    cache = cache or JournalCache()
    lines = []
    fields: dict[str, Any] = {}
    for key, value in converter().unstructure(records.replace(state, steps=[])).items():
        if key == "steps":
            lines.append(f'"{key}": [\n  ' + cache.text(state.steps) + "\n ]" if state.steps else f'"{key}": []')
            fields[key] = cache.digests(state.steps)
        elif key in _ONE_PER_LINE and value:
            encoded = list(map(_to_json, value))
            lines.append(f'"{key}": [\n  ' + ",\n  ".join(encoded) + "\n ]")
            fields[key] = list(map(seal.digest, encoded)) if key == "approvals" else seal.digest(_to_json(value))
        else:
            encoded_value = _to_json(value)
            lines.append(f'"{key}": {encoded_value}')
            fields[key] = [] if key == "approvals" else seal.digest(encoded_value)
            if texts is not None and key not in GROWING:
                texts[key] = encoded_value
    return "{\n " + ",\n ".join(lines), fields


def field_texts(state: RunState) -> dict[str, str]:
    """The JSON of each field of `state` but the growing lists, by key, as the file holds it."""
    plain = converter().unstructure(records.replace(state, steps=[], approvals=[], failures=[], trusted_edits=[]))
    return {key: _to_json(value) for key, value in plain.items() if key not in GROWING}


def seal_text(sealed: dict[str, Any]) -> str:
    """What follows the body of a sealed snapshot file: the seal, last, and the closing brace."""
    return _SEAL_MARK + _to_json(sealed) + "\n}\n"


_SEAL_MARK = f',\n "{seal.SEAL}": '


# -- reading files --------------------------------------------------------------------------


class Damaged(Exception):
    """A snapshot file that cannot be used: `problems` are `text @ $.path` lines, or
    sentences about the whole file ("is truncated: ...")."""

    def __init__(self, problems: list[str], name: str | None = None, version: int | None = None) -> None:
        super().__init__(problems[0])
        self.problems = problems
        #: The playbook name, when the file still tells it (for the help text).
        self.name = name
        self.version = version


class _NotFinite(ValueError):
    pass


def _refuse_constant(name: str):
    raise _NotFinite(name)


def _finite(text: str) -> float:
    """A JSON number with a fraction or exponent, refused when it is too large for a float
    (`1e999` reads as infinity, which no run writes and no JSON reader could read back)."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _NotFinite(text)
    return value


@records.record
class Sealed:
    """A snapshot as read, with what its seal is checked against (integrity/seal.py)."""

    state: RunState
    #: The seal as read; None when the file has none.
    seal: Any
    #: The file's bytes before the seal: what its MAC covers (the whole file when the
    #: seal is not last, written as `seal_text` writes it: then no MAC verifies).
    body: bytes


def read(path: Path) -> RunState:
    """The snapshot in `path`, or Damaged (FileNotFoundError when it is not there); its seal unchecked."""
    return read_sealed(path).state


def read_sealed(path: Path) -> Sealed:
    """The snapshot in `path` with its seal and sealed bytes; Damaged or FileNotFoundError as `read`."""
    document = read_document(path)
    return Sealed(structured(document.data, path, document.name), document.seal, document.body)


@records.record
class Document:
    """A snapshot file read as JSON data, before it is read as a `RunState` (`structured`):
    the run journal's records are folded into `data` first (journal/fold.py)."""

    #: The snapshot's JSON object, its seal taken out.
    data: dict
    #: The seal as read; None when the file has none.
    seal: Any
    #: What the seal's MAC covers (see `Sealed.body`).
    body: bytes
    #: The playbook name, when the file tells it (for help texts).
    name: str | None
    #: The file's size in bytes.
    size: int


def read_document(path: Path) -> Document:
    """The snapshot in `path` as data, its format and version checked; Damaged or
    FileNotFoundError as `read`."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Damaged([f"cannot be read: {exc.strerror or exc}"]) from None
    return parse_document(raw)


def parse_document(raw: bytes) -> Document:
    """A snapshot's bytes (from a file, or a shared store's row) as `read_document` reads them."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Damaged([f"is not UTF-8 text (byte {exc.start})"]) from None
    if not text.strip():
        raise Damaged(["is empty"])
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except _NotFinite as exc:
        raise Damaged([f"holds {exc.args[0]}, which is not a JSON number"]) from None
    except RecursionError:
        raise Damaged(["is nested too deeply to be a run snapshot"]) from None
    except json.JSONDecodeError as exc:
        # Snapshots end with their closing brace: without it the file was cut short
        # (a full disk, a copy interrupted), rather than edited wrong.
        if text.lstrip().startswith("{") and not text.rstrip().endswith("}"):
            last = text.rstrip().count("\n") + 1
            raise Damaged([f"is truncated: its JSON stops unfinished at line {last}"]) from None
        raise Damaged([f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"]) from None
    except ValueError as exc:  # an integer too long to convert, among others
        raise Damaged([f"is not a usable snapshot: {exc}"]) from None
    if type(data) is not dict:
        raise Damaged([f"does not hold a run snapshot: its JSON is {JSON_WORDS.kind(data)}, not an object"])
    found, body = _seal_of(text, data)
    playbook = data.get("playbook")
    name = playbook.get("name") if type(playbook) is dict and type(playbook.get("name")) is str else None
    if data.get("format") != FORMAT:
        raise Damaged(
            [
                f"is not a catalyst run snapshot: $.format is {json.dumps(data.get('format'))[:40]}"
                f", expected \"{FORMAT}\""
            ],
            name,
        )
    version = data.get("version")
    if type(version) is not int or version != VERSION:
        raise Damaged(
            [
                f"has snapshot format version {json.dumps(version)[:20]} at $.version;"
                f" this catalyst reads version {VERSION}"
            ],
            name,
            version if type(version) is int else None,
        )
    return Document(data, found, body, name, len(raw))


def structured(data: dict, path: Path, name: str | None = None) -> RunState:
    """Snapshot data (with the journal's records folded in) read as a `RunState`, every
    problem named by its JSON path; Damaged when any."""
    try:
        state = converter().structure(data, RunState)
    except Invalid as exc:
        raise Damaged(exc.lines(), name) from None
    problems = _inconsistencies(state, path)
    if problems:
        raise Damaged(problems, name)
    return state


def _seal_of(text: str, data: dict[str, Any]) -> tuple[Any, bytes]:
    """The seal (taken out of `data`) and the text before it, as bytes.

    A seal counts only as the last key, written exactly as `seal_text` writes it: then
    nothing after the sealed bytes can add to or override what they say.
    """
    whole = text.encode("utf-8", "surrogateescape")
    if seal.SEAL not in data:
        return None, whole
    found = data.pop(seal.SEAL)
    at = text.rfind(_SEAL_MARK)
    if at < 0 or text[at:] != seal_text(found):
        return found, whole
    return found, text[:at].encode("utf-8", "surrogateescape")


def _inconsistencies(state: RunState, path: Path) -> list[str]:
    """What a hand edit can break that types cannot see."""
    problems = []
    named = RUN_FILE.fullmatch(path.name)
    if named and named["id"] != state.run_id:
        problems.append(f"runId {json.dumps(state.run_id)} does not match the file name @ $.runId")
    for key in ("started_at", "updated_at", "ended_at"):
        value = getattr(state, key)
        if value is not None:
            try:
                parse_time(value)
            except ValueError:
                problems.append(f"{json.dumps(value)[:40]} is not an ISO 8601 time @ $.{camel(key)}")
    # Resume replays the journal by path, so a second record of one path would make it
    # ambiguous which outcome counts.
    first: dict[str, int] = {}
    for index, record in enumerate(state.steps):
        earlier = first.setdefault(record.path, index)
        if earlier != index:
            problems.append(
                f"the journal records step {record.path!r} twice (first at $.steps[{earlier}]) @ $.steps[{index}].path"
            )
    if state.finished:
        if state.in_flight is not None:
            problems.append(f"a {state.status} run has a step in flight @ $.inFlight")
        if state.ended_at is None:
            problems.append(f"a {state.status} run has no end time @ $.endedAt")
    elif state.ended_at is not None:
        problems.append(f"a {state.status} run has an end time @ $.endedAt")
    if state.status == "paused" and state.pause is None:
        problems.append("a paused run does not say what it waits for @ $.pause")
    return problems


#: A snapshot's file name (or its backup's), which holds the run id.
RUN_FILE = re.compile(r"run-(?P<id>.+?)\.json(?:\.bak)?")
