"""Benchmark: how soon `catalyst lsp` answers an edit with diagnostics.

Usage: python bench/lsp_latency.py [--edits 100] [--playbooks 200] [--steps 100] [--callers 10]
                                   [--bursts 0] [--burst-size 100]

A project of N generated playbooks (bench/check_library.py's) is made in a temporary
folder, C of them ending with a call to the first (so that an edit of it has callers to
re-check), the first with S steps is opened in the server over stdio, and it is edited
E times (a step's display text changed each time). For each edit: the wall time from
sending the change to receiving the file's diagnostics, and to receiving the library's
(the second publication, after the pause the server waits for). Printed: machine, load,
the command, min/median/max and worst of both.

With --bursts B, then B storms of --burst-size edits each, sent back to back as fast as the
client can (each adds a reference to an undefined name of its own, so that its
diagnostics say which text they were made from): for each burst, the wall time from
sending its last edit to receiving that edit's diagnostics, how many publications the
burst caused, and whether any publication came for an older version than one before it.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from check_library import playbook  # noqa: E402  (the same generated playbooks)
from processes import machine  # noqa: E402


@dataclasses.dataclass
class Storm:
    """What the bursts of edits gave: per burst, the latency of its last edit and the
    number of publications it caused; publications older than one before them."""

    latencies: list[float] = dataclasses.field(default_factory=list)
    publications: list[int] = dataclasses.field(default_factory=list)
    backwards: int = 0


async def session(
    root: Path, edits: int, steps: int, bursts: int, burst_size: int
) -> tuple[list[float], list[float], Storm]:
    client = LanguageClient("bench", "1")
    arrivals: list[tuple[float, str, int, int | None, list[str]]] = []
    arrived = asyncio.Event()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        arrivals.append(
            (
                time.perf_counter(),
                params.uri,
                len(params.diagnostics),
                params.version,
                [d.message for d in params.diagnostics],
            )
        )
        arrived.set()

    await client.start_io(sys.executable, "-m", "catalyst_dsl", "lsp")
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=root.as_uri()))
    client.initialized(lsp.InitializedParams())
    path = root / "playbooks" / "generated-0.yaml"
    uri = path.as_uri()
    text = playbook(0, steps)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        )
    )
    file_times, library_times = [], []

    async def publications_after(start: float, count: int) -> list[float]:
        while len([a for a in arrivals if a[0] >= start and a[1] == uri]) < count:
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 120)
        return [a[0] - start for a in arrivals if a[0] >= start and a[1] == uri][:count]

    await publications_after(0, 2)  # the opening's own two publications
    for i in range(edits):
        edited = text.replace("big {{count-1}}", f"big {{{{count-1}}}} edit {i}", 1) + f"  - display: edit {i}\n"
        start = time.perf_counter()
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=i + 2),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
        own, library = await publications_after(start, 2)
        file_times.append(own)
        library_times.append(library)

    async def publications_naming(marker: str, count: int) -> list[float]:
        """The arrival times of the publications whose diagnostics name `marker`."""
        while len(found := [a[0] for a in arrivals if a[1] == uri and any(marker in m for m in a[4])]) < count:
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 120)
        return found

    storm, version = Storm(), edits + 1
    for burst in range(bursts):
        first = len(arrivals)
        for k in range(burst_size):
            version += 1
            client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[
                        lsp.TextDocumentContentChangeWholeDocument(
                            text=text + f"  - display: '{{{{ storm{burst}x{k} }}}}'\n"
                        )
                    ],
                )
            )
        sent = time.perf_counter()
        own = (await publications_naming(f"'storm{burst}x{burst_size - 1}'", 1))[0]
        storm.latencies.append(own - sent)
        await publications_naming(f"'storm{burst}x{burst_size - 1}'", 2)  # and the library's, before the next burst
        storm.publications.append(len([a for a in arrivals[first:] if a[1] == uri]) - 1)
    versions = [a[3] for a in arrivals if a[1] == uri and a[3] is not None]
    storm.backwards = sum(1 for before, after in zip(versions, versions[1:]) if after < before)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return file_times, library_times, storm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--playbooks", type=int, default=200)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--callers", type=int, default=10)
    parser.add_argument("--bursts", type=int, default=0)
    parser.add_argument("--burst-size", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "catalyst.toml").write_text("", encoding="utf-8")
        (root / "playbooks").mkdir()
        for i in range(args.playbooks):
            text = playbook(i, args.steps if i == 0 else 20)
            if 0 < i <= args.callers:
                text += "  - playbook: generated-0\n    inputs:\n      feature-id: \"{{ feature-id }}\"\n"
            (root / "playbooks" / f"generated-{i}.yaml").write_text(text, encoding="utf-8")
        print(f"machine before: {machine()}")
        own, library, storm = asyncio.run(session(root, args.edits, args.steps, args.bursts, args.burst_size))
        print(f"machine after: {machine()}")
    print(
        f"command: catalyst lsp, {args.edits} edits of a {args.steps}-step playbook "
        f"in a {args.playbooks}-playbook library, {args.callers} of which call it"
        + (f", then {args.bursts} bursts of {args.burst_size} edits" if args.bursts else "")
    )

    def spread(values: list[float]) -> str:
        ms = sorted(v * 1000 for v in values)
        return f"min {ms[0]:.0f} ms, median {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms"

    if own:
        print(f"the file's diagnostics after an edit: {spread(own)}")
        print(f"the library's diagnostics after an edit (includes the {0.3:.1f} s pause): {spread(library)}")
    if storm.latencies:
        print(f"a burst's last edit to its diagnostics: {spread(storm.latencies)}")
        print(
            f"publications of the file per burst of {args.burst_size} edits (the library's not counted): "
            f"min {min(storm.publications)}, median {statistics.median(storm.publications):.0f}, "
            f"max {max(storm.publications)}; "
            f"publications older than one before them: {storm.backwards}"
        )


if __name__ == "__main__":
    main()
