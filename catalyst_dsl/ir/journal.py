"""The journal's own entries: what a run records besides its steps' outcomes.

A resumed run reads these to go on where it stopped (a failure a `catch` took, the item
a loop iteration ran for, a failed attempt of a `retry-block`), and the pauses a step
may make are found by these names under the step's path. The engine writes them; the
session, the CLI and the checker read them, so they live with the IR, below all three.
"""

from __future__ import annotations

from typing import Any

#: The pause before a step whose effects need an approval (see the engine's approvals).
APPROVE_EFFECTS = "approve-effects"
#: The journal entry of a failure a `catch` handled.
CAUGHT = "catch"
#: The journal entry naming the item a loop iteration ran for.
LOOP_ITEM = "for-each-item"
#: The pause after a step whose result asks for a review (`waitForReview`).
REVIEW = "review"
#: The journal entry of a failed attempt of a `retry-block`.
ATTEMPT_FAILED = "retry-block-attempt"


def caught_errors(result: Any) -> list[dict[str, Any]]:
    """The failures a CAUGHT journal entry keeps (the one the catch took, then the parallel
    branches' that ended with it), each with the `path` of the step that failed."""
    if not isinstance(result, dict):
        return []
    return [
        kept
        for kept in [result.get("error"), *(result.get("also") or [])]
        if isinstance(kept, dict) and isinstance(kept.get("path"), str)
    ]
