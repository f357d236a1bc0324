"""The run snapshot (`RunState`) and the store that keeps it on disk, crash-safe.

A run saves its snapshot after every step, so the store's promises are:

- **Atomic saves.** Each save writes a temporary file in the same directory, fsyncs it,
  `os.replace`s it onto `run-{id}.json` and fsyncs the directory: a reader (or a resume
  after `kill -9` or a power cut) sees the old snapshot or the new one, never a mix.
- **One backup.** Before each save the current file is hard-linked to
  `run-{id}.json.bak`, so the backup is always the snapshot before the latest save. A
  link and a rename cost two syscalls, no copy, so it is kept at every save rather than
  only at checkpoints: the newest good copy is the most useful one after a bad edit.
  Where hard links are unsupported no backup is kept.
- **Friendly, unique ids** (`20261121-143012-create-feature-001`): local date and time of
  `startedAt`, playbook name, the first free 3-digit index. A run claims its id by
  hard-linking its first, complete snapshot to the final name: the link fails when the
  name exists, so two runs started in the same second never share an id and the file is
  never seen empty.
- **Loading never shows a traceback.** Any problem with a file (missing, truncated, not
  JSON, another format version, a wrong type, an unknown key, a journal that contradicts
  itself) is a `RunAbort(EXIT_STATE)` naming the file, the JSON path (`$.steps[3].attempts`)
  and how to recover.

Invariants a loaded snapshot must keep (the interpreter keeps them too): the journal
records each step path once (a step re-run on resume is not recorded again); a finished run
(completed, failed, cancelled) has `endedAt` and nothing in flight, an unfinished one no
`endedAt`; a paused run says what it waits for (`pause`); `runId` matches the file name.

Finished runs move to `history/YYYY/MM/DD/` (the date in the run id), which carries a
`.gitignore` of `*`. Retention (`prune`) only ever touches that history.
"""

from __future__ import annotations

import functools
import getpass
import json
import os
import re
import secrets
import socket
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

import attrs

from catalyst_dsl.runtime.errors import EXIT_STATE, RunAbort

if TYPE_CHECKING:
    import cattrs

FORMAT = "catalyst-run"
VERSION = 1

RunStatus = Literal["running", "paused", "completed", "failed", "cancelled"]
FINISHED = frozenset({"completed", "failed", "cancelled"})


# -- the snapshot model -------------------------------------------------------------------
# Mutable on purpose: the interpreter updates one RunState in place and saves it.
# Fields have no defaults where a missing key in a file would lose information (an
# absent `steps` must not read as "nothing done yet").


@attrs.define(kw_only=True)
class PlaybookRef:
    name: str
    #: Project-relative, POSIX separators.
    file: str
    #: The interpreter's hash of the playbook, to refuse resuming a changed one.
    fingerprint: str


@attrs.define(kw_only=True)
class Owner:
    pid: int
    host: str
    user: str


@attrs.define(kw_only=True)
class StepRecord:
    #: Where the step sits in the playbook ("steps/2/then/0"); opaque to the store.
    path: str
    name: str | None
    action: str
    status: Literal["completed", "failed", "skipped"]
    attempts: int
    started_at: str
    #: Seconds.
    duration: float
    result: Any = None
    reason: str | None = None
    fingerprint: str | None = None


@attrs.define(kw_only=True)
class Pause:
    path: str
    message: str
    roles: list[str]
    options: list[Any]
    since: str
    #: "checkpoint" and "inquire" wait for an approval; "suspend" only for `resume`.
    kind: Literal["checkpoint", "inquire", "suspend"] = "checkpoint"


@attrs.define(kw_only=True)
class Approval:
    path: str
    #: None for approvals that name no role: ENTER on a terminal, autonomous mode.
    role: str | None
    by: str
    at: str
    comment: str | None
    via: Literal["terminal", "cli", "token", "autonomous"]
    #: False when the role may not release the checkpoint: recorded, not effective.
    released: bool
    #: The option chosen at a checkpoint that offers options.
    selected: Any = None
    #: "approve", "request-changes" or "comment" (LANGUAGE.md section 6).
    decision: Literal["approve", "request-changes", "comment"] = "approve"
    #: The nonce of the approval token that brought it: a token is used once.
    token: str | None = None


