"""Benchmark: `catalyst check` of a generated library, whole process, cold and warm.

Usage: python bench/check_cache.py [N] [ROUNDS] [BASELINE]   (default 200 playbooks, 5 rounds)

Writes N playbooks of 20 steps that call each other (bench/library_graph.py's) into a
temporary project, then runs, ROUNDS times and interleaved so that load on the machine
hits each kind alike: `catalyst check --no-cache`, `catalyst check` after
`catalyst cache clean` (cold: every entry written) and `catalyst check` again (warm:
the check's record replayed, project/cache/replay.py). Each figure is the child process's CPU
time (user + system), wall time and peak memory (max RSS), as min / median / max. The
user's cache key is made in a temporary XDG_CACHE_HOME, not in yours. BASELINE, a
directory holding another build (its `catalyst_dsl` and `grammar`, such as
`git archive COMMIT catalyst_dsl grammar` unpacked), adds to each round that build's
`check --no-cache` and its warm `check` (after one run that writes its entries), run the
same way with that directory first on PYTHONPATH.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from library_graph import playbook  # noqa: E402
from processes import child_env, machine  # noqa: E402
from processes import measure as run  # noqa: E402

CATALYST = [sys.executable, "-m", "catalyst_dsl"]


def measure(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, max RSS in MiB) of one `catalyst` process."""
    return tuple(run([*CATALYST, *args], cwd, env))


def spread(values: list[float], unit: str, digits: int = 2) -> str:
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f} {unit}"


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        (root / "playbooks").mkdir(parents=True)
        (root / "catalyst.toml").write_text("")
        for i in range(count):
            (root / "playbooks" / f"flow-{i}.yaml").write_text(playbook(i, count, 20))
        env = child_env(Path(tmp) / "pycache", {"XDG_CACHE_HOME": str(Path(tmp) / "cache-home")})
        measure(["check", "--no-cache"], root, env)  # the first run pays for .pyc files; not counted
        kinds: dict[str, list[tuple[float, float, float]]] = {"no cache": [], "cold": [], "warm": []}
        baseline = None
        if len(sys.argv) > 3:
            baseline = {**env, "PYTHONPATH": os.pathsep.join([str(Path(sys.argv[3]).resolve()), env["PYTHONPATH"]])}
            kinds["before, no cache"] = []
            kinds["before, warm"] = []
            measure(["check", "--no-cache"], root, baseline)  # its first run writes its .pyc files; not counted
        started = machine()
        for _ in range(rounds):
            if baseline is not None:
                kinds["before, no cache"].append(measure(["check", "--no-cache"], root, baseline))
                measure(["cache", "clean"], root, env)
                measure(["check"], root, baseline)  # writes the other build's entries; not counted
                kinds["before, warm"].append(measure(["check"], root, baseline))
            kinds["no cache"].append(measure(["check", "--no-cache"], root, env))
            measure(["cache", "clean"], root, env)
            kinds["cold"].append(measure(["check"], root, env))
            kinds["warm"].append(measure(["check"], root, env))
        print(
            f"catalyst check of {count} playbooks x 20 steps, {rounds} rounds; min / median / max\n"
            f"  before: {started}\n  after:  {machine()}"
        )
        for kind, runs in kinds.items():
            cpu, wall, rss = zip(*runs)
            print(
                f"  {kind:16} CPU {spread(list(cpu), 's')}   wall {spread(list(wall), 's')}   "
                f"max RSS {spread(list(rss), 'MiB', 0)}"
            )


if __name__ == "__main__":
    main()
