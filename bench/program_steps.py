"""What a program step costs a whole run: 20 `bash` steps, with and without a value, beside
20 `var` steps.

    python3 bench/program_steps.py [--rounds N] [--against CHECKOUT]

Runs `catalyst run` of three generated playbooks (twenty `bash: "true"` steps; twenty
`printf '%s' {{ inputs.v }}` steps given a hostile value; twenty `var` steps, which start
no program) in a temporary git project and prints the CPU time of each whole process
(user + system of catalyst and every process it waited for: the launcher, its keepers
and the programs) and its wall time, min / median / max over the rounds, after one
uncounted round that fills the bytecode cache (`processes.py`). Its last lines say what
one program step adds: (the median of the `bash` run - the median of the `var` run) / 20,
in CPU milliseconds, and the same from the minima (the rounds other work disturbed least;
on a shared machine the medians move with its load). With `--against`, the same for
another checkout of catalyst (e.g. a `git worktree` of an older commit), round by round
beside this one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from processes import child_env, machine, measure, spread  # noqa: E402

STEPS = 20
PLAIN = "\n".join('  - bash: "true"\n    writes: []' for _ in range(STEPS))
VALUED = "\n".join("  - bash: \"printf '%s' {{ inputs.v }} > /dev/null\"\n    writes: []" for _ in range(STEPS))
VALUES = "\n".join(f"  - var: v{n}\n    value: {n}" for n in range(STEPS))
RUNS = {
    "twenty": ["twenty"],
    "twentyv": ["twentyv", "-i", "v=x; touch PWNED"],
    "twentyvar": ["twentyvar"],
}


def _project(where: Path) -> None:
    import subprocess

    (where / "playbooks").mkdir()
    (where / "playbooks" / "twenty.yaml").write_text(
        f"name: twenty\ndescription: twenty programs\nowner: Engineer\nsteps:\n{PLAIN}\n", encoding="utf-8"
    )
    (where / "playbooks" / "twentyv.yaml").write_text(
        "name: twentyv\ndescription: twenty programs given a value\nowner: Engineer\ninputs:\n  - string: v\n"
        f"steps:\n{VALUED}\n",
        encoding="utf-8",
    )
    (where / "playbooks" / "twentyvar.yaml").write_text(
        f"name: twentyvar\ndescription: twenty values, no program\nowner: Engineer\nsteps:\n{VALUES}\n",
        encoding="utf-8",
    )
    subprocess.run(["git", "init", "-q"], cwd=where, check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path)
    options = parser.parse_args()
    print("machine:", machine())
    checkouts = [("this checkout", ROOT)] + ([("against", options.against.resolve())] if options.against else [])
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        _project(project)
        pycache = Path(tmp) / "pycache"
        envs = {label: child_env(pycache, {"PYTHONPATH": str(checkout)}) for label, checkout in checkouts}
        medians: dict[tuple[str, str], float] = {}
        minima: dict[tuple[str, str], float] = {}
        for name, args in RUNS.items():
            argv = [sys.executable, "-m", "catalyst_dsl", "run", *args, "--mode", "autonomous"]
            figures: dict[str, list] = {label: [] for label, _ in checkouts}
            for label, _ in checkouts:
                measure(argv, project, envs[label], ok=(0,))  # fills the bytecode cache
            for _ in range(options.rounds):
                for label, _ in checkouts:  # interleaved, so load hits both alike
                    figures[label].append(measure(argv, project, envs[label], ok=(0,)))
            for label, runs in figures.items():
                cpu = [r.cpu for r in runs]
                medians[name, label] = statistics.median(cpu)
                minima[name, label] = min(cpu)
                print(f"{name:9} {label:14} cpu {spread(cpu)}   wall {spread([r.wall for r in runs])}")
        for label, _ in checkouts:
            for how, figures in (("medians", medians), ("minima", minima)):
                step = (figures["twenty", label] - figures["twentyvar", label]) / STEPS * 1000
                valued = (figures["twentyv", label] - figures["twentyvar", label]) / STEPS * 1000
                print(
                    f"a program step, {label}, from the {how}: {step:.1f} ms CPU beyond a var step "
                    f"({valued:.1f} ms given a value)"
                )
    print("machine:", machine())


if __name__ == "__main__":
    main()
