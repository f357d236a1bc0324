"""Benchmark: where the time of one `catalyst run FILE --what-if` goes, phase by phase.

Usage: python bench/whatif_phases.py FILE [--rounds R]

FILE (the corpus kitchen-sink, say) is copied into a temporary project with no settings
and checked once, so the what-if reads it from the check cache, as in bench/whatif.py
--after-check. Each round runs, as separate processes: `python -c pass` and `python -c
"import click"` (what any Python command line costs here before its own code), the
what-if as a whole process, and the what-if once more under a driver that stamps the
time as each phase ends:

- click imported; catalyst's command line imported (`catalyst_dsl.cli.main`, `cli.run`);
- the command parsed, the project found, the check's modules imported ("to the check");
- the check before the plan (`runtime/preflight.checked`), and within it the reading of
  the playbook's cache entry (`CheckCache._decode`);
- the plan (`Session.plan`: the run-time's imports and the simulation of every step);
- printing it.

A third process per round runs the driver with the run-time imported before the command
starts, so that its plan phase is the simulation of the steps alone. Printed: the machine
and its load, and min / median / max in milliseconds of each figure. What the phases do
not cover (the interpreter's start before the driver's first line, its exit after the
last) is the whole process less their sum.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from processes import child_env, machine, measure  # noqa: E402

# Run in the child: stamps each phase's end; prints the stamps as JSON on stderr's last line.
DRIVER = r"""
import sys, time
start = time.perf_counter()
stamps = []
def stamp(name):
    stamps.append((name, time.perf_counter()))
import click
stamp("import click")
import catalyst_dsl.cli.main, catalyst_dsl.cli.run
stamp("import catalyst's command line")
if sys.argv[1] == "--imported":  # the run-time imported up front: the plan is then its simulation
    del sys.argv[1]
    import catalyst_dsl.runtime.lifecycle.session, catalyst_dsl.runtime.engine.engine
    import catalyst_dsl.runtime.simulation.simulator
    import catalyst_dsl.runtime.simulation.recording, catalyst_dsl.runtime.simulation.planning
    import catalyst_dsl.runtime.values.evaluate, catalyst_dsl.report.plan
    import catalyst_dsl.runtime.actions.files, catalyst_dsl.runtime.actions.console, catalyst_dsl.syntax.pyyaml
    import catalyst_dsl.project.check, catalyst_dsl.runtime.lifecycle.preflight
    stamp("import the run-time first (--imported)")
from catalyst_dsl.runtime.lifecycle import preflight, session
from catalyst_dsl.project.cache import store
decoding = [0.0]
def timed(owner, name, before=None, after=None, add=None):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        if before: stamp(before)
        began = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            if add is not None: add[0] += time.perf_counter() - began
            if after: stamp(after)
    setattr(owner, name, wrapper)
timed(preflight, "checked", before="to the check", after="the check")
timed(store.CheckCache, "_decode", add=decoding)
timed(session.Session, "plan", before="to the plan", after="the plan")
timed(click, "echo", before="to the printing", after="printing")
def report():
    import json
    phases, last = {}, start
    for name, at in stamps:
        phases[name] = phases.get(name, 0.0) + (at - last)
        last = at
    phases["of the check: reading the cache entry"] = decoding[0]
    sys.stderr.write("\n" + json.dumps({k: round(v * 1000, 2) for k, v in phases.items()}) + "\n")
import atexit
atexit.register(report)
sys.argv = ["catalyst", *sys.argv[1:]]
catalyst_dsl.cli.main.main()
"""

ORDER = [
    "import click",
    "import catalyst's command line",
    "import the run-time first (--imported)",
    "to the check",
    "the check",
    "of the check: reading the cache entry",
    "to the plan",
    "the plan",
    "to the printing",
    "printing",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "catalyst.toml").write_text("", encoding="utf-8")
        name = args.file.name
        shutil.copy(args.file, project / name)
        env = child_env(Path(tmp) / "pycache", {"XDG_CACHE_HOME": str(Path(tmp) / "cache-home")})
        python = sys.executable
        # The driver runs with `-c`, so its path (and the plugin names the cache keeps for
        # it) differs from `-m catalyst_dsl`'s: each is checked once its own way first.
        for argv in ([python, "-m", "catalyst_dsl", "check", name], [python, "-c", DRIVER, "check", name]):
            subprocess.run(
                argv, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
            )
        whole = [python, "-m", "catalyst_dsl", "run", name, "--what-if"]
        baselines = {
            "python -c pass": [python, "-c", "pass"],
            'python -c "import click"': [python, "-c", "import click"],
        }
        print(f"before: {machine()}")
        for argv in (whole, [python, "-c", DRIVER, "run", name, "--what-if"]):  # .pyc files; not counted
            subprocess.run(
                argv, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
            )
        figures: dict[str, list[float]] = {label: [] for label in [*baselines, "the what-if, whole process"]}
        phases: dict[str, list[float]] = {label: [] for label in ORDER}
        imported: dict[str, list[float]] = {label: [] for label in ORDER}
        for _ in range(args.rounds):
            for label, argv in baselines.items():
                figures[label].append(measure(argv, project, env).wall * 1000)
            figures["the what-if, whole process"].append(measure(whole, project, env).wall * 1000)
            for found, first in ((phases, []), (imported, ["--imported"])):
                done = subprocess.run(
                    [python, "-c", DRIVER, *first, "run", name, "--what-if"],
                    cwd=project,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                    check=False,
                )
                stamped = json.loads(done.stderr.strip().splitlines()[-1])
                for label in ORDER:
                    found[label].append(stamped.get(label, 0.0))
        print(f"after:  {machine()}")
        print(f"{args.rounds} rounds, interleaved; wall time in ms, min / median / max")
        for label, values in figures.items():
            print(f"  {label:44} {_spread(values)}")
        print("  the what-if under the driver, by phase:")
        for label in ORDER:
            if label != "import the run-time first (--imported)":
                print(f"    {label:42} {_spread(phases[label])}")
        print("  the same with the run-time imported first, so that `the plan` is its simulation:")
        for label in ORDER:
            print(f"    {label:42} {_spread(imported[label])}")
        covered = statistics.median(
            sum(phases[label][i] for label in ORDER if not label.startswith("of the check")) for i in range(args.rounds)
        )
        print(
            f"  the phases together, median {covered:.1f}; "
            f"the whole process less the phases (Python's start and exit): "
            f"{statistics.median(figures['the what-if, whole process']) - covered:.1f}"
        )


def _spread(values: list[float]) -> str:
    return f"{min(values):7.1f} / {statistics.median(values):7.1f} / {max(values):7.1f}"


if __name__ == "__main__":
    main()
