"""A run's timeline as text (`catalyst runs show`): each step recorded in its snapshot,
when it started from the run's start, how long it took, and how it ended, with a bar
for where that time sat in the run, so the slow step and the long wait stand out."""

from __future__ import annotations

import math

from catalyst_dsl._internal.terminal_text import safe_text
from catalyst_dsl.ir.journal import ATTEMPT_FAILED, CAUGHT, LOOP_ITEM
from catalyst_dsl.runtime.machine import parse_time

#: Columns of the bars: the run's whole span.
BAR_WIDTH = 40
_MARKS = {"completed": "✓", "failed": "✗", "skipped": "↷"}
#: Journal entries that are no step but say what happened at one: a failure its `catch`
#: took, a failed attempt of a `retry-block`. Shown by that word, named by their step.
HAPPENED = {CAUGHT: "caught", ATTEMPT_FAILED: "failed"}


def record_name(state, record) -> str:
    """A recorded step (or what happened at one) as the run named it: `display@26`,
    `write [iteration 2]`, `retry-block@3 [attempt 2]`; never its journal path. An older
    snapshot without labels names it by the step that holds it, as `shown_step` does."""
    from catalyst_dsl.runtime.state.snapshot import shown_step

    return record.label or record.name or shown_step(state, record.path)


def timeline_rows(state) -> list[tuple[str, str, float, float]]:
    """(mark, step, start offset, seconds) for each step recorded, in the order they started."""
    try:
        origin = parse_time(state.started_at)
    except (TypeError, ValueError):
        return []
    rows = []
    for record in state.steps:
        if record.action == LOOP_ITEM:
            continue  # bookkeeping for resume, not a step
        try:
            offset = (parse_time(record.started_at) - origin).total_seconds()
        except (TypeError, ValueError):
            continue  # a record without a readable time (an edited snapshot): not placed
        happened = HAPPENED.get(record.action)
        if happened is None:
            label, depth, mark = f"{record_name(state, record)} ({record.action})", nesting(record.path), None
        else:  # inside its step (the playbook's own catch: at the top), marked as the failure it was
            label = f"{record_name(state, record)} ({' '.join(filter(None, (happened, record.reason)))})"
            depth, mark = nesting(record.path) + (record.path.count("/") > 1), _MARKS["failed"]
        mark = mark or _MARKS.get(record.status, "·")
        rows.append((max(0.0, offset), depth, mark, "  " * depth + safe_text(label), max(0.0, record.duration)))
    # A control step is recorded after the steps it ran, and may start in the same
    # millisecond as the first of them: by start, then the outer step first.
    rows.sort(key=lambda row: row[:2])
    return [(mark, label, offset, seconds) for offset, _, mark, label, seconds in rows]


#: Path segments followed by a number that counts something else than steps: a loop's
#: iteration, a retry's attempt, a route's branch, a try's handler.
_COUNTERS = frozenset(("each", "attempt", "branches", "catch"))


def nesting(path: str) -> int:
    """How deep a step sits in control steps: `steps/2` 0, `steps/2/then/0` and
    `steps/3/each/1/0` 1 (the iteration is no step)."""
    steps, counted = 0, False
    for segment in path.split("/"):
        if segment.isdigit() and not counted:
            steps += 1
        counted = segment in _COUNTERS
    return max(0, steps - 1)


def render_timeline(state) -> list[str]:
    rows = timeline_rows(state)
    if not rows:
        return []
    span = max(offset + seconds for _, _, offset, seconds in rows) or 1e-9
    labels = max(len(label) for _, label, _, _ in rows)
    lines = [
        f"timeline ({seconds_text(span)} from the run's start to its last step's end; each step's start and time):"
    ]
    for mark, label, offset, seconds in rows:
        start = min(BAR_WIDTH - 1, int(offset / span * BAR_WIDTH))
        length = max(1, round(seconds / span * BAR_WIDTH))
        bar = " " * start + "█" * min(length, BAR_WIDTH - start)
        # The times come last, unpadded: the bars line up whatever their widths.
        lines.append(
            f"  {mark} {label:<{labels}}  |{bar:<{BAR_WIDTH}}|  +{seconds_text(offset)}, {seconds_text(seconds)}"
        )
    return lines


def seconds_text(seconds: float) -> str:
    if not math.isfinite(seconds):  # a damaged record's; a snapshot read refuses them
        return "?"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
