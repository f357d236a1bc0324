"""What a failed read or write of the run state means, by errno, and what to do about it.

A full disk and a permission problem need different fixes, so each kind of OSError gets
its own sentence and advice. When the failed write was a run's save, the files on disk
still hold every save before it (`durable.replace` renames only a whole, synced file; a
journal record cut short is ignored), so the advice says where they are and that the run
resumes from them.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Callable

from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.runtime.errors import EXIT_STATE, RunAbort

_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
_DENIED = {errno.EACCES, errno.EPERM}


def state_abort(
    error: OSError,
    *,
    path: str | None = None,
    snapshot_bytes: int | None = None,
    written: str = "the snapshot",
    kept: str | None = None,
    run_id: str | None = None,
    retry: str | None = None,
) -> RunAbort:
    """The RunAbort (exit 3) for `error`, met while reading or writing the run state.

    `path` names the file meant (else the error's own, which may be a temporary file).
    `snapshot_bytes`, `written`, `kept` and `run_id` describe a failed save: its size and
    what it was ("the snapshot", "the save": a journal record), where the last good save
    stays on disk, and the run to resume once the cause is gone.
    `retry` says what to do once it is gone instead (a run that never started: run it again).
    """
    named = path or error.filename

    def cannot(verb: str) -> str:
        # Without a file name there is no second colon ("written:: No space left" read badly).
        return f"the run state cannot be {verb}: {named}" if named else f"the run state cannot be {verb}"

    said = error.strerror or str(error) or type(error).__name__
    resume = retry or (f"`catalyst resume {run_id}`" if run_id else "`catalyst resume RUN`")
    keeps = f"the last good save is kept in {kept}" if kept is not None else None
    code = error.errno
    if code in _FULL:
        kind = "the disk quota is used up" if code != errno.ENOSPC else "the disk is full"
        needed = f"; {written} needed {_size(snapshot_bytes)}" if snapshot_bytes is not None else ""
        message = f"{cannot('written')}: {kind} ({said}){needed}"
        fix = f"free space on that disk, then {resume}"
        return RunAbort(EXIT_STATE, message, help=f"{keeps}; {fix}" if keeps else fix)
    if code in _DENIED:
        message = f"{cannot('read or written')}: {said}"
        return RunAbort(
            EXIT_STATE,
            message,
            help="check the permissions of the state directory (state-dir, .xe/runs by default): "
            "the user running catalyst must be able to read and write it",
        )
    if code == errno.EROFS:
        message = f"{cannot('written')}: the file system is read-only ({said})"
        fix = f"remount it read-write, or set state-dir in catalyst.toml to a writable directory, then {resume}"
        return RunAbort(EXIT_STATE, message, help=f"{keeps}; {fix}" if keeps else fix)
    if code == errno.EIO:
        message = f"{cannot('read or written')}: the disk reported an input/output error ({said})"
        fix = f"check the disk and its connection (the system log tells more), then {resume}"
        return RunAbort(EXIT_STATE, message, help=f"{keeps}; {fix}" if keeps else fix)
    message = f"{cannot('read or written')}: {said}"
    fix = f"fix the cause, then {resume}" if run_id else "check the state directory (state-dir, .xe/runs by default)"
    return RunAbort(EXIT_STATE, message, help=f"{keeps}; {fix}" if keeps else fix)


def _size(count: int) -> str:
    """A byte count as people read it: 812 bytes, 14.2 KiB, 3.1 MiB."""
    if count < 1024:
        return f"{count} byte{'' if count == 1 else 's'}"
    amount, unit = count / 1024, "KiB"
    for larger in ("MiB", "GiB"):
        if amount < 1024:
            break
        amount, unit = amount / 1024, larger
    return f"{amount:.1f} {unit}"


def damaged_abort(path: Path, damage, shown: Callable[[Path], str]) -> RunAbort:
    """The RunAbort (exit 3) for a run whose snapshot (or journal) `path` is damaged
    (snapshot_codec.Damaged): where, and how to recover, from the backup when it is good.
    `shown(path)` is how paths are shown."""
    from catalyst_dsl.runtime.state import snapshot_codec

    first, *rest = damage.problems
    named = snapshot_codec.RUN_FILE.fullmatch(path.name)
    # The id holds the playbook name too, for when the file no longer tells it.
    from_id = _id_name.fullmatch(named["id"]) if named else None
    name = damage.name or (from_id["name"] if from_id else "NAME")
    new_run = f"start a new run with `catalyst run {name}`"
    if damage.version is not None and damage.version > snapshot_codec.VERSION:
        help = f"a newer catalyst wrote it: resume it with that version, or {new_run}"
    else:
        help = f"{new_run}; the damaged file is kept for inspection"
        backup = path.with_name(path.name + ".bak") if not path.name.endswith(".bak") else None
        if backup is not None and named:
            try:
                good = snapshot_codec.read(backup)
            except (FileNotFoundError, snapshot_codec.Damaged):
                good = None
            if good is not None:
                steps = f"{len(good.steps)} step{'' if len(good.steps) == 1 else 's'} recorded"
                help = (
                    f"the last good copy is {shown(backup)} (saved {good.updated_at}, {steps}): "
                    f"copy it over {shown(path)} and resume with --trust-edited-state, or {new_run};"
                    " the damaged file is kept for inspection"
                )
    text, at, where = first.rpartition(" @ ")
    sentence = f"is damaged at {where}: {text}" if at else first
    return RunAbort(
        EXIT_STATE, f"the run snapshot {shown(path)} {sentence}", help=help, details=tuple(map(located, rest))
    )


def located(problem: str) -> str:
    """`text @ $.path` as `$.path: text`, for lists of problems."""
    text, at, where = problem.rpartition(" @ ")
    return f"{where}: {text}" if at else problem


#: A run id made by the store: the playbook's name is in it.
_id_name = LazyPattern(r"\d{8}-\d{6}-(?P<name>.+)-\d{3,}")
