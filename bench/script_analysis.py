"""What the bash analysis costs, and what it catches, beside the escaping lexer it replaced.

    python3 bench/script_analysis.py [--rounds N] [--old COMMIT]

Three figures, each min / median / max over the rounds, CPU and wall time:
- the first analysis in a fresh process, timed inside it (importing tree-sitter and its
  bash grammar included), which a `catalyst check` or a run with a bash value pays once;
- one analysis of each script of the attack list in tests/runtime/values/test_script_references.py
  (every hostile shape, each a new text, so nothing is served from the cache);
- the same scripts through the escaping lexer at COMMIT (default fabd8e6, the last
  commit that had it), read from git into a temporary module.
And how many of the hostile shapes each refuses before a run, and what three large
scripts cost (a long one, one command of many values, deep nesting).
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from processes import child_env, machine, spread  # noqa: E402


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _git_show(commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def _load(name: str, source: str, folder: Path):
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _old_lexer(commit: str):
    """The escaping lexer of `commit` and the slot records it used, loaded from git (today's
    Slot has lost fields the lexer sets); the expression nodes they name are today's."""
    folder = Path(tempfile.mkdtemp())
    slots = _git_show(commit, "catalyst_dsl/syntax/shell/slots.py").replace(
        "from catalyst_dsl.syntax import expr_ast as ast", "from catalyst_dsl.syntax.expr import nodes as ast"
    )
    _load("old_slots", slots, folder)
    lexer = _git_show(commit, "catalyst_dsl/syntax/shell/bash.py").replace(
        "from catalyst_dsl.syntax.shell.slots import", "from old_slots import"
    )
    return _load("old_bash", lexer, folder).BashLexer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--old", default="fabd8e6")
    args = parser.parse_args()
    print("machine:", machine())

    # The first analysis in a fresh process, timed inside it (process start and imports
    # of the rest of the package left out): tree-sitter and its grammar load here.
    first = (
        "import time; from catalyst_dsl.syntax.shell import bash_analysis; "
        "c, w = time.process_time(), time.perf_counter(); "
        "bash_analysis('echo {{ v }}'); print(time.process_time() - c, time.perf_counter() - w)"
    )
    cpu, wall = [], []
    with tempfile.TemporaryDirectory() as pycache:
        env = child_env(Path(pycache))
        for _ in range(args.rounds + 1):
            out = subprocess.run(
                [sys.executable, "-c", first], cwd=ROOT, env=env, capture_output=True, text=True, check=True
            )
            c, w = map(float, out.stdout.split())
            cpu.append(c * 1000)
            wall.append(w * 1000)
    print("first analysis in a fresh process (tree-sitter loaded):")
    print("  cpu ", spread(cpu[1:], "ms", 2))
    print("  wall", spread(wall[1:], "ms", 2))

    from catalyst_dsl.syntax.shell import bash_analysis
    from catalyst_dsl.syntax.shell.bash import refs
    from catalyst_dsl.syntax.expr.templates import parse_template
    from tests.runtime.values.test_script_references import ALLOWED, REFUSED

    scripts = [s.replace("{{v}}", "{{ v }}") for s in REFUSED + ALLOWED]
    old = _old_lexer(args.old)
    for name, analyse in (
        ("tree-sitter analysis", lambda s: bash_analysis(s)),
        ("escaping lexer", lambda s: old(s, parse_template(s).parts).run()),
    ):
        cpu, wall = [], []
        for round_ in range(args.rounds):
            refs.analyze.cache_clear()
            started, started_cpu = time.perf_counter(), _cpu()
            for script in scripts:
                analyse(script + f"\n# {round_}")
            wall.append((time.perf_counter() - started) / len(scripts) * 1000)
            cpu.append((_cpu() - started_cpu) / len(scripts) * 1000)
        print(f"{name}, one script ({len(scripts)} scripts a round):")
        print("  cpu ", spread(cpu, "ms", 3))
        print("  wall", spread(wall, "ms", 3))

    # Size: a long script, one command of many values, deep nesting (refused past 64 levels).
    shapes = {
        "2,000 lines of assignments and arithmetic": "\n".join(
            f"x{i}={{{{ v }}}}; printf '%s' \"$x{i}\" | tee out{i}; n{i}=3; echo $(( n{i} + 1 ))" for i in range(2000)
        ),
        "one command of 4,000 values": "printf '%s' " + " ".join("{{ v }}" for _ in range(4000)),
        "200 nested command substitutions": "x=" + "".join("$(echo {{ v }} " for _ in range(200)) + ")" * 200,
    }
    for name, script in shapes.items():
        times = []
        for round_ in range(3):
            refs.analyze.cache_clear()
            started = _cpu()
            bash_analysis(script + f"\n# {round_}")
            times.append((_cpu() - started) * 1000)
        print(f"{name} ({len(script):,} bytes): cpu {spread(times, 'ms', 0)}")

    hostile = [s.replace("{{v}}", "{{ v }}") for s in REFUSED]
    new_refused = sum(bool(bash_analysis(s).refusals) for s in hostile)
    old_refused = sum(
        any(slot.context.name == "UNSAFE" for slot in old(s, parse_template(s).parts).run()) for s in hostile
    )
    print(
        f"hostile shapes refused before a run: tree-sitter analysis {new_refused} of {len(hostile)}, "
        f"escaping lexer {old_refused} of {len(hostile)}"
    )
    print("machine:", machine())


if __name__ == "__main__":
    main()
