"""A playbook's bytes into text: UTF-8, a byte-order mark dropped, newlines made `\\n`.

Apart from the YAML loader so that a check answered from the cache (cache.replay) turns
the same bytes into the same text without loading YAML.
"""

from __future__ import annotations

from catalyst_dsl.diagnostics import ids
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.syntax.source import SourceFile


def decode(data: bytes, path: str, sink: DiagnosticSink) -> SourceFile | None:
    """Bytes into text: a byte-order mark is dropped (with a warning), bad UTF-8 reported."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        sink.report(
            ids.BYTE_ORDER_MARK,
            "the file starts with a UTF-8 byte-order mark",
            SourceFile(path, "").span(0),
            help="save the file as UTF-8 without a byte-order mark",
        )
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        sink.report(
            ids.UNREADABLE_FILE,
            "the file is UTF-16; playbooks are UTF-8",
            SourceFile(path, "").span(0),
            help="save the file as UTF-8",
        )
        return None
    if b"\x00" in data[:8192]:
        where = data.index(b"\x00")
        prefix = data[:where].decode("utf-8", errors="replace")
        sink.report(
            ids.UNREADABLE_FILE,
            "this is a binary file, not a playbook (it contains NUL bytes)",
            SourceFile(path, prefix).span(len(prefix)),
            help="pass only YAML (.yaml, .yml) or Markdown (.md) playbooks",
        )
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8", errors="replace")
        sink.report(
            ids.UNREADABLE_FILE,
            f"invalid UTF-8: byte 0x{data[exc.start]:02x} cannot start or continue a character",
            SourceFile(path, good).span(len(good), len(good) + 1),
            help="save the file as UTF-8; re-encode it with `iconv -f latin1 -t utf-8` if it was Latin-1",
        )
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return SourceFile(path, text)
