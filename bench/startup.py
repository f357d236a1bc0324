"""Benchmark: start-up, whole processes, each against the figure it is held to.

Usage: python bench/startup.py [--rounds R] [--kai DIR]

Pairs, run interleaved in every round so that the machine's load hits both sides alike:

- `catalyst check research.yaml` (the 95-line sample playbook, in a project of its own;
  warm check cache and `--no-cache`) against `python -c "import yaml, click"`;
- `catalyst --version` against `python -c "import click"`;
- with `--kai DIR` (a checkout of kai's `@tcanaud/playbook`, whose `bin/cli.js` runs on
  Node with no dependencies): `node DIR/bin/cli.js check tpl.yaml` against
  `catalyst check tpl.yaml` on the same file, kai's own 95-line playbook template
  (`templates/core/playbook.tpl.yaml`), which catalyst reads as a kai playbook.

`catalyst` is `python -m catalyst_dsl` from this checkout. Printed: the machine and its
load before and after, each command, and CPU (user + system) and wall time as
min / median / max, then the ratio of the medians of each pair.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import ROOT, Run, child_env, machine, measure, spread  # noqa: E402

PY = sys.executable
CATALYST = [PY, "-m", "catalyst_dsl"]


def commands(project: Path, kai: Path | None) -> dict[str, tuple[list[str], Path]]:
    """Name -> (argv, working directory)."""
    cmds = {
        "catalyst check research.yaml": ([*CATALYST, "check", "research.yaml"], project),
        "catalyst check --no-cache research.yaml": ([*CATALYST, "check", "--no-cache", "research.yaml"], project),
        'python -c "import yaml, click"': ([PY, "-c", "import yaml, click"], project),
        "catalyst --version": ([*CATALYST, "--version"], project),
        'python -c "import click"': ([PY, "-c", "import click"], project),
    }
    if kai is not None:
        kai_file = ".playbooks/playbooks/tpl.yaml"
        cmds["kai check tpl.yaml (node)"] = (["node", str(kai / "bin" / "cli.js"), "check", kai_file], project)
        cmds["catalyst check tpl.yaml"] = ([*CATALYST, "check", kai_file], project)
    return cmds


PAIRS = [
    ("catalyst check research.yaml", 'python -c "import yaml, click"', "target <= 1.3x"),
    ("catalyst check --no-cache research.yaml", 'python -c "import yaml, click"', "target <= 1.3x"),
    ("catalyst --version", 'python -c "import click"', "target <= 1.1x"),
    ("catalyst check tpl.yaml", "kai check tpl.yaml (node)", "target <= 1.0x"),
    ("catalyst check research.yaml", "kai check tpl.yaml (node)", "target <= 1.0x (same size)"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--kai", type=Path, help="a checkout of tcanaud/playbook (kai's checker)")
    args = parser.parse_args()
    kai = args.kai.resolve() if args.kai else None
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        (project / ".playbooks" / "playbooks").mkdir(parents=True)
        shutil.copy(ROOT / "playbooks" / "research.yaml", project / "research.yaml")
        if kai is not None:
            shutil.copy(
                kai / "templates" / "core" / "playbook.tpl.yaml", project / ".playbooks" / "playbooks" / "tpl.yaml"
            )
        env = child_env(Path(tmp) / "pycache", {"XDG_CACHE_HOME": str(Path(tmp) / "cache-home")})
        cmds = commands(project, kai)
        print(f"before: {machine()}")
        for argv, cwd in cmds.values():  # writes the .pyc files and the check cache; not counted
            measure(argv, cwd, env)
        runs: dict[str, list[Run]] = {name: [] for name in cmds}
        for _ in range(args.rounds):
            for name, (argv, cwd) in cmds.items():
                runs[name].append(measure(argv, cwd, env))
        print(f"after:  {machine()}")
        print(f"{args.rounds} rounds, interleaved; CPU = user + system of the child; min / median / max")
        for name, measured in runs.items():
            print(f"  {name:42} CPU {spread([r.cpu for r in measured])}   wall {spread([r.wall for r in measured])}")
        print("ratios of the medians (CPU, wall):")
        for left, right, target in PAIRS:
            if left in runs and right in runs:
                cpu = statistics.median(r.cpu for r in runs[left]) / statistics.median(r.cpu for r in runs[right])
                wall = statistics.median(r.wall for r in runs[left]) / statistics.median(r.wall for r in runs[right])
                print(f"  {left} / {right}: {cpu:.2f}x CPU, {wall:.2f}x wall ({target})")


if __name__ == "__main__":
    main()
