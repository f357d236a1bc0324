"""The report of a parallel group's overlapping writes: the first pairs of branches shown,
in the order of their writes, and every other overlapping pair of writes counted."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from catalyst_dsl.checks.rules.parallel_writes import branch_overlaps
from catalyst_dsl.paths.globs import Glob, overlap, overlap_groups

TEXTS = ["out/*/*.md", "out/a/*.md", "out/*/b.md", "out/a/b.md", "docs/*", "out/**", "out/*/*.txt"]


def expected(branch_of: list[int], globs: list[Glob], limit: int) -> tuple[list[tuple[int, int]], int]:
    """Every pair of writes compared with every other: the slow answer."""
    meeting = [
        (i, j)
        for i, j in itertools.combinations(range(len(globs)), 2)
        if branch_of[i] != branch_of[j] and overlap(globs[i], globs[j]) is not None
    ]
    shown: list[tuple[int, int]] = []
    branches: set[tuple[int, int]] = set()
    for i, j in meeting:
        pair = (branch_of[i], branch_of[j])
        if pair not in branches and len(shown) < limit:
            branches.add(pair)
            shown.append((i, j))
    more = sum(1 for i, j in meeting if (branch_of[i], branch_of[j]) not in branches) if len(shown) == limit else 0
    return shown, more


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.sampled_from(TEXTS)), min_size=1, max_size=14),
    st.integers(1, 6),
)
def test_agrees_with_comparing_every_pair(writes: list[tuple[int, str]], limit: int) -> None:
    writes = sorted(writes, key=lambda w: w[0])  # writes are listed branch by branch
    branch_of = [b for b, _ in writes]
    globs = [Glob.from_template(t) for _, t in writes]
    found = branch_overlaps(branch_of, overlap_groups(globs), limit)
    shown, more = expected(branch_of, globs, limit)
    assert [(i, j) for i, j, _ in found.shown] == shown
    assert found.more == more
    for i, j, witness in found.shown:
        assert globs[i].matches(witness) and globs[j].matches(witness)


def test_a_thousand_branches_of_one_pattern_are_counted_not_listed() -> None:
    globs = [Glob.from_template(f"out/{{{{x{i}}}}}/*.md") for i in range(1000)]
    found = branch_overlaps(list(range(1000)), overlap_groups(globs), 10)
    assert [(i, j) for i, j, _ in found.shown] == [(0, j) for j in range(1, 11)]
    assert found.more == 1000 * 999 // 2 - 10


def test_writes_of_one_branch_never_pair() -> None:
    globs = [Glob.from_template("out/*.md")] * 5
    found = branch_overlaps([0, 0, 0, 1, 1], overlap_groups(globs), 10)
    assert [(i, j) for i, j, _ in found.shown] == [(0, 3)]
    assert found.more == 0
