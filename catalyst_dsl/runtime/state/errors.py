"""What a failed read or write of the run state means, by errno, and what to do about it.

A full disk and a permission problem need different fixes, so each kind of OSError gets
its own sentence and advice. When the failed write was a run's save, the files on disk
still hold every save before it (`durable.replace` renames only a whole, synced file; a
journal record cut short is ignored), so the advice says where they are and that the run
resumes from them.
"""

from __future__ import annotations

import errno

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
