"""A picture's graph: boxes of a few kinds and the arrows between them.

The flow of a playbook (flow.py) and the library's calls (calls.py) are both built as
this one shape, so that each output (Mermaid, SVG, DOT) is written once. Labels are the
user's text as it is; each output escapes it for its own syntax.
"""

from __future__ import annotations

from typing import Optional

from catalyst_dsl._internal.records import record

#: The kinds of box, each drawn with its own shape and colour:
#: `start`/`end` (rounded), `step` (a box), `decision` (a diamond: an `if` or a `route`),
#: `loop` (a `for-each` or a `retry-block`, its body's arrow coming back to it), `fork`
#: and `join` (a `parallel` group's ends), `checkpoint` (a pause for a person), `call`
#: (another playbook), `try` (the steps whose errors a handler catches), `merge` (a point
#: where the ways into a step with a condition meet), `elided` (steps a
#: partial flow leaves out), `playbook` (a playbook of the library's call graph) and
#: `missing` (a call to a playbook that is not found).
KINDS = (
    "start",
    "end",
    "step",
    "decision",
    "loop",
    "fork",
    "join",
    "merge",
    "checkpoint",
    "call",
    "try",
    "elided",
    "playbook",
    "missing",
)


@record
class Node:
    id: str
    label: str
    kind: str = "step"
    #: Where the step sits (`steps/2/then/0`, as in a run's journal and a plan); None for
    #: the boxes that are no step (start, end, a join).
    path: Optional[str] = None
    #: Drawn in the warning colour: a playbook on a call cycle, a step a partial flow asks for.
    marked: bool = False


@record
class Link:
    source: str
    target: str
    label: str = ""
    #: `normal`, `back` (a loop's way round again), `error` (to a catch handler) or
    #: `cycle` (a call on a cycle of the call graph).
    style: str = "normal"


@record
class Graph:
    title: str
    nodes: tuple[Node, ...]
    links: tuple[Link, ...]


#: Labels longer than this are cut (with an ellipsis): a diagram is read at a glance.
MAX_LABEL = 60


def shown(text: str) -> str:
    """A label as every output draws it: on one line, no control character (each written
    as its escape, `\\x1b`), at most MAX_LABEL characters."""
    from catalyst_dsl._internal.terminal_text import safe_text

    text = safe_text(" ".join(text.split()))
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"
