"""What a program step costs a whole run: 20 `bash` steps, with and without a value.

    python3 bench/program_steps.py [--rounds N] [--against CHECKOUT]

Runs `catalyst run` of two generated playbooks (twenty `bash: "true"` steps; twenty
`printf '%s' {{ inputs.v }}` steps given a hostile value) in a temporary git project and
prints the CPU time of each whole process (user + system of the child) and its wall
time, min / median / max over the rounds. With `--against`, the same for another
checkout of catalyst (e.g. a `git worktree` of an older commit), round by round beside
this one.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from processes import machine  # noqa: E402

PLAIN = "\n".join('  - bash: "true"\n    writes: []' for _ in range(20))
VALUED = "\n".join("  - bash: \"printf '%s' {{ inputs.v }} > /dev/null\"\n    writes: []" for _ in range(20))


def _project(where: Path) -> None:
    (where / "playbooks").mkdir()
    (where / "playbooks" / "twenty.yaml").write_text(
        f"name: twenty\ndescription: twenty programs\nowner: Engineer\nsteps:\n{PLAIN}\n", encoding="utf-8"
    )
    (where / "playbooks" / "twentyv.yaml").write_text(
        "name: twentyv\ndescription: twenty programs given a value\nowner: Engineer\ninputs:\n  - string: v\n"
        f"steps:\n{VALUED}\n",
        encoding="utf-8",
    )
    subprocess.run(["git", "init", "-q"], cwd=where, check=True)


def _run(checkout: Path, project: Path, args: list[str]) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "run", *args, "--mode", "autonomous"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path)
    options = parser.parse_args()
    print("machine:", machine())
    checkouts = [("this checkout", ROOT)] + ([("against", options.against.resolve())] if options.against else [])
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        _project(project)
        for args in (["twenty"], ["twentyv", "-i", "v=x; touch PWNED"]):
            figures: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in checkouts}
            for _ in range(options.rounds):
                for label, checkout in checkouts:  # interleaved, so load hits both alike
                    figures[label].append(_run(checkout, project, args))
            for label, runs in figures.items():
                cpu = sorted(r[0] for r in runs)
                wall = sorted(r[1] for r in runs)
                print(
                    f"{args[0]:8} {label:14} cpu {cpu[0]:.3f} / {statistics.median(cpu):.3f} / {cpu[-1]:.3f} s"
                    f"   wall {wall[0]:.3f} / {statistics.median(wall):.3f} / {wall[-1]:.3f} s"
                )
    print("machine:", machine())


if __name__ == "__main__":
    main()
