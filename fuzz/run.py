"""Coverage-guided fuzzing of catalyst's readers and language server with atheris.

Usage:
    python3 fuzz/run.py [--seconds S] [--keep-corpus] [TARGET ...]

Each target (fuzz/targets.py: yaml, markdown, expression, kai, cleo, lsp; all when none
is named) runs in a process of its own for S seconds (default 5: with the few seconds
each takes to start, the six take about a minute, the run CI makes), starting from the
repository's cases (fuzz/seeds.py). An
input that makes a target raise, hang past the per-input timeout or use too much memory
is a crash: libFuzzer's file of it is copied to tests/data/fuzz/TARGET/, where
tests/test_fuzz_regressions.py runs it from then on (it fails until the bug is fixed;
commit the file with the fix). The exit status is 1 when any target crashed, 2 when
atheris is not installed.

With --keep-corpus the inputs libFuzzer found interesting are kept in .fuzz-corpus/TARGET/
(ignored by git) and the next run starts from them too: the way to fuzz for hours.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
CRASHES = REPOSITORY / "tests" / "data" / "fuzz"
KEPT_CORPUS = REPOSITORY / ".fuzz-corpus"
#: One input taking longer than this is a finding (a hang, or time that grows too fast).
INPUT_TIMEOUT_SECONDS = 20
#: libFuzzer's memory bound for the process; the readers stay far below it.
RSS_LIMIT_MB = 2048
#: Mutations grow inputs up to this: large enough for a playbook, small enough to stay fast.
MAX_INPUT_BYTES = 32 * 1024


def main() -> int:
    if sys.argv[1:2] == ["--worker"]:
        return _worker(sys.argv[2], sys.argv[3:])
    sys.path.insert(0, str(REPOSITORY))
    from fuzz.targets import TARGETS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", choices=[[], *TARGETS], metavar="TARGET", default=[])
    parser.add_argument("--seconds", type=int, default=5, help="how long each target runs")
    parser.add_argument("--keep-corpus", action="store_true", help=f"keep and reuse {KEPT_CORPUS.name}/TARGET/")
    args = parser.parse_args()
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("atheris is not installed: python3 -m pip install 'atheris==3.0.0'", file=sys.stderr)
        return 2
    crashed = []
    for target in args.targets or list(TARGETS):
        if not _fuzz(target, args.seconds, args.keep_corpus):
            crashed.append(target)
    print(
        f"fuzzed {len(args.targets or TARGETS)} target(s), {args.seconds} s each: "
        + (f"crashes in {', '.join(crashed)}" if crashed else "no crash")
    )
    return 1 if crashed else 0


def _fuzz(target: str, seconds: int, keep: bool) -> bool:
    """One target in a process of its own; False when it crashed."""
    from fuzz.seeds import seeds

    with tempfile.TemporaryDirectory(prefix=f"catalyst-fuzz-{target}-") as tmp:
        work = Path(tmp)
        seed_dir, artifacts = work / "seeds", work / "artifacts"
        seed_dir.mkdir()
        artifacts.mkdir()
        for n, seed in enumerate(seeds(target)):
            (seed_dir / f"seed-{n:04d}").write_bytes(seed)
        corpus = KEPT_CORPUS / target if keep else work / "corpus"
        corpus.mkdir(parents=True, exist_ok=True)
        argv = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            target,
            f"-max_total_time={seconds}",
            f"-timeout={INPUT_TIMEOUT_SECONDS}",
            f"-rss_limit_mb={RSS_LIMIT_MB}",
            f"-max_len={MAX_INPUT_BYTES}",
            f"-artifact_prefix={artifacts}/",
            "-print_final_stats=1",
            str(corpus),
            str(seed_dir),
        ]
        path = os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path, "CATALYST_CODE_BUNDLE": "off"}
        started = time.monotonic()
        done = subprocess.run(argv, env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        elapsed = time.monotonic() - started
        found = sorted(artifacts.iterdir())
        runs = next(
            (line.split()[-1] for line in done.stdout.splitlines() if "stat::number_of_executed_units" in line), "?"
        )
        print(f"{target}: {runs} inputs in {elapsed:.0f} s, exit {done.returncode}")
        if done.returncode == 0 and not found:
            return True
        print(done.stdout[-6000:])
        for artifact in found:
            kept = CRASHES / target / artifact.name
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(artifact, kept)
            print(f"{target}: kept {kept.relative_to(REPOSITORY)} (a regression case: fix it, then commit it)")
        return False


def _worker(target: str, flags: list[str]) -> int:
    import atheris

    from fuzz.seeds import seeds
    from fuzz.targets import TARGETS

    run = TARGETS[target]
    # catalyst imports most of its modules on first use: the seeds import what the target
    # reaches, and atheris instruments each module's code as it is imported (the code
    # bundle, which would serve it past atheris's hook, is off: see _fuzz).
    with atheris.instrument_imports(include=["catalyst_dsl"]):
        for seed in seeds(target):
            run(seed)
    atheris.Setup([sys.argv[0], *flags], run)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
