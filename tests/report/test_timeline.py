"""`catalyst runs show`'s timeline: each step's start from the run's start, its time and
outcome, and a bar placed where that time sat in the run."""

from __future__ import annotations

from catalyst_dsl.ir.journal import LOOP_ITEM
from catalyst_dsl.report.timeline import BAR_WIDTH, nesting, render_timeline
from catalyst_dsl.runtime.state.snapshot import PlaybookRef, StepRecord, new_run_state


def _state(*steps: tuple[str | None, str, str, str, float]):
    state = new_run_state(
        PlaybookRef(name="p", file="playbooks/p.yaml", fingerprint="f"), started_at="2026-01-01T10:00:00.000Z"
    )
    for i, (name, action, status, started, seconds) in enumerate(steps):
        state.steps.append(
            StepRecord(
                path=f"steps/{i}",
                name=name,
                action=action,
                status=status,
                attempts=1,
                started_at=f"2026-01-01T10:00:{started}Z",
                duration=seconds,
            )
        )
    return state


def test_each_step_has_its_offset_time_outcome_and_bar() -> None:
    state = _state(
        ("build", "bash", "completed", "00.000", 2.0),
        (None, LOOP_ITEM, "completed", "02.000", 0.0),  # bookkeeping, not shown
        ("tests", "bash", "failed", "02.000", 6.0),
        ("publish", "bash", "skipped", "08.000", 0.0),
    )
    lines = render_timeline(state)
    assert lines == [
        "timeline (8.0 s from the run's start to its last step's end; each step's start and time):",
        "  ✓ build (bash)    |" + "█" * 10 + " " * 30 + "|  +0 ms, 2.0 s",
        "  ✗ tests (bash)    |" + " " * 10 + "█" * 30 + "|  +2.0 s, 6.0 s",
        "  ↷ publish (bash)  |" + " " * 39 + "█" + "|  +8.0 s, 0 ms",
    ]
    assert all(len(line.split("|")[1]) == BAR_WIDTH for line in lines[1:])


def test_steps_are_shown_in_the_order_they_started_and_names_are_made_safe() -> None:
    state = _state(("late", "bash", "completed", "05.000", 1.0), ("x\x1b[2J", "bash", "completed", "01.000", 1.0))
    lines = render_timeline(state)
    assert lines[1].startswith("  ✓ x\\x1b[2J (bash)") and lines[2].startswith("  ✓ late (bash)")


def test_a_run_with_no_step_or_an_unreadable_time_has_no_timeline() -> None:
    assert render_timeline(_state()) == []
    state = _state(("build", "bash", "completed", "00.000", 1.0))
    state.steps[0].started_at = "yesterday"
    assert render_timeline(state) == []


def test_nested_steps_are_indented_by_how_deep_they_sit() -> None:
    assert [nesting(p) for p in ("steps/2", "steps/2/then/0", "steps/3/each/1/0", "steps/1/branch/0")] == [0, 1, 1, 1]
    assert [nesting(p) for p in ("steps/7/branches/1/0/then/2", "finally/0", "catch/1/0", "steps/4/attempt/2/0")] == [
        2,
        0,
        0,
        1,
    ]
