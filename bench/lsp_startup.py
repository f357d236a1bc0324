"""Benchmark: how soon `catalyst lsp` gives a large library's first diagnostics.

Usage: python bench/lsp_startup.py [--playbooks 2000] [--steps 20] [--rounds 3] [--faulty K] [--baseline DIR]

N playbooks of S steps that call each other (bench/library_graph.py's, as
bench/check_cache.py writes them) are made in a temporary project; with `--faulty K`,
every K-th one also uses a name it never defines (a finding of the file's own, C501).
Each round starts the server over stdio, opens the first playbook and measures, from the
`didOpen`: the open file's own diagnostics; the library's first (the first publication
for a file that is not open: the first file's own findings as it is compiled, or, in a
library without any, the library check's, which it sends for every file it checks); and
the whole library's (the last publication before the server falls quiet for 2 s). Kinds,
interleaved round by round:

- cold: the project's check cache removed first (every file compiled);
- warm: the cache as the last session left it.

Each cold round is run right after a `catalyst check --no-cache` of the same library (its
wall time, the check split across processes as the server splits its own), and its figure
is printed beside that check's: the host's speed moves from hour to hour, and a small
piece of reference work does not follow it (bench/README.md), so the ratio is the figure
that compares across days.

With `--baseline DIR`, a directory holding another build (its `catalyst_dsl` and
`grammar`, such as `git archive COMMIT catalyst_dsl grammar` unpacked), each round also
starts that build's server cold, right after this build's, and the two are printed side by
side: a figure measured on another day, with the build it was measured at, then carries
over to this build on any host.

Each session's wall time from the server's start to `initialize` answered is printed
apart. The user's cache key lives in a temporary XDG_CACHE_HOME, not in yours.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from library_graph import playbook  # noqa: E402
from processes import child_env, machine  # noqa: E402
from processes import measure as run  # noqa: E402


async def session(root: Path, env: dict[str, str]) -> tuple[float, float, float, float]:
    """(start to initialized, didOpen to the file's diagnostics, to the library's first, to
    the whole library's)."""
    client = LanguageClient("bench", "1")
    opened = root / "playbooks" / "flow-0.yaml"
    uri = opened.as_uri()
    arrivals: list[tuple[float, str]] = []
    arrived = asyncio.Event()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        arrivals.append((time.perf_counter(), params.uri))
        arrived.set()

    started = time.perf_counter()
    await client.start_io(sys.executable, "-m", "catalyst_dsl", "lsp", env=env, cwd=str(root))
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=root.as_uri()))
    client.initialized(lsp.InitializedParams())
    ready = time.perf_counter()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=opened.read_text())
        )
    )

    server = client._server  # the process (pygls keeps no public handle)

    async def first(test) -> float:
        waited = 0
        while not (found := [t for t, u in arrivals if test(u)]):
            arrived.clear()
            try:
                await asyncio.wait_for(arrived.wait(), 5)
            except asyncio.TimeoutError:
                waited += 5
                if server.returncode is not None or waited >= 600:
                    errors = (await server.stderr.read()).decode(errors="replace")
                    raise SystemExit(f"the server exited ({server.returncode}) or hangs:\n{errors[-4000:]}") from None
        return found[0] - ready

    own = await first(lambda u: u == uri)
    library = await first(lambda u: u != uri)
    while True:  # until the server falls quiet
        arrived.clear()
        try:
            await asyncio.wait_for(arrived.wait(), 2)
        except asyncio.TimeoutError:
            break
    whole = arrivals[-1][0] - ready
    await client.shutdown_async(None)
    client.exit(None)
    try:  # the process may be gone already without the event loop hearing of it
        await asyncio.wait_for(client.stop(), 10)
    except asyncio.TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            server.kill()
    return ready - started, own, library, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playbooks", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--faulty", type=int, default=0, metavar="K", help="every K-th playbook has a finding")
    parser.add_argument("--baseline", type=Path, metavar="DIR", help="another build, started cold in each round too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        (root / "playbooks").mkdir(parents=True)
        (root / "catalyst.toml").write_text("")
        for i in range(args.playbooks):
            text = playbook(i, args.playbooks, args.steps)
            if args.faulty and i % args.faulty == args.faulty - 1:
                text = text.replace("steps:\n", "steps:\n  - display: '{{ nowhere }}'\n", 1)
            (root / "playbooks" / f"flow-{i}.yaml").write_text(text)
        env = child_env(Path(tmp) / "pycache", {"XDG_CACHE_HOME": str(Path(tmp) / "cache-home")})
        asyncio.run(session(root, env))  # pays for the .pyc files and writes the entries; not counted
        baseline = None
        if args.baseline is not None:
            baseline = {**env, "PYTHONPATH": os.pathsep.join([str(args.baseline.resolve()), env["PYTHONPATH"]])}
            asyncio.run(session(root, baseline))  # its own .pyc files; not counted
        before = machine()
        kinds: dict[str, list[tuple[float, float, float, float]]] = {"cold": [], "warm": []}
        checks = []  # the wall time of a whole check just before each cold round
        for _ in range(args.rounds):
            shutil.rmtree(root / ".xe" / "cache", ignore_errors=True)
            checks.append(run([sys.executable, "-m", "catalyst_dsl", "check", "--no-cache"], root, env)[1])
            kinds["cold"].append(asyncio.run(session(root, env)))
            kinds["warm"].append(asyncio.run(session(root, env)))
            if baseline is not None:
                shutil.rmtree(root / ".xe" / "cache", ignore_errors=True)
                kinds.setdefault("before, cold", []).append(asyncio.run(session(root, baseline)))
        faulty = f", every {args.faulty}th with a finding" if args.faulty else ""
        size = f"{args.playbooks} playbooks x {args.steps} steps{faulty}"
        print(f"catalyst lsp opening 1 of {size}, {args.rounds} rounds")
        print(f"  before: {before}\n  after:  {machine()}")
        each = ", ".join(f"{cold[2]:.2f} s ({check:.2f} s)" for cold, check in zip(kinds["cold"], checks))
        print(f"  cold rounds in order, the library's first diagnostics (`check --no-cache` just before): {each}")
        ratios = sorted(cold[2] / check for cold, check in zip(kinds["cold"], checks))
        print(
            f"  cold against the check before it: {ratios[0]:.2f}x / {statistics.median(ratios):.2f}x / "
            f"{ratios[-1]:.2f}x (min / median / max); the checks {min(checks):.2f} / "
            f"{statistics.median(checks):.2f} / {max(checks):.2f} s"
        )
        if baseline is not None:
            against = sorted(cold[2] / before[2] for cold, before in zip(kinds["cold"], kinds["before, cold"]))
            print(
                f"  cold against the baseline's cold start in the same round: {against[0]:.2f}x / "
                f"{statistics.median(against):.2f}x / {against[-1]:.2f}x (min / median / max)"
            )
        for kind, runs in kinds.items():
            start, own, library, whole = (sorted(x) for x in zip(*runs))

            def spread(values: list[float]) -> str:
                return f"{values[0]:.2f} / {statistics.median(values):.2f} / {values[-1]:.2f} s"

            print(
                f"  {kind:5} the library's first diagnostics {spread(library)}; the whole library's {spread(whole)}; "
                f"the open file's {spread(own)}; "
                f"start to initialized {spread(start)} (min / median / max)"
            )


if __name__ == "__main__":
    main()
