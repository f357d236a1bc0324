"""Benchmark: what a playbook costs to compile and check, in machine instructions.

Usage: python bench/compile_instructions.py [BUILD ...]

The machine's speed moves with its host (README.md, "What the figures mean"), so a change
to the compiler's hot paths is judged by instructions, which do not. For each build (a
checkout or an unpacked `git archive COMMIT catalyst_dsl grammar`; default: this
checkout), `catalyst check --no-cache` runs under `valgrind --tool=callgrind` on two
libraries of generated playbooks of 20 steps (bench/library_graph.py's), 200 and 20 of
them; a playbook's share is the difference divided by 180, which leaves Python's start and
catalyst's imports out. 200 playbooks stay in one process (a check splits from 600).
Bytecode is written once per build before it is measured, as an installed catalyst has it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from library_graph import playbook  # noqa: E402
from processes import ROOT, machine  # noqa: E402

SIZES = (200, 20)


def library(folder: Path, count: int) -> Path:
    root = folder / f"library-{count}"
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    for i in range(count):
        (root / "playbooks" / f"flow-{i}.yaml").write_text(playbook(i, count, 20))
    return root


def instructions(build: Path, root: Path, pycache: Path) -> int:
    """The instructions of one `catalyst check --no-cache` of `root` with `build` first on
    the path. The interpreter is the real one (`sys.executable` may be a shell shim that
    valgrind would measure instead)."""
    python = os.path.realpath(sys.executable)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(build), PYTHONPYCACHEPREFIX=str(pycache), XDG_CACHE_HOME=str(pycache / "home"))
    command = [python, "-m", "catalyst_dsl", "check", "--no-cache"]
    subprocess.run(command, cwd=root, env=env, stdout=subprocess.DEVNULL, check=False)  # writes the bytecode
    out = pycache / "callgrind.out"
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind gave no count for {build}:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    builds = [Path(b).resolve() for b in sys.argv[1:]] or [ROOT]
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        roots = {count: library(Path(tmp), count) for count in SIZES}
        for i, build in enumerate(builds):
            pycache = Path(tmp) / f"pycache-{i}"
            counts = {count: instructions(build, roots[count], pycache) for count in SIZES}
            big, small = SIZES
            each = (counts[big] - counts[small]) / (big - small)
            print(
                f"{build}: {big} playbooks {counts[big]:,}, {small} playbooks {counts[small]:,}; "
                f"a playbook {each / 1e6:.2f}M instructions"
            )


if __name__ == "__main__":
    main()
