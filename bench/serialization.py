"""Records as JSON: reading a check cache entry, writing the IR, saving and reading snapshots.

    python3 bench/serialization.py FILE [--rounds N] [--against CHECKOUT]

FILE is a playbook (the figures in bench/README.md use the corpus's kitchen-sink). Each
round runs one fresh process per checkout, its collector tuned as the command line tunes
it, which prints CPU times (`time.process_time`), each thing done first (set-up and the
imports it needs included, as the command that does it once pays them) and then at its
best of 10 more:

- FILE's check cache entry read by the cache's own codec (the entry written once, by the
  first process: an entry is the same in every checkout measured); first in a process
  that has read none, so the field lists of the classes it names are worked out, as in a
  what-if;
- the IR in the form fingerprints hash, as a run's start writes it;
- the IR's printed JSON (`catalyst compile`);
- a snapshot's save: the first encoding, then a 100-step run's journal encoded after
  every step as each save does (best of 5 runs, a step's share);
- reading a 100-step snapshot file;
- where the checkout has `catalyst_dsl._internal.serialization`, the cache entry's result
  read as a format of it (an object per record, union members tagged, every field checked
  against its annotation) instead: what keeps the cache's reader its own.

With `--against`, another checkout (e.g. `git worktree add DIR main`) runs in the same
rounds, alternately; printed: min / median / max of each figure over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from processes import machine  # noqa: E402

CHILD = r'''
from catalyst_dsl._internal.collector import tune_process

tune_process()
import json, sys, tempfile, time
from pathlib import Path

from catalyst_dsl.compiler import compile_path
from catalyst_dsl.project.cache import codec

clock = time.process_time
path, entry_file = sys.argv[1], Path(sys.argv[2])
figures = {}
result = compile_path(path)
playbook, source = result.playbook, result.source
kept = {"playbook": playbook, "diagnostics": result.diagnostics, "calls": result.calls}


def first_and_best(run, repeat=10):
    started = clock()
    run()
    first = clock() - started
    return first, min(_timed(run) for _ in range(repeat))


def _timed(run):
    started = clock()
    run()
    return clock() - started


if not entry_file.exists():
    entry_file.write_bytes(codec._Encoder(path, source).encode(kept))
    print("{}")
    sys.exit()
entry = entry_file.read_bytes()
figures["cache entry, the cache's reader"] = first_and_best(
    lambda: json.loads(entry, object_hook=codec._Decoder(path, source).hook)
)

from catalyst_dsl.ir import serialize

figures["IR, fingerprint form"] = first_and_best(lambda: json.dumps(serialize.converter().unstructure(playbook)))
figures["IR, printed JSON"] = first_and_best(lambda: serialize.to_json(playbook))

from catalyst_dsl.runtime.state import snapshot_codec
from catalyst_dsl.runtime.state.snapshot import PlaybookRef, StepRecord, new_run_state


def state_of(steps):
    state = new_run_state(PlaybookRef(name="p", file="p.yaml", fingerprint="0" * 16), inputs={"who": "world"})
    state.run_id = "20260101-000000-p-001"
    for i in range(steps):
        state.steps.append(
            StepRecord(path=f"steps/{i}", name=None, action="var", status="completed", attempts=1,
                       started_at="2026-01-01T00:00:00.000Z", duration=0.001, result={"value": i}, fingerprint="f" * 16)
        )
    return state


def journal():
    state, cache = state_of(0), snapshot_codec.JournalCache()
    for step in state_of(100).steps:
        state.steps.append(step)
        snapshot_codec.encode_parts(state, cache)


started = clock()
snapshot_codec.encode(state_of(1))
first_save = clock() - started
figures["snapshot, a step's save"] = (first_save, min(_timed(journal) for _ in range(5)) / 100)
with tempfile.TemporaryDirectory() as folder:
    file = Path(folder) / "run-20260101-000000-p-001.json"
    file.write_bytes(snapshot_codec.encode(state_of(100)))
    figures["snapshot, a 100-step file read"] = first_and_best(lambda: snapshot_codec.read(file))

try:
    from catalyst_dsl._internal import serialization
except ImportError:
    serialization = None
if serialization is not None:
    import typing

    from catalyst_dsl.checks.call_sites import CallSite
    from catalyst_dsl.diagnostics.model import Diagnostic
    from catalyst_dsl.diagnostics.severity import Severity
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.syntax.expr import nodes as ast
    from catalyst_dsl.syntax.source import Span

    def write_span(span):
        packed = span.packed_in(source)
        return packed if packed is not None else [span.file, span.line, span.col, span.end_line, span.end_col]

    def read_span(value):
        made = source.unpack(value) if type(value) is int else Span(*value)
        if made is None:
            raise ValueError("no span of the file")
        return made

    unions = (ast.Expr, ast.Reference, ast.Part, ir.Value)
    form = serialization.Format(
        positions=True,
        dropped=("smap", "expected"),
        tag="node",
        tagged=(member for union in unions for member in typing.get_args(union)),
        leaves={Span: (write_span, read_span), Severity: (lambda s: s.value, Severity)},
    )
    data = json.dumps(form.unstructure(kept), ensure_ascii=False, separators=(",", ":")).encode()

    def as_format():
        read = json.loads(data)
        form.structure(read["playbook"], ir.Playbook)
        form.structure(read["diagnostics"], list[Diagnostic])
        form.structure(read["calls"], list[CallSite])

    figures["cache entry, read as a format"] = first_and_best(as_format)
    figures["cache entry, bytes: the cache's / a format's"] = (len(entry), len(data))
print(json.dumps(figures))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path)
    options = parser.parse_args()
    checkouts = [("this checkout", ROOT)] + ([("against", options.against.resolve())] if options.against else [])
    found: dict[str, dict[str, list]] = {name: {} for name, _ in checkouts}
    print(f"before: {machine()}")
    with tempfile.TemporaryDirectory() as folder:
        entry = Path(folder) / "entry.json"
        for round_ in range(-1, options.rounds):  # round -1 writes the entry
            for name, root in checkouts[:1] if round_ < 0 else checkouts if round_ % 2 == 0 else checkouts[::-1]:
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, str(options.file.resolve()), str(entry)],
                    cwd=root,  # `python -c` looks in its working directory first
                    env={**os.environ, "PYTHONPATH": str(root)},
                    capture_output=True,
                    text=True,
                    check=True,
                )
                for label, pair in json.loads(done.stdout).items():
                    found[name].setdefault(label, []).append(pair)
    print(f"after:  {machine()}")
    print(f"{options.rounds} rounds; CPU ms, min / median / max: first (set-up included), then the best of the rest")
    for name, figures in found.items():
        print(f"{name}:")
        for label, pairs in figures.items():
            if label.startswith("cache entry, bytes"):
                print(f"  {label:48} {pairs[0][0]:,} / {pairs[0][1]:,}")
                continue
            first, then = ([pair[i] * 1000 for pair in pairs] for i in (0, 1))
            print(f"  {label:48} first {_spread(first)}   then {_spread(then, 3)}")


def _spread(values: list[float], digits: int = 2) -> str:
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f}"


if __name__ == "__main__":
    main()
