"""Python's cyclic garbage collector, tuned for how catalyst allocates.

Starting up and checking allocate many small objects that live until the end (classes
and functions at import; nodes, spans and IR while checking) and almost no reference
cycles. Under CPython's default thresholds (a young collection every 700 allocations)
the collector scans them again and again for cycles that are not there: a cold one-file
`catalyst check` ran 28 collections (about 3.5 ms of it), and checking 2,000 steps took
14.6x the time of 200. Collections run less often with these thresholds.
"""

from __future__ import annotations

import gc

#: Allocations between young collections; young collections between middle ones; middle
#: ones between full ones.
THRESHOLDS = (50_000, 20, 100)


def tuned_thresholds() -> tuple[int, int, int]:
    """The collector's thresholds now, each raised to THRESHOLDS' where it is lower."""
    now = gc.get_threshold()
    return (max(now[0], THRESHOLDS[0]), max(now[1], THRESHOLDS[1]), max(now[2], THRESHOLDS[2]))


#: The thresholds the process had before `tune_process` raised them (None: not raised).
_BEFORE: tuple[int, int, int] | None = None


def tune_process() -> None:
    """Raise the thresholds for a command's process from its start (`program.main`, before
    the imports; `cli.main` for a program that embeds the command line). The thresholds
    given back later are those from before the first call."""
    global _BEFORE
    if _BEFORE is None:
        _BEFORE = gc.get_threshold()
    gc.set_threshold(*tuned_thresholds())


def for_long_running() -> None:
    """Give back the thresholds the process had, if `tune_process` raised them: a run, the
    language server and the webhook server live long and leave garbage in reference cycles
    (each compile of an editor's text leaves some), which full collections, rare under the
    raised thresholds, would otherwise let pile up (the language server grew by about
    170 MiB over 600 compiles of a large playbook). Batches of compiles inside them are
    still tuned (`compiler.collector_tuned_for_checking`)."""
    if _BEFORE is not None:
        gc.set_threshold(*_BEFORE)
