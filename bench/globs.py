"""Benchmark: write-path globs (catalyst_dsl/paths/globs.py).

Usage: python bench/globs.py [PATTERNS] [GRANTS]   (default 1000 patterns, 20 grants)

Prints, best of 3 runs each: compiling the generated write patterns, `find_overlaps` on
all of them, `classify` of every pattern against the grants, and adversarial pairs
(the timings of those show the algorithms stay polynomial, or stop at their budget).
"""

from __future__ import annotations

import random
import re
import sys
import time
from collections.abc import Callable

from catalyst_dsl.paths import automata, globs
from catalyst_dsl.paths.globs import Glob, classify, covers, find_overlaps, overlap

FEATURE_FILES = ["spec.md", "plan.md", "tasks.md", "research.md"]


def write_paths(count: int, seed: int = 7) -> list[str]:
    """Write paths as steps in a large playbook library would declare them."""
    rng = random.Random(seed)
    makers: list[tuple[int, Callable[[], str]]] = [
        (25, lambda: f".xe/features/{{{{feature-id}}}}/{rng.choice(FEATURE_FILES)}"),
        (15, lambda: f".xe/features/feature-{rng.randrange(200)}/{rng.choice(FEATURE_FILES)}"),
        (15, lambda: f"src/module-{rng.randrange(100)}/**/*.py"),
        (10, lambda: f"src/module-{rng.randrange(100)}/part_{rng.randrange(50)}.py"),
        (3, lambda: "docs/*.md"),
        (3, lambda: f"docs/topic-{rng.randrange(80)}.md"),
        (2, lambda: "docs/{{section}}/index.md"),
        (5, lambda: f"tests/test_{rng.randrange(300)}.py"),
        (3, lambda: "tests/**/test_*.py"),
        (7, lambda: f"build/out-{rng.randrange(40)}/"),
        (5, lambda: "reports/${{ get('run-id') }}/report-[0-9].json"),
        (5, lambda: f"packages/pkg-{rng.randrange(60)}/src/{{{{name}}}}.ts"),
        (2, lambda: rng.choice(["**/*.log", "*.lock", "CHANGELOG.md", ".gitignore"])),
    ]
    weights = [w for w, _ in makers]
    return [rng.choices(makers, weights)[0][1]() for _ in range(count)]


GRANTS = [
    ".xe/features/**",
    ".xe/features/*/spec.md",
    "src/module-1*/**",
    "src/module-2?/**/*.py",
    "src/module-[3-5]*/",
    "docs/",
    "docs/*.md",
    "tests/**/*.py",
    "tests/test_[0-9]*.py",
    "build/out-[0-9]/",
    "build/out-1[0-9]/**",
    "reports/*/report-*.json",
    "packages/pkg-1*/src/*.ts",
    "packages/*/README.md",
    "*.lock",
    ".gitignore",
    "CHANGELOG.md",
    "tmp/",
    ".cache/**",
    "logs/*.log",
]


def short(text: str) -> str:
    """`*a*a*a*a` as `(*a)x4`, so adversarial patterns fit on a line."""
    text = re.sub(r"(?:\*a){4,}", lambda m: f"(*a)x{len(m.group()) // 2}", text)
    return re.sub(r"\?{4,}", lambda m: f"?x{len(m.group())}", text)


def best_of(runs: int, work: Callable[[], object]) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    grant_count = int(sys.argv[2]) if len(sys.argv) > 2 else len(GRANTS)
    written = write_paths(count)

    def compile_all() -> list[Glob]:
        globs._compile.cache_clear()  # time real compiles, not cache hits
        return [Glob.from_template(text) for text in written]

    elapsed, patterns = best_of(3, compile_all)
    print(f"compile {count} write patterns: {elapsed * 1000:.1f} ms ({len({p.key for p in patterns})} distinct)")

    elapsed, pairs = best_of(3, lambda: find_overlaps(patterns))
    print(f"find_overlaps on {count} patterns: {elapsed * 1000:.1f} ms ({len(pairs)} overlapping pairs)")

    grants = [Glob.compile(text) for text in GRANTS[:grant_count]]
    elapsed, placements = best_of(3, lambda: [classify(grants, p) for p in patterns])
    tally = {name: placements.count(name) for name in ("inside", "partly", "outside")}
    print(f"classify {count} patterns against {len(grants)} grants: {elapsed * 1000:.1f} ms ({tally})")

    adversarial = [
        ("overlap", "*a*a*a*a*a*a*b", "*a*a*a*a*a*c", overlap),
        ("covers", "*a*a*a*a*a*c", "*a*a*a*a*a*a*c", covers),
        ("overlap", "*a" * 30 + "*b", "*a" * 29 + "*c", overlap),
        ("overlap", "*a" * 30 + "*b*", "*a" * 29 + "*c*", overlap),
        ("covers", "*a" * 29 + "*c", "*a" * 30 + "*c", covers),
        ("covers", "*a" + "?" * 20, "*a" + "?" * 20, covers),
    ]
    for name, left, right, question in adversarial:
        elapsed, answer = best_of(3, lambda: question(Glob.compile(left), Glob.compile(right)))
        print(f"{name}({short(left)}, {short(right)}): {elapsed * 1000:.2f} ms -> {answer!r}")
    # The cheap shape test settles the first pair above (the last letters differ), so
    # also time the product walk itself on it.
    left, right = Glob.compile(adversarial[0][1]), Glob.compile(adversarial[0][2])
    elapsed, answer = best_of(3, lambda: automata.common_path(left.nfa, right.nfa))
    print(f"product walk alone on the first pair: {elapsed * 1000:.2f} ms -> {answer!r}")


if __name__ == "__main__":
    main()
