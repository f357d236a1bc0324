"""What ShellCheck costs a cold check: CPU and wall time of asking it about N distinct
bash scripts (catalyst_dsl/project/shellcheck.py, no check cache), min / median / max.

    python3 bench/shellcheck_cost.py [--scripts 2000] [--rounds 3]

CPU is catalyst's and the ShellCheck processes' (user + system). A script asked about
before in the same process costs nothing, so each round asks about new texts.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from processes import machine  # noqa: E402

from catalyst_dsl.project import shellcheck  # noqa: E402


def cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    shellcheck.run([("bash", "echo ready")])  # ShellCheck found and started once, not counted
    cpus, walls = [], []
    for r in range(args.rounds):
        texts = [
            f'echo "step {i} of round {r}" > "out/{i}.txt"; grep -c x "out/{i}.txt" || true'
            for i in range(args.scripts)
        ]
        started, used = time.perf_counter(), cpu()
        output = shellcheck.run([("bash", text) for text in texts])
        walls.append(time.perf_counter() - started)
        cpus.append(cpu() - used)
        if output.problem:
            sys.exit(output.problem)

    def spread(values: list[float]) -> str:
        return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f} s"

    print(f"{args.scripts} distinct scripts: CPU {spread(cpus)}, wall {spread(walls)}")
    print(f"a distinct script: {statistics.median(cpus) / args.scripts * 1000:.2f} ms CPU (median round)")
    print(machine())


if __name__ == "__main__":
    main()
