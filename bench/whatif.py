"""Benchmark: `--what-if` of the corpus's YAML playbooks, whole processes, beside the original engine.

Usage: python bench/whatif.py CORPUS [--rounds R] [--xe DIR] [--against CHECKOUT] [--after-check]

CORPUS is the `catalyst/` folder of the shared corpus (../shared/corpus/catalyst from a
checkout). Its YAML playbooks are copied into a temporary project and each is planned
with `catalyst run FILE --what-if` (`python -m catalyst_dsl` from this checkout); with
`--xe DIR`, a built checkout of the original Catalyst engine (bench/README.md says how
to build it), `node DIR/bin/catalyst.js run ./FILE --what-if` runs in the same round,
interleaved; with `--against CHECKOUT`, another checkout of catalyst (a `git worktree`
of an older commit) plans its own copy of the project in the same rounds, and the
ratios of the CPU minimums and medians are printed. With `--after-check`, `catalyst check`
runs once on the project first (as
CI does before planning), so each what-if reads its playbook's compiled form from the
check cache instead of parsing it. Printed: the machine and its load, each command with
its exit code, CPU (user + system of the child) and wall time as min / median / max, the
ratio of the wall medians (catalyst / original), and the spread of that ratio round by
round. No network: catalyst shows reads as unknown without --refresh.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import Run, child_env, machine, measure, spread  # noqa: E402

PLAYBOOKS = [
    "cli-commands/kitchen-sink.yaml",
    "cli-commands/init.yaml",
    "playbooks/install-ai-providers.yaml",
    "playbooks/update-pull-request.yaml",
    "fixtures/valid-minimal.yaml",
    "fixtures/valid-complete.yaml",
    "fixtures/edge-cases.yaml",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--xe", type=Path, help="a built checkout of the original Catalyst engine")
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout of catalyst (a `git worktree` of an older commit, say), run in the same rounds",
    )
    parser.add_argument(
        "--after-check",
        action="store_true",
        help="run `catalyst check` on the project first (not counted), as CI does before a plan: "
        "the what-ifs then read the compiled playbooks from the check cache",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # Each checkout plans in a project of its own, with its own bytecode and cache folders.
        sides = {"catalyst": child_env(Path(tmp) / "pycache", {"XDG_CACHE_HOME": str(Path(tmp) / "cache-home")})}
        if args.against is not None:
            against = child_env(Path(tmp) / "pycache-against", {"XDG_CACHE_HOME": str(Path(tmp) / "cache-against")})
            against["PYTHONPATH"] = str(args.against.resolve())
            sides["against"] = against
        projects = {}
        for side in sides:
            project = projects[side] = Path(tmp) / f"project-{side}"
            project.mkdir()
            (project / "catalyst.toml").write_text("", encoding="utf-8")
            for relative in PLAYBOOKS:
                shutil.copy(args.corpus / relative, project / Path(relative).name)
        commands: dict[str, tuple[list[str], Path, dict[str, str]]] = {}
        for relative in PLAYBOOKS:
            name = Path(relative).name
            for side, env in sides.items():
                argv = [sys.executable, "-m", "catalyst_dsl", "run", name, "--what-if"]
                commands[f"{side} run {name} --what-if"] = (argv, projects[side], env)
            if args.xe is not None:
                argv = ["node", str(args.xe.resolve() / "bin" / "catalyst.js"), "run", f"./{name}", "--what-if"]
                commands[f"original run ./{name} --what-if"] = (argv, projects["catalyst"], sides["catalyst"])
        print(f"before: {machine()}")
        if args.after_check:
            for side, env in sides.items():
                check_argv = [sys.executable, "-m", "catalyst_dsl", "check", *(Path(r).name for r in PLAYBOOKS)]
                print(f"{side} check first: exit {measure_code(check_argv, projects[side], env)}")
        codes = {}
        for label, (argv, cwd, env) in commands.items():  # .pyc files and the check cache; not counted
            codes[label] = measure_code(argv, cwd, env)
        runs: dict[str, list[Run]] = {label: [] for label in commands}
        for _ in range(args.rounds):
            for label, (argv, cwd, env) in commands.items():
                runs[label].append(measure(argv, cwd, env, ok=range(256)))
        print(f"after:  {machine()}")
        print(f"{args.rounds} rounds, interleaved; CPU = user + system of the child; min / median / max")
        for label, measured in runs.items():
            print(
                f"  {label:58} exit {codes[label]:<3} CPU {spread([r.cpu for r in measured])}   "
                f"wall {spread([r.wall for r in measured])}"
            )
        if args.against is not None:
            print("CPU, catalyst / against: the ratio of the minimums and of the medians")
            for relative in PLAYBOOKS:
                name = Path(relative).name
                ours = [r.cpu for r in runs[f"catalyst run {name} --what-if"]]
                theirs = [r.cpu for r in runs[f"against run {name} --what-if"]]
                print(
                    f"  {name:34} min {min(ours) / min(theirs):.2f}x   "
                    f"median {statistics.median(ours) / statistics.median(theirs):.2f}x"
                )
        if args.xe is not None:
            print("wall, catalyst / original: the ratio of the medians; then the ratio in each round (the two")
            print(
                "runs of a file are next to each other in a round) as min / median / max, "
                "and the rounds at or under 0.5x:"
            )
            for relative in PLAYBOOKS:
                name = Path(relative).name
                ours = [r.wall for r in runs[f"catalyst run {name} --what-if"]]
                theirs = [r.wall for r in runs[f"original run ./{name} --what-if"]]
                paired = [a / b for a, b in zip(ours, theirs)]
                under = sum(ratio <= 0.5 for ratio in paired)
                print(
                    f"  {name:34} {statistics.median(ours) / statistics.median(theirs):.2f}x (target <= 0.5x)   "
                    f"per round {spread(paired, 'x', 2)}, {under} of {len(paired)} at or under 0.5x"
                )


def measure_code(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    import subprocess

    return subprocess.run(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    ).returncode


if __name__ == "__main__":
    main()