@attrs.define(kw_only=True)
class Failure:
    code: str
    message: str
    #: None for a failure of the run itself rather than of one step.
    step: str | None
    attempt: int
    #: Seconds.
    duration: float
    at: str


@attrs.define(kw_only=True)
class Cancel:
    by: str
    reason: str
    at: str


@attrs.define(kw_only=True)
class RunState:
    format: Literal["catalyst-run"] = FORMAT
    version: Literal[1] = VERSION
    #: Empty until `StateStore.create` claims one.
    run_id: str
    playbook: PlaybookRef
    status: RunStatus
    mode: Literal["manual", "autonomous"]
    #: Secret values are already placeholders when they get here.
    inputs: dict[str, Any]
    secret_inputs: list[str]
    started_at: str
    updated_at: str
    ended_at: str | None
    owner: Owner
    #: The journal, in completion order.
    steps: list[StepRecord]
    #: The path of the step running now: set before it starts, cleared when recorded.
    in_flight: str | None
    pause: Pause | None
    approvals: list[Approval]
    failures: list[Failure]
    outputs: dict[str, Any] | None
    cancel: Cancel | None
    #: What the run may write, recorded for audit.
    permissions: dict[str, Any]
    locks: list[str]
    #: What ended a failed run.
    error: Failure | None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


@attrs.frozen
class RunSummary:
    """One line of `catalyst runs list`; `status` is "corrupt" for an unreadable file
    ("missing" for one archived or pruned while the list was made)."""

    run_id: str
    playbook: str | None
    status: str
    started_at: str | None
    updated_at: str | None
    file: Path
    archived: bool
    #: Why the file could not be read, for corrupt ones.
    problem: str | None = None


def utc_now() -> str:
    """Now as the snapshot writes times: ISO 8601, UTC, milliseconds, `Z`."""
    return format_time(datetime.now(timezone.utc))


def format_time(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    """The inverse of `format_time`; ValueError for anything that is not an ISO time."""
    # Python 3.10's fromisoformat does not read `Z`.
    moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    return moment


def current_owner() -> Owner:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers) and no USER variable
        user = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return Owner(pid=os.getpid(), host=socket.gethostname(), user=user)


def new_run_state(
    playbook: PlaybookRef,
    *,
    mode: Literal["manual", "autonomous"] = "manual",
    inputs: dict[str, Any] | None = None,
    secret_inputs: list[str] | None = None,
    permissions: dict[str, Any] | None = None,
    locks: list[str] | None = None,
    started_at: str | None = None,
) -> RunState:
    """A fresh, running snapshot owned by this process; `StateStore.create` gives it an id."""
    now = started_at or utc_now()
    return RunState(
        run_id="",
        playbook=playbook,
        status="running",
        mode=mode,
        inputs=dict(inputs or {}),
        secret_inputs=list(secret_inputs or []),
        started_at=now,
        updated_at=now,
        ended_at=None,
        owner=current_owner(),
        steps=[],
        in_flight=None,
        pause=None,
        approvals=[],
        failures=[],
        outputs=None,
        cancel=None,
        permissions=dict(permissions or {}),
        locks=list(locks or []),
        error=None,
    )


