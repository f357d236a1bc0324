"""The inputs each fuzz target starts from: the repository's own cases (golden cases,
example playbooks, the dialects' examples), so mutations begin from files the readers
take in full and reach their depths at once, not from random bytes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

REPOSITORY = Path(__file__).resolve().parents[1]
GOLDEN = REPOSITORY / "tests" / "golden"
#: Larger seeds slow every mutation of them; the golden cases that test size limits are left out.
MAX_SEED_BYTES = 64 * 1024
#: `{{ reference }}` and `${{ expression }}`, as written in the cases.
TEMPLATE = re.compile(rb"\$?\{\{(.*?)\}\}")


def _files(*patterns: str) -> list[Path]:
    found = {p for pattern in patterns for p in REPOSITORY.glob(pattern) if p.is_file()}
    return sorted(p for p in found if p.stat().st_size <= MAX_SEED_BYTES)


def _yaml() -> list[Path]:
    return _files("tests/golden/check/*.yaml", "tests/golden/check/*.yml", "playbooks/*.yaml")


def _markdown() -> list[Path]:
    return _files("tests/golden/check/*.md", "tests/golden/**/*.md", "playbooks/*.md")


def seeds(target: str) -> Iterator[bytes]:
    if target == "yaml":
        yield from (p.read_bytes() for p in _yaml())
    elif target == "markdown":
        yield from (p.read_bytes() for p in _markdown())
    elif target == "kai":
        yield from (p.read_bytes() for p in _files("tests/golden/kai/*.yaml", "tests/golden/kai-project/**/*.yaml"))
    elif target == "cleo":
        yield from (p.read_bytes() for p in _files("tests/**/*.cantbook"))
    elif target == "expression":
        yield from _expressions()
    elif target == "lsp":
        yield from _sessions()
    else:
        raise KeyError(target)


def _expressions() -> Iterator[bytes]:
    """The inside of every template in the cases, and each whole line holding one."""
    found: set[bytes] = set()
    for path in [*_yaml(), *_markdown()]:
        for line in path.read_bytes().splitlines():
            for match in TEMPLATE.finditer(line):
                found.add(match.group(1).strip())
                found.add(line.strip())
    yield from sorted(found)


#: What an editor asks about a document, at a position the seed picks: `$URI` is the document.
REQUESTS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/references",
]


def _sessions() -> Iterator[bytes]:
    """Each YAML and Markdown case as an open document, asked about at a few places, then
    edited once (a line dropped) and asked again."""
    for n, path in enumerate([*_yaml(), *_markdown()]):
        text = path.read_bytes()
        lines = text.count(b"\n") + 1
        bodies = []
        for i, method in enumerate(REQUESTS):
            line, character = (n + 3 * i) % lines, (n + i) % 12
            position = {"line": line, "character": character}
            params: dict = {"textDocument": {"uri": "$URI"}, "position": position}
            if method == "textDocument/references":
                params["context"] = {"includeDeclaration": True}
            bodies.append({"jsonrpc": "2.0", "id": i + 1, "method": method, "params": params})
        edited = b"\n".join(text.splitlines()[1:]).decode("utf-8", "replace")
        change = {"textDocument": {"uri": "$URI", "version": 1000 + n}, "contentChanges": [{"text": edited}]}
        bodies.append({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": change})
        symbols = {"textDocument": {"uri": "$URI"}}
        bodies.append({"jsonrpc": "2.0", "id": 9, "method": "textDocument/documentSymbol", "params": symbols})
        yield b"\0".join([text, *(json.dumps(b).encode("utf-8") for b in bodies)])
