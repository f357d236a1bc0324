"""Benchmark: how soon `catalyst lsp` answers an edit with diagnostics.

Usage: python bench/lsp_latency.py [--edits 100] [--playbooks 200] [--steps 100] [--callers 10]

A project of N generated playbooks (bench/check_library.py's) is made in a temporary
folder, C of them ending with a call to the first (so that an edit of it has callers to
re-check), the first with S steps is opened in the server over stdio, and it is edited
E times (a step's display text changed each time). For each edit: the wall time from
sending the change to receiving the file's diagnostics, and to receiving the library's
(the second publication, after the pause the server waits for). Printed: machine, load,
the command, min/median/max and worst of both.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from check_library import playbook  # noqa: E402  (the same generated playbooks)


async def session(root: Path, edits: int, steps: int) -> tuple[list[float], list[float]]:
    client = LanguageClient("bench", "1")
    arrivals: list[tuple[float, str, int]] = []
    arrived = asyncio.Event()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        arrivals.append((time.perf_counter(), params.uri, len(params.diagnostics)))
        arrived.set()

    await client.start_io(sys.executable, "-m", "catalyst_dsl", "lsp")
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=root.as_uri()))
    client.initialized(lsp.InitializedParams())
    path = root / "playbooks" / "generated-0.yaml"
    uri = path.as_uri()
    text = playbook(0, steps)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)))
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
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=i + 2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=edited)]))
        own, library = await publications_after(start, 2)
        file_times.append(own)
        library_times.append(library)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return file_times, library_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--playbooks", type=int, default=200)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--callers", type=int, default=10)
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
        print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        own, library = asyncio.run(session(root, args.edits, args.steps))
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"command: catalyst lsp, {args.edits} edits of a {args.steps}-step playbook in a {args.playbooks}-playbook library, {args.callers} of which call it")

    def spread(values: list[float]) -> str:
        ms = sorted(v * 1000 for v in values)
        return f"min {ms[0]:.0f} ms, median {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms"

    print(f"the file's diagnostics after an edit: {spread(own)}")
    print(f"the library's diagnostics after an edit (includes the {0.3:.1f} s pause): {spread(library)}")


if __name__ == "__main__":
    main()
