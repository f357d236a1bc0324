"""A run's timeline as text (`catalyst runs show`): each step recorded in its snapshot,
when it started from the run's start, how long it took, and how it ended, with a bar
for where that time sat in the run, so the slow step and the long wait stand out."""

from __future__ import annotations

from catalyst_dsl._internal.terminal_text import safe_text
from catalyst_dsl.ir.journal import LOOP_ITEM
from catalyst_dsl.runtime.machine import parse_time

#: Columns of the bars: the run's whole span.
BAR_WIDTH = 40
_MARKS = {"completed": "✓", "failed": "✗", "skipped": "↷"}


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
        label = f"{record.name} ({record.action})" if record.name else record.action
        rows.append((_MARKS.get(record.status, "·"), safe_text(label), max(0.0, offset), max(0.0, record.duration)))
    rows.sort(key=lambda row: row[2])
    return rows


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
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
