"""Benchmark: checking kai playbooks, whole processes, beside kai's own `check`.

Usage: python bench/kai_check.py [--rounds R] [--count N] [--kai DIR]

A project with N kai playbooks in `.playbooks/playbooks/` (kai's `auto-feature.yaml` from
the shared corpus, each copy with its own name and step ids, 104 lines) and their command
files. Measured in interleaved rounds, each figure one child process:

- `catalyst check .playbooks/playbooks/` of all N, cold (`--no-cache`) and warm (the
  check cache filled by the previous round);
- `catalyst check one.yaml` of one of them, cold and warm;
- with `--kai DIR` (a checkout of kai's `@tcanaud/playbook`; its `bin/cli.js` runs on Node
  with no dependencies): `node DIR/bin/cli.js check one.yaml` on the same file, and kai's
  checker over all N files, one process per file as kai's CLI takes one file (summed).

Printed: the machine and its load before and after, CPU (user + system) and wall time as
min / median / max, and the ratios of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import ROOT, Run, child_env, machine, measure, spread  # noqa: E402

PY = sys.executable
CATALYST = [PY, "-m", "catalyst_dsl"]
CORPUS = ROOT.parent / "shared" / "corpus" / "kai" / "auto-feature.yaml"
COMMANDS = (
    "speckit.plan",
    "speckit.tasks",
    "agreement.create",
    "speckit.implement",
    "agreement.check",
    "qa.plan",
    "qa.run",
    "feature.pr",
)


def project(root: Path, count: int) -> list[Path]:
    """Write the project; the playbook files, in order."""
    text = CORPUS.read_text(encoding="utf-8")
    folder = root / ".playbooks" / "playbooks"
    folder.mkdir(parents=True)
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    (root / ".claude" / "commands").mkdir(parents=True)
    for name in COMMANDS:
        (root / ".claude" / "commands" / f"{name}.md").write_text(f"Run {name}.\n", encoding="utf-8")
    files = []
    for i in range(count):
        path = folder / f"feature-{i:04d}.yaml"
        path.write_text(text.replace('name: "auto-feature"', f'name: "feature-{i:04d}"'), encoding="utf-8")
        files.append(path)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--kai", type=Path, help="a checkout of tcanaud/playbook (kai's checker)")
    args = parser.parse_args()
    kai = args.kai.resolve() if args.kai else None
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        files = project(root, args.count)
        one = files[0].relative_to(root).as_posix()
        env = child_env(Path(tmp) / "pycache", {"XDG_CACHE_HOME": str(Path(tmp) / "cache-home")})
        folder = ".playbooks/playbooks/"
        single = {
            f"catalyst check {args.count} kai playbooks, cold": [*CATALYST, "check", "--no-cache", folder],
            f"catalyst check {args.count} kai playbooks, warm": [*CATALYST, "check", folder],
            "catalyst check one kai playbook, cold": [*CATALYST, "check", "--no-cache", one],
            "catalyst check one kai playbook, warm": [*CATALYST, "check", one],
        }
        if kai is not None:
            single["kai check one.yaml (node)"] = ["node", str(kai / "bin" / "cli.js"), "check", one]
        print(f"before: {machine()}")
        for argv in single.values():  # writes the .pyc files and the check cache; not counted
            measure(argv, root, env)
        runs: dict[str, list[Run]] = {name: [] for name in single}
        if kai is not None:
            runs[f"kai check of {args.count} files, one process each (node)"] = []
        for _ in range(args.rounds):
            for name, argv in single.items():
                runs[name].append(measure(argv, root, env))
            if kai is not None:
                each = [
                    measure(["node", str(kai / "bin" / "cli.js"), "check", str(f.relative_to(root))], root, env)
                    for f in files
                ]
                runs[f"kai check of {args.count} files, one process each (node)"].append(
                    Run(sum(r.cpu for r in each), sum(r.wall for r in each), max(r.rss_mib for r in each))
                )
        print(f"after:  {machine()}")
        print(f"{args.rounds} rounds, interleaved; CPU = user + system of the child; min / median / max")
        for name, measured in runs.items():
            print(
                f"  {name:56} CPU {spread([r.cpu for r in measured])}   wall {spread([r.wall for r in measured])}   "
                f"max RSS {max(r.rss_mib for r in measured):.0f} MiB"
            )
        if kai is not None:
            print("ratios of the medians (CPU, wall):")
            pairs = [
                ("catalyst check one kai playbook, warm", "kai check one.yaml (node)"),
                ("catalyst check one kai playbook, cold", "kai check one.yaml (node)"),
                (
                    f"catalyst check {args.count} kai playbooks, cold",
                    f"kai check of {args.count} files, one process each (node)",
                ),
                (
                    f"catalyst check {args.count} kai playbooks, warm",
                    f"kai check of {args.count} files, one process each (node)",
                ),
            ]
            for left, right in pairs:
                cpu = statistics.median(r.cpu for r in runs[left]) / statistics.median(r.cpu for r in runs[right])
                wall = statistics.median(r.wall for r in runs[left]) / statistics.median(r.wall for r in runs[right])
                print(f"  {left} / {right}: {cpu:.2f}x CPU, {wall:.2f}x wall")


if __name__ == "__main__":
    main()
