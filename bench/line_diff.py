"""Benchmark: the unified diff of `check --diff` and the what-if (catalyst_dsl/_internal/line_diff.py).

Usage: python bench/line_diff.py [LINES ...] [--difflib]   (default 20000 80000 200000)

For each size, three texts of that many lines and their edited copies, as a fix or a
written file changes them: named steps (every other line unique) with 50 lines added;
generated steps (150 lines repeated over and over) with 50 lines replaced; and the same
generated steps reversed (the worst order, where the budget ends the search). Prints the
best of 3 timings of each diff and how many lines it printed. `--difflib` also times
Python's difflib.unified_diff on the same texts, once (minutes from 20,000 lines).
"""

from __future__ import annotations

import difflib
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]
from catalyst_dsl._internal.line_diff import unified  # noqa: E402
from processes import machine  # noqa: E402


def cases(lines: int) -> list[tuple[str, list[str], list[str]]]:
    named = [f"  - name: step-{i // 2}\n" if i % 2 == 0 else f"    display: {i % 150}\n" for i in range(lines)]
    added = list(named)
    for at in range(lines - lines // 50, 0, -(lines // 50)):
        added.insert(at, "    # fixed\n")
    repeated = [f"  - display: {i % 150}\n" for i in range(lines)]
    replaced = list(repeated)
    for at in range(0, lines, lines // 50):
        replaced[at] = "  - display: fixed\n"
    return [
        ("named steps, 50 lines added", named, added),
        ("repeated lines, 50 replaced", repeated, replaced),
        ("repeated lines, reversed", repeated, repeated[::-1]),
    ]


def best(work, rounds: int = 3) -> tuple[float, int]:
    timings, printed = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        printed = sum(1 for _ in work())
        timings.append(time.perf_counter() - start)
    return min(timings), printed


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:] if not a.startswith("--")] or [20_000, 80_000, 200_000]
    with_difflib = "--difflib" in sys.argv
    print(f"unified diffs, best of 3\n  {machine()}")
    for lines in sizes:
        for name, before, after in cases(lines):
            seconds, printed = best(lambda: unified(before, after, "a/x", "b/x"))
            row = f"  {lines:>7} lines, {name:<28} line_diff {seconds:8.3f} s, {printed} lines printed"
            if with_difflib:
                seconds, printed = best(lambda: difflib.unified_diff(before, after, "a/x", "b/x"), rounds=1)
                row += f"; difflib {seconds:8.3f} s, {printed} lines"
            print(row)


if __name__ == "__main__":
    main()
