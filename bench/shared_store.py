"""Benchmark: a durable step with runs kept in PostgreSQL on loopback (the shared store).

Usage: python bench/shared_store.py [--rounds N]   (default 11)

Starts a PostgreSQL server of its own from the machine's binaries (as the tests do:
tests/helpers/postgres.py; fsync and synchronous_commit on, as shipped), then measures:

- whole `catalyst run` processes of 1 and 100 `var` steps with CATALYST_STATE_URL set:
  (the 100-step run - the 1-step run) / 99 is a durable step's share of a real run, in
  wall time and in CPU (catalyst's own; the server's is not counted), round by round;
- one save in process, a journal record (one statement, committed and synced by the
  server), wall time, median of 200 saves of a running run, and a full snapshot (a status
  change), median of 50.

Prints min / median / max with the machine and its load.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import processes  # noqa: E402

from tests.helpers.postgres import running_server  # noqa: E402


def project(root: Path, steps: int) -> Path:
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("")
    lines = ["name: noop", "description: var steps", "owner: Engineer", "steps:"]
    lines += [f"  - var: v{n}\n    value: {n}" for n in range(steps)]
    (root / "playbooks" / "noop.yaml").write_text("\n".join(lines) + "\n")
    return root


def whole_process(url: str, rounds: int) -> tuple[list[float], list[float]]:
    """(wall, CPU) of a step's share, in ms, round by round."""
    with tempfile.TemporaryDirectory() as tmp:
        env = processes.child_env(
            Path(tmp) / "pycache", {"CATALYST_STATE_URL": url, "CATALYST_REPOSITORY": "bench/shared-store"}
        )
        roots = {size: project(Path(tmp) / str(size), size) for size in (1, 100)}
        argv = [sys.executable, "-m", "catalyst_dsl", "run", "noop", "--mode", "autonomous"]
        for root in roots.values():
            processes.measure(argv, root, env, ok=(0,))  # bytecode written, the check cached, tables made
        walls, cpus = [], []
        for _ in range(rounds):
            one = processes.measure(argv, roots[1], env, ok=(0,))
            hundred = processes.measure(argv, roots[100], env, ok=(0,))
            walls.append((hundred.wall - one.wall) / 99 * 1000)
            cpus.append((hundred.cpu - one.cpu) / 99 * 1000)
        return walls, cpus


def in_process(url: str) -> tuple[list[float], list[float]]:
    """Wall time of one journal record's save and of one full snapshot's, in ms."""
    import os

    os.environ["CATALYST_STATE_URL"] = url
    os.environ["CATALYST_REPOSITORY"] = "bench/shared-store-saves"
    from click.testing import CliRunner

    from catalyst_dsl.cli.main import cli
    from catalyst_dsl.runtime.state.choice import open_store

    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp) / "p", 100)
        here = os.getcwd()
        os.chdir(root)
        try:
            result = CliRunner().invoke(cli, ["run", "noop", "--mode", "autonomous"])
            assert result.exit_code == 0, result.output
            store = open_store(SimpleNamespace(root=root, config=SimpleNamespace(state_url=None)), root / ".xe/runs")
            [run_id] = store.run_ids()
            state = store.load(run_id)
            store.reopen(state)
            state.status, state.ended_at = "running", None
            store.save(state)
            records = []
            for n in range(200):
                state.in_flight = f"steps/{n % 100}"
                start = time.perf_counter()
                store.save(state)
                records.append((time.perf_counter() - start) * 1000)
            snapshots = []
            for n in range(50):
                state.status = "paused" if n % 2 == 0 else "running"
                start = time.perf_counter()
                store.save(state)
                snapshots.append((time.perf_counter() - start) * 1000)
            return records, snapshots
        finally:
            os.chdir(here)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    print(processes.machine())
    with running_server() as server:
        walls, cpus = whole_process(server.url, args.rounds)
        print(f"a durable var step, whole `catalyst run` processes of 100 against 1 step ({args.rounds} rounds):")
        print(f"  wall {processes.spread(walls, 'ms')}; catalyst's CPU {processes.spread(cpus, 'ms')}")
        records, snapshots = in_process(server.url)
        print(f"one save in process, wall: a journal record {processes.spread(records, 'ms')} (200 saves);")
        print(f"  a full snapshot {processes.spread(snapshots, 'ms')} (50 saves)")
    print(processes.machine())


if __name__ == "__main__":
    main()
