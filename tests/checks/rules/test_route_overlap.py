"""C829: two `route` branches whose conditions can both hold, reported only where their
text proves it; each row is (first `when`, second `when`, the reason, or None)."""

from __future__ import annotations

import pytest

from catalyst_dsl.compiler import compile_bytes
from catalyst_dsl.diagnostics.ids import ROUTE_BRANCHES_OVERLAP

PLAYBOOK = """name: routed
description: Two branches
owner: Engineer
inputs:
  - number: n
    default: 1
  - string: kind
    default: bug
  - boolean: urgent
    default: false
steps:
  - route:
      - when: "{first}"
        steps:
          - display: one
      - when: "{second}"
        steps:
          - display: two
    otherwise:
      - display: none
"""

ASKS_LESS = "whenever the one holds, so does the other, which asks less"
CASES = [
    ("${{ n > 5 }}", "${{ n > 5 }}", "their conditions are the same"),
    ("${{ n > 5 }}", "${{ 5 < n }}", "their conditions are the same"),
    ("{{ urgent }}", "${{ urgent }}", "their conditions are the same"),
    ("${{ n >= 8 }}", "${{ n > 5 }}", "both hold when n is 8"),
    ("${{ n >= 5 }}", "${{ n <= 5 }}", "both hold when n is 5"),
    ("${{ n == 3 }}", "${{ n > 1 && n < 4 }}", "both hold when n is 3"),
    ("${{ kind == 'bug' }}", "${{ kind === 'bug' || kind == 'incident' }}", 'both hold when kind is "bug"'),
    ("${{ urgent }}", "${{ urgent && kind == 'bug' }}", 'both hold when kind is "bug"'),
    ("${{ urgent }}", "${{ urgent && kind.startsWith('b') }}", ASKS_LESS),
    ("${{ urgent && n > 2 }}", "${{ urgent && n > 4 }}", "both hold when n is 5"),
    ("${{ true }}", "${{ n > 1 }}", "both hold when n is 2"),
    # exclusive, or not provable from the text
    ("${{ n > 5 }}", "${{ n <= 5 }}", None),
    ("${{ n > 5 && n < 6 }}", "${{ n >= 6 }}", None),
    ("${{ kind == 'bug' }}", "${{ kind == 'feature' }}", None),
    ("${{ kind != 'bug' }}", "${{ kind != 'feature' }}", None),  # the values kind may take are not known
    ("${{ kind == 'bug' }}", "${{ kind == 1 }}", None),
    ("${{ urgent }}", "${{ !urgent }}", None),
    ("${{ urgent }}", "${{ n > 1 }}", None),
    ("${{ kind.length > 2 }}", "${{ kind == 'ab' }}", None),
    ("${{ kind.startsWith('x') && kind != 'xa' }}", "${{ kind.startsWith('x') && kind == 'ya' }}", None),
]


@pytest.mark.parametrize("first, second, reason", CASES)
def test_overlap_is_reported_only_where_the_text_proves_it(first: str, second: str, reason: str | None) -> None:
    text = PLAYBOOK.format(first=first, second=second).encode()
    found = [d for d in compile_bytes(text, "playbooks/routed.yaml").diagnostics if d.code == ROUTE_BRANCHES_OVERLAP]
    if reason is None:
        assert found == []
    else:
        [finding] = found
        assert finding.message.endswith(f"can both hold: {reason}")
        assert finding.span.line == 16  # the later branch's condition
