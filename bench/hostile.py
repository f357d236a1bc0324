"""Benchmark: the hostile files that once took super-linear time, at size n and 4n.

Usage: python bench/hostile.py [--runs R] [--scale S]

Each case is generated at two sizes; `catalyst check` (and `compile` for the var chain)
runs as a whole process R times at each size. Printed per case and size: the machine, the
load, the command, and CPU (user+sys of the child) and wall time as min/median/max. The
last column is the ratio of the 4n median CPU time to the n one: about 4 when time is
linear in the size (start-up, a fixed cost, pulls it below 4).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import child_env, machine  # noqa: E402

HEAD = "name: hostile\ndescription: generated\nowner: Engineer\n"


def braces(n: int) -> str:
    """One string holding n `{{ }}` references."""
    return HEAD + "inputs:\n  - string: x\nsteps:\n  - display: \"" + " ".join(["{{x}}"] * n) + "\"\n"


def var_chain(n: int) -> str:
    """n `var` steps, each reading the one before."""
    steps = "".join(f"  - var: v{i}\n    value: \"{{{{v{i - 1}}}}}\"\n" for i in range(1, n))
    return HEAD + "steps:\n  - var: v0\n    value: 1\n" + steps


def headings(n: int) -> str:
    """A Markdown playbook of n phase headings, each with a code block."""
    body = "".join(
        f"## Phase {i}\n\nWrite `{{{{ example }}}}` for part {i}.\n\n```\n{{{{ code }}}}\n```\n\n" for i in range(n)
    )
    return "---\nname: hostile\ndescription: generated\nowner: Engineer\n---\n" + body


def parallel_globs(n: int) -> str:
    """A parallel block of n branches, each declaring a glob write."""
    branches = "".join(f"      - bash: echo {i}\n        writes: ['out/{i}/*.txt']\n" for i in range(n))
    return HEAD + "allowedWritePaths: ['out/**']\nsteps:\n  - parallel:\n" + branches


def nested_ifs(n: int) -> str:
    """n `if` blocks in a row, each defining a name the next one reads."""
    steps = "".join(
        f"  - if: ${{{{ x }}}}\n    then:\n      - var: v{i}\n        value: \"{{{{v{i - 1}}}}}\"\n"
        f"    else:\n      - var: v{i}\n        value: 0\n"
        for i in range(1, n)
    )
    return HEAD + "inputs:\n  - boolean: x\nsteps:\n  - var: v0\n    value: 1\n" + steps


def long_call(n: int) -> str:
    """One expression calling a function with n arguments (a long left-recursive list)."""
    return HEAD + "steps:\n  - var: v\n    value: \"${{ f(" + ", ".join(["1"] * n) + ") }}\"\n"


def unknown_names(n: int) -> str:
    """n `var` steps, each reading a name nobody defines (each a "did you mean" candidate)."""
    steps = "".join(f"  - var: v{i}\n    value: \"{{{{u{i}x}}}}\"\n" for i in range(n))
    return HEAD + "steps:\n" + steps


CASES = [
    ("braces", "check", braces, 25_000, ".yaml"),
    ("var-chain", "check", var_chain, 5_000, ".yaml"),
    ("var-chain", "compile", var_chain, 5_000, ".yaml"),
    ("headings", "check", headings, 5_000, ".md"),
    ("parallel-globs", "check", parallel_globs, 500, ".yaml"),
    ("if-chain", "check", nested_ifs, 2_500, ".yaml"),
    ("long-call", "check", long_call, 10_000, ".yaml"),
    ("unknown-names", "check", unknown_names, 1_000, ".yaml"),
]


def measure(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False
    )
    if done.returncode not in (0, 1) or "Traceback" in done.stderr:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}/{statistics.median(values):.2f}/{max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every base size")
    args = parser.parse_args()
    print(f"machine before: {machine()}")
    print(f"{'case':<16} {'command':<8} {'size':>8}  {'CPU s min/med/max':<20} {'wall s min/med/max':<20} 4n/n")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "catalyst.toml").write_text("", encoding="utf-8")
        env = child_env(root / ".pycache")
        measure([sys.executable, "-m", "catalyst_dsl", "--version"], root, env)  # writes the .pyc files; not counted
        for name, command, make, base, suffix in CASES:
            medians = []
            for size in (int(base * args.scale), int(base * args.scale) * 4):
                path = root / f"{name}-{size}{suffix}"
                path.write_text(make(size), encoding="utf-8")
                # The check cache would answer the second run from the first: measure the work.
                argv = [
                    sys.executable,
                    "-m",
                    "catalyst_dsl",
                    command,
                    *(["--no-cache"] if command == "check" else []),
                    path.name,
                ]
                cpu, wall = zip(*(measure(argv, root, env) for _ in range(args.runs)))
                medians.append(statistics.median(cpu))
                ratio = f"{medians[1] / medians[0]:.1f}" if len(medians) == 2 else ""
                print(f"{name:<16} {command:<8} {size:>8}  {spread(list(cpu)):<20} {spread(list(wall)):<20} {ratio}")
    print(f"machine after: {machine()}")
    print(
        f"command: python -m catalyst_dsl check --no-cache FILE (or compile FILE), {args.runs} run(s) each, "
        "in a temporary project"
    )


if __name__ == "__main__":
    main()
