"""Benchmark: a `parallel` group whose branches write templated glob paths, at n and 4n branches.

Usage: python bench/parallel_globs.py [--rounds R] [--branches N]

Each branch writes `out/{{xI}}/*.md`: every `{{ }}` can be any name, so every branch may
write what every other does (n(n-1)/2 pairs of branches, each reported once a C818 once
listed them all: 1,000 branches took 49 s and 3.26 GB). A second shape gives each branch
a pattern of its own under the unknown directory, `out/{{xI}}/I-*.md`, which no other
branch's can meet. `catalyst check --no-cache` runs as a whole process R times at each
size, interleaved. Printed: the machine and its load, the command, and per shape and
size CPU (user + system) and wall time as min / median / max, max RSS, and the ratio of
the 4n median CPU to the n one (about 4 when the check is linear; start-up pulls it lower).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import child_env, machine, measure, spread  # noqa: E402


def playbook(n: int, own: bool) -> str:
    inputs = "".join(f"  - string: x{i}\n" for i in range(n))
    branches = "".join(
        f"      - file-write: out/{{{{x{i}}}}}/{f'{i}-' if own else ''}*.md\n        content: part {i}\n"
        for i in range(n)
    )
    return (
        "name: fan-out\ndescription: generated\nowner: Engineer\nallowedWritePaths: ['out/**']\n"
        f"inputs:\n{inputs}steps:\n  - parallel:\n{branches}"
    )


SHAPES = {"one pattern": False, "own patterns": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--branches", type=int, default=250, help="n; 4n is measured too")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    sizes = (args.branches, 4 * args.branches)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "catalyst.toml").write_text("", encoding="utf-8")
        env = child_env(root / ".pycache")
        measure([sys.executable, "-m", "catalyst_dsl", "--version"], root, env)  # writes the .pyc files
        files = {}
        for shape, own in SHAPES.items():
            for n in sizes:
                path = root / f"fan-out-{'own' if own else 'one'}-{n}.yaml"
                path.write_text(playbook(n, own), encoding="utf-8")
                files[shape, n] = path.name
        # The check's own modules compiled once, not counted (--version imports few of them).
        measure(
            [sys.executable, "-m", "catalyst_dsl", "check", "--no-cache", files["one pattern", sizes[0]]], root, env
        )
        runs: dict[tuple[str, int], list] = {key: [] for key in files}
        for _ in range(args.rounds):  # interleaved: a change in the machine's load hits every size alike
            for key, name in files.items():
                runs[key].append(
                    measure([sys.executable, "-m", "catalyst_dsl", "check", "--no-cache", name], root, env)
                )
    print(f"command: python -m catalyst_dsl check --no-cache FILE, {args.rounds} round(s), in a temporary project")
    cpu, wall = "CPU min / median / max", "wall min / median / max"
    print(f"{'shape':<14} {'branches':>8}  {cpu:<26} {wall:<26} {'max RSS':>10}  4n/n")
    for shape in SHAPES:
        medians = []
        for n in sizes:
            got = runs[shape, n]
            medians.append(statistics.median(r.cpu for r in got))
            ratio = f"{medians[1] / medians[0]:.1f}x" if len(medians) == 2 else ""
            rss = max(r.rss_mib for r in got)
            print(
                f"{shape:<14} {n:>8}  {spread([r.cpu for r in got]):<26} {spread([r.wall for r in got]):<26} "
                f"{rss:>6.0f} MiB  {ratio}"
            )
    print(f"machine after: {machine()}")


if __name__ == "__main__":
    main()