def ensure_resumable(state: RunState) -> None:
    """Refuse to resume a run that is over, or that another live process is running."""
    if state.status in ("completed", "cancelled"):
        raise RunAbort(
            EXIT_STATE,
            f"run {state.run_id} is {state.status}; a {state.status} run cannot be resumed",
            help=f"start a new run with `catalyst run {state.playbook.name}`",
        )
    owner = state.owner
    # A paused run's process normally exits (code 4), but one waiting for ENTER on a
    # terminal is still there: resuming beside it would run the same steps twice.
    if owner.host == socket.gethostname() and owner.pid != os.getpid() and pid_alive(owner.pid):
        doing = "still running" if state.status == "running" else f"{state.status} and its process is still there"
        raise RunAbort(
            EXIT_STATE,
            f"run {state.run_id} is {doing} (process {owner.pid} on {owner.host})",
            help=f"wait for it to end or stop it with `catalyst cancel {state.run_id}`; if process {owner.pid} is not catalyst, its number was reused: stop the run with `catalyst cancel` and resume it",
        )


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host (True when we cannot tell)."""
    if pid <= 0:
        return False  # 0 and negatives name process groups, never a run
    if os.name == "nt":
        return True  # os.kill(pid, 0) would terminate the process on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # EPERM: it exists and belongs to someone else
    return True


# -- (de)serialization: one strict converter --------------------------------------------


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


@functools.cache
def _converter() -> cattrs.Converter:
    # Imported on first use: a process that never reads or writes a snapshot never pays for cattrs.
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
    from cattrs.preconf.json import make_converter

    conv = make_converter(forbid_extra_keys=True)

    def unstructure_factory(cls):
        return make_dict_unstructure_fn(cls, conv, **{f.name: override(rename=_camel(f.name)) for f in attrs.fields(cls)})

    def structure_factory(cls):
        plain = make_dict_structure_fn(
            cls, conv, _cattrs_forbid_extra_keys=True, **{f.name: override(rename=_camel(f.name)) for f in attrs.fields(cls)}
        )

        def structure(value, _):
            if type(value) is not dict:
                raise TypeError(f"expected an object, got {_kind(value)}")
            return plain(value, cls)

        return structure

    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    conv.register_structure_hook_factory(attrs.has, structure_factory)
    # Strict primitives: the default converter turns 1 into "1" for a str field.
    for kind in (str, int, float, bool):
        conv.register_structure_hook(kind, _strict(kind))
    conv.register_structure_hook_func(lambda t: get_origin(t) is Literal, _literal)
    # The default iterates any iterable, so "" would read as an empty journal.
    conv.register_structure_hook_factory(lambda t: get_origin(t) is list, lambda t: _list_of(conv, t))
    return conv


def _kind(value: object) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "an array", dict: "an object", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _strict(kind: type):
    word = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}[kind]

    def hook(value, _):
        if kind is float and type(value) is int:
            return float(value)
        if type(value) is not kind:
            raise TypeError(f"expected {word}, got {_kind(value)} {json.dumps(value)[:40]}")
        return value

    return hook


def _literal(value, literal):
    allowed = get_args(literal)
    # `type(...) is` so True is not read as 1.
    if not any(value == choice and type(value) is type(choice) for choice in allowed):
        raise ValueError(f"{json.dumps(value)[:40]} is not one of {', '.join(json.dumps(choice) for choice in allowed)}")
    return value


def _list_of(conv, list_type):
    from cattrs.errors import IterableValidationError, IterableValidationNote

    (item_type,) = get_args(list_type) or (Any,)

    def structure(value, _):
        if type(value) is not list:
            raise TypeError(f"expected an array, got {_kind(value)}")
        items, errors = [], []
        for index, item in enumerate(value):
            try:
                items.append(conv.structure(item, item_type))
            except Exception as exc:  # collected: every bad item is reported, with its index
                exc.__notes__ = [*getattr(exc, "__notes__", []), IterableValidationNote(f"Structuring item @ index {index}", index, item_type)]
                errors.append(exc)
        if errors:
            raise IterableValidationError(f"While structuring {list_type!r}", errors, list_type)
        return items

    return structure


def _problems(exc: BaseException, path: str = "$") -> list[str]:
    """`problem @ $.json.path` lines, with the file's camelCase keys.

    Like `cattrs.transform_error`, whose paths name Python attributes (`started_at`)
    rather than the keys the user sees in the file (`startedAt`).
    """
    from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError, IterableValidationNote

    if isinstance(exc, (ClassValidationError, IterableValidationError)):
        with_notes, without = exc.group_exceptions()
        lines = []
        for inner, note in with_notes:
            step = f"[{note.index!r}]" if isinstance(note, IterableValidationNote) else f".{_camel(note.name)}"
            lines.extend(_problems(inner, path + step))
        for inner in without:
            lines.extend(_problems(inner, path))
        return lines
    if isinstance(exc, KeyError):
        text = "required key missing"
    elif isinstance(exc, ForbiddenExtraKeysError):
        text = f"unknown key{'s' if len(exc.extra_fields) > 1 else ''} {', '.join(repr(k) for k in sorted(exc.extra_fields))}"
    elif isinstance(exc, AttributeError) and "items" in str(exc):
        text = "expected an object"  # a mapping field given something else
    else:
        text = str(exc)
    return [f"{text} @ {path}"]


_ONE_PER_LINE = frozenset({"steps", "approvals", "failures"})
# ensure_ascii: text from commands may hold lone surrogates, which UTF-8 cannot encode;
# escaped, every snapshot is ASCII and always writable. No `indent`: it disables the C
# encoder (several times slower); one key per line and one journal entry per line keep
# the file readable and diffable instead.
_encode = json.JSONEncoder(ensure_ascii=True).encode


class _JournalCache:
    """The encoded journal, so a save costs about the same after step 1,000 as after step 1.

    A journal only grows, and an entry never changes once appended: each is unstructured
    and encoded once, and the text of the journal so far is kept and extended. Any other
    change (a different state, an edited list) is noticed by identity and rebuilds it.
    """

    def __init__(self) -> None:
        self._records: list[StepRecord] = []
        self._text = ""

    def text(self, journal: list[StepRecord]) -> str:
        known = len(self._records)
        if known > len(journal) or (known and journal[known - 1] is not self._records[known - 1]):
            self.forget()
            known = 0
        fresh = journal[known:]
        if fresh:
            encoded = ",\n  ".join(_encode(_converter().unstructure(record)) for record in fresh)
            self._text = f"{self._text},\n  {encoded}" if self._text else encoded
            self._records.extend(fresh)
        return self._text

    def forget(self) -> None:
        self._records, self._text = [], ""


def _render(state: RunState, cache: _JournalCache | None = None) -> bytes:
    cache = cache or _JournalCache()
    lines = []
    for key, value in _converter().unstructure(attrs.evolve(state, steps=[])).items():
        if key == "steps":
            lines.append(f'"{key}": [\n  ' + cache.text(state.steps) + "\n ]" if state.steps else f'"{key}": []')
        elif key in _ONE_PER_LINE and value:
            lines.append(f'"{key}": [\n  ' + ",\n  ".join(map(_encode, value)) + "\n ]")
        else:
            lines.append(f'"{key}": {_encode(value)}')
    return ("{\n " + ",\n ".join(lines) + "\n}\n").encode("ascii")


# -- reading files --------------------------------------------------------------------------


class _Damaged(Exception):
    """A snapshot file that cannot be used: `problems` are `text @ $.path` lines, or
    sentences about the whole file ("is truncated: ...")."""

    def __init__(self, problems: list[str], name: str | None = None, version: int | None = None) -> None:
        super().__init__(problems[0])
        self.problems = problems
        #: The playbook name, when the file still tells it (for the help text).
        self.name = name
        self.version = version


def _read(path: Path) -> RunState:
    """The snapshot in `path`, or _Damaged (FileNotFoundError when it is not there)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _Damaged([f"cannot be read: {exc.strerror or exc}"]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Damaged([f"is not UTF-8 text (byte {exc.start})"]) from None
    if not text.strip():
        raise _Damaged(["is empty"])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # Snapshots end with their closing brace: without it the file was cut short
        # (a full disk, a copy interrupted), rather than edited wrong.
        if text.lstrip().startswith("{") and not text.rstrip().endswith("}"):
            last = text.rstrip().count("\n") + 1
            raise _Damaged([f"is truncated: its JSON stops unfinished at line {last}"]) from None
        raise _Damaged([f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"]) from None
    if type(data) is not dict:
        raise _Damaged([f"does not hold a run snapshot: its JSON is {_kind(data)}, not an object"])
    playbook = data.get("playbook")
    name = playbook.get("name") if type(playbook) is dict and type(playbook.get("name")) is str else None
    if data.get("format") != FORMAT:
        raise _Damaged([f"is not a catalyst run snapshot: $.format is {json.dumps(data.get('format'))[:40]}, expected \"{FORMAT}\""], name)
    version = data.get("version")
    if type(version) is not int or version != VERSION:
        raise _Damaged([f"has snapshot format version {json.dumps(version)[:20]} at $.version; this catalyst reads version {VERSION}"], name, version if type(version) is int else None)
    import cattrs

    try:
        state = _converter().structure(data, RunState)
    except cattrs.BaseValidationError as exc:
        raise _Damaged(_problems(exc), name) from None
    problems = _inconsistencies(state, path)
    if problems:
        raise _Damaged(problems, name)
    return state


def _inconsistencies(state: RunState, path: Path) -> list[str]:
    """What a hand edit can break that types cannot see."""
    problems = []
    named = _RUN_FILE.fullmatch(path.name)
    if named and named["id"] != state.run_id:
        problems.append(f"runId {json.dumps(state.run_id)} does not match the file name @ $.runId")
    for key in ("started_at", "updated_at", "ended_at"):
        value = getattr(state, key)
        if value is not None:
            try:
                parse_time(value)
            except ValueError:
                problems.append(f"{json.dumps(value)[:40]} is not an ISO 8601 time @ $.{_camel(key)}")
    # Resume replays the journal by path, so a second record of one path would make it
    # ambiguous which outcome counts.
    first: dict[str, int] = {}
    for index, record in enumerate(state.steps):
        earlier = first.setdefault(record.path, index)
        if earlier != index:
            problems.append(f"the journal records step {record.path!r} twice (first at $.steps[{earlier}]) @ $.steps[{index}].path")
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


_RUN_FILE = re.compile(r"run-(?P<id>.+?)\.json(?:\.bak)?")


# -- the store ---------------------------------------------------------------------------------


class StateStore:
    """Snapshots of runs under `state_dir` (the project's `.xe/runs` by default)."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self.history_dir = self.state_dir / "history"
        #: Kept by `locks.LockManager`; named here so the layout is written down once.
        self.locks_dir = self.state_dir / "locks"
        self._journal = _JournalCache()

    # -- paths

    def path_of(self, run_id: str) -> Path:
        if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith("."):
            raise ValueError(f"not a run id: {run_id!r}")
        return self.state_dir / f"run-{run_id}.json"

    def archived_path(self, run_id: str) -> Path:
        """Where a finished run is kept: history/YYYY/MM/DD/ of the date in its id."""
        day = _RUN_DAY.match(run_id)
        if day:
            year, month, date = day.groups()
        else:  # an id not made by `create`: today's directory
            year, month, date = datetime.now().strftime("%Y %m %d").split()
        return self.history_dir / year / month / date / f"run-{run_id}.json"

    def _find(self, run_id: str) -> Path | None:
        for candidate in (self.path_of(run_id), self.archived_path(run_id)):
            if candidate.exists():
                return candidate
        return next(self.history_dir.glob(f"*/*/*/run-{run_id}.json"), None) if self.history_dir.is_dir() else None

    # -- creating and saving

    def create(self, state: RunState) -> RunState:
        """Give `state` the first free id for its start time and playbook, and save it.

        The id is claimed by hard-linking the complete first snapshot to its final name,
        which fails if the name exists: no two runs share an id, however close they start.
        """
        prefix = f"{parse_time(state.started_at).astimezone():%Y%m%d-%H%M%S}-{_slug(state.playbook.name)}"
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        taken = {int(m["index"]) for m in map(_INDEXED.fullmatch, self._names_like(prefix)) if m}
        index = 1
        while True:
            while index in taken:
                index += 1
            taken.add(index)
            state.run_id = f"{prefix}-{index:03d}"
            state.updated_at = utc_now()
            target = self.path_of(state.run_id)
            if not _write(target, _render(state), exclusive=True):
                continue  # another run took this index a moment ago
            # A run with this id may have been archived between our listing and our
            # claim (a run of under a second): its live file was gone when we linked.
            if self.archived_path(state.run_id).exists():
                target.unlink()
                continue
            return state

    def _names_like(self, prefix: str) -> list[str]:
        """File names of live and archived runs whose id starts with `prefix`, without `.json`."""
        names = []
        for directory in (self.state_dir, self.archived_path(f"{prefix}-000").parent):
            try:
                names += [n[4:-5] for n in os.listdir(directory) if n.startswith(f"run-{prefix}-") and n.endswith(".json")]
            except FileNotFoundError:
                pass
        return [n[len(prefix) + 1 :] for n in names]

    def save(self, state: RunState) -> None:
        """Write the snapshot atomically (see the module docstring); sets `updated_at`."""
        state.updated_at = utc_now()
        target = self.path_of(state.run_id)
        try:
            _write(target, _render(state, self._journal), backup=target.with_name(target.name + ".bak"))
        except FileNotFoundError:
            # The state directory was removed under a running run: recreate it, once.
            self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            _write(target, _render(state, self._journal), backup=target.with_name(target.name + ".bak"))

    # -- loading

    def load(self, run_id_or_path: str) -> RunState:
        """A live or archived run by id (or a snapshot file by path); RunAbort(EXIT_STATE) on any problem."""
        given = str(run_id_or_path)
        if "/" in given or os.sep in given:
            path: Path | None = Path(given)
        elif given.endswith(".bak"):
            path = self.state_dir / given
        else:
            run_id = given.removeprefix("run-").removesuffix(".json")
            try:
                path = self._find(run_id)
            except ValueError:
                path = None
            if path is None:
                raise RunAbort(EXIT_STATE, f"there is no run {given!r} in {_display(self.state_dir)}", help="`catalyst runs list` shows the runs kept here")
        try:
            return _read(path)
        except FileNotFoundError:
            raise RunAbort(EXIT_STATE, f"there is no run snapshot {_display(path)}", help="`catalyst runs list` shows the runs kept here") from None
        except _Damaged as damage:
            raise self._abort(path, damage) from None

    def _abort(self, path: Path, damage: _Damaged) -> RunAbort:
        first, *rest = damage.problems
        named = _RUN_FILE.fullmatch(path.name)
        # The id holds the playbook name too, for when the file no longer tells it.
        from_id = _ID_NAME.fullmatch(named["id"]) if named else None
        name = damage.name or (from_id["name"] if from_id else "NAME")
        new_run = f"start a new run with `catalyst run {name}`"
        if damage.version is not None and damage.version > VERSION:
            help = f"a newer catalyst wrote it: resume it with that version, or {new_run}"
        else:
            help = f"{new_run}; the damaged file is kept for inspection"
            backup = path.with_name(path.name + ".bak") if not path.name.endswith(".bak") else None
            if backup is not None and named:
                try:
                    good = _read(backup)
                except (FileNotFoundError, _Damaged):
                    good = None
                if good is not None:
                    steps = f"{len(good.steps)} step{'' if len(good.steps) == 1 else 's'} recorded"
                    help = (
                        f"the last good copy is {_display(backup)} (saved {good.updated_at}, {steps}): "
                        f"copy it over {_display(path)} and resume, or {new_run}; the damaged file is kept for inspection"
                    )
        text, at, where = first.rpartition(" @ ")
        sentence = f"is damaged at {where}: {text}" if at else first
        return RunAbort(EXIT_STATE, f"the run snapshot {_display(path)} {sentence}", help=help, details=tuple(map(_located, rest)))

    # -- finishing

    def archive(self, state: RunState) -> Path:
        """Save a finished run and move it to history; returns its new path."""
        if not state.finished:
            raise ValueError(f"run {state.run_id} is {state.status}; only finished runs are archived")
        self.save(state)
        self._journal.forget()
        live = self.path_of(state.run_id)
        target = self.archived_path(state.run_id)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        ignore = self.history_dir / ".gitignore"
        if not ignore.exists():
            _write(ignore, b"# Finished catalyst runs: local records, kept out of git.\n*\n", mode=0o644)
        os.replace(live, target)  # atomic: the run is live or archived, never both nor neither
        _sync_dir(target.parent)
        _sync_dir(self.state_dir)
        live.with_name(live.name + ".bak").unlink(missing_ok=True)
        return target

    def reopen(self, state: RunState) -> None:
        """Move an archived run back among the live ones before resuming it (a failed run)."""
        archived = self.archived_path(state.run_id)
        if archived.exists():
            os.replace(archived, self.path_of(state.run_id))
            _sync_dir(self.state_dir)

    # -- listing, retention, audit

    def list(self, include_history: bool = True) -> list[RunSummary]:
        """Every run, newest first; unreadable files are listed as "corrupt"."""
        files = [(path, False) for path in self._live_files()]
        if include_history:
            files += [(path, True) for path in self._archived_files()]
        summaries = [self._summary(path, archived) for path, archived in files]
        # Ids begin with the local start time, so they sort by age.
        summaries.sort(key=lambda s: s.run_id, reverse=True)
        return summaries

    def _summary(self, path: Path, archived: bool) -> RunSummary:
        run_id = path.name[4:-5]
        try:
            state = _read(path)
        except FileNotFoundError:  # archived or pruned while we listed
            return RunSummary(run_id, None, "missing", None, None, path, archived, "the file went away while listing")
        except _Damaged as damage:
            return RunSummary(run_id, damage.name, "corrupt", None, None, path, archived, "; ".join(map(_located, damage.problems)))
        return RunSummary(state.run_id, state.playbook.name, state.status, state.started_at, state.updated_at, path, archived)

    def _live_files(self) -> list[Path]:
        try:
            names = os.listdir(self.state_dir)
        except FileNotFoundError:
            return []
        return [self.state_dir / n for n in names if n.startswith("run-") and n.endswith(".json")]

    def _archived_files(self) -> list[Path]:
        if not self.history_dir.is_dir():
            return []
        return [p for p in self.history_dir.glob("*/*/*/run-*.json") if p.is_file()]

    def prune(self, *, keep_days: int | None, keep_last: int | None, dry_run: bool = False, now: datetime | None = None) -> list[Path]:
        """Delete archived runs that no rule keeps; returns what was (or would be) deleted.

        A run is kept when it started within `keep_days` days or is among the `keep_last`
        newest archived runs; a rule that is None keeps nothing by itself, and with no
        rule at all nothing is deleted. Live runs (running, paused, crashed) are never
        looked at: only history is.
        """
        if (keep_days is not None and keep_days < 0) or (keep_last is not None and keep_last < 0):
            raise ValueError("keep_days and keep_last cannot be negative")
        if keep_days is None and keep_last is None:
            return []
        now = now or datetime.now(timezone.utc)
        runs = sorted(self._archived_files(), key=lambda p: p.name, reverse=True)
        doomed = []
        for rank, path in enumerate(runs):
            if keep_last is not None and rank < keep_last:
                continue
            started = self._started(path)
            if started is None:
                continue  # a live run moved into history by hand
            if keep_days is not None and now - started <= timedelta(days=keep_days):
                continue
            doomed.append(path)
        if not dry_run:
            for path in doomed:
                path.unlink(missing_ok=True)
                for directory in (path.parent, path.parent.parent, path.parent.parent.parent):
                    try:
                        directory.rmdir()  # only succeeds once a day, month or year is empty
                    except OSError:
                        break
        return doomed

    def _started(self, path: Path) -> datetime | None:
        """When an archived run started (its file time when unreadable); None for unfinished ones."""
        try:
            state = _read(path)
        except (FileNotFoundError, _Damaged):
            try:
                return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
            except FileNotFoundError:
                return None
        if not state.finished:
            return None
        return parse_time(state.started_at)

    def export(self, run_id: str) -> dict[str, Any]:
        """The audit view of a run: who ran what, approvals, failures, and the journal without results."""
        data = _converter().unstructure(self.load(run_id))
        audit: dict[str, Any] = {"format": "catalyst-audit", "version": VERSION}
        for key in ("runId", "playbook", "status", "mode", "startedAt", "endedAt", "owner", "permissions", "locks", "approvals", "failures", "cancel", "error"):
            audit[key] = data[key]
        audit["steps"] = [{k: v for k, v in record.items() if k != "result"} for record in data["steps"]]
        return audit

    def peek_status(self, run_id: str) -> str | None:
        """The status a run's snapshot records, cheaply and without raising: None when unknown.

        For `locks.LockManager`, deciding whether a lock's holder is finished.
        """
        try:
            path = self._find(run_id)
            if path is None:
                return None
            status = json.loads(path.read_bytes()).get("status")
        except (OSError, ValueError, AttributeError):
            return None
        return status if isinstance(status, str) else None


_RUN_DAY = re.compile(r"(\d{4})(\d{2})(\d{2})-\d{6}-")
_ID_NAME = re.compile(r"\d{8}-\d{6}-(?P<name>.+)-\d{3,}")
_INDEXED = re.compile(r"(?P<index>\d{3,})")


def _located(problem: str) -> str:
    """`text @ $.path` as `$.path: text`, for lists of problems."""
    text, at, where = problem.rpartition(" @ ")
    return f"{where}: {text}" if at else problem


def _slug(name: str) -> str:
    """The playbook name as it may appear in a file name."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60].strip("-")
    return slug or "run"


def _display(path: Path) -> str:
    """A path as short as is clear: relative to the working directory when under it."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (OSError, ValueError):
        return str(path)


# -- durable writes -----------------------------------------------------------------------------


_BINARY = getattr(os, "O_BINARY", 0)


def _write(target: Path, data: bytes, *, exclusive: bool = False, backup: Path | None = None, mode: int = 0o600) -> bool:
    """Put `data` at `target` so that it is the old content or the new one, never a mix.

    `exclusive`: only if `target` does not exist yet (False when it does). `backup`: keep
    the current content there first. The temporary file lives beside the target, since
    a rename is only atomic within one file system.
    """
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, mode)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if exclusive:
            if not _link_new(temporary, target, data, mode):
                return False
        else:
            if backup is not None:
                _keep_backup(target, backup)
            os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    _sync_dir(target.parent)
    return True


def _link_new(source: Path, target: Path, data: bytes, mode: int) -> bool:
    """Give `source`'s content the name `target` unless that name exists."""
    try:
        os.link(source, target)
        return True
    except FileExistsError:
        return False
    except OSError:
        pass  # no hard links here (some network and FAT file systems)
    # Fallback: an exclusive create, then the write. A crash in between leaves a short
    # file, which `load` reports as truncated.
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, mode)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    return True


def _keep_backup(current: Path, backup: Path) -> None:
    # A hard link of the current file (never modified in place: saves replace it),
    # renamed onto the backup so the backup too is always whole.
    link = current.with_name(f".{backup.name}.{secrets.token_hex(6)}.tmp")
    try:
        os.link(current, link)
    except OSError:
        return  # first save, or no hard links: no backup
    try:
        os.replace(link, backup)
    except OSError:
        link.unlink(missing_ok=True)


def _sync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable (POSIX; Windows cannot open directories)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
