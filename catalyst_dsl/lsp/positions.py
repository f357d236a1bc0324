"""Positions between catalyst's spans and the Language Server Protocol's.

Spans count lines and columns from 1, in characters (code points). LSP counts from 0, and
its columns are UTF-16 code units by default: a character outside the Basic Multilingual
Plane (an emoji) is two of them. Each conversion reads the line's text to count right.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from catalyst_dsl.syntax.source import SourceFile, Span


def utf16_column(line_text: str, column: int) -> int:
    """The UTF-16 column (0-based) of a 1-based code-point column on `line_text`."""
    prefix = line_text[: max(column - 1, 0)]
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


def code_point_column(line_text: str, character: int) -> int:
    """The 1-based code-point column of a 0-based UTF-16 column on `line_text`."""
    units = 0
    for index, char in enumerate(line_text):
        if units >= character:
            return index + 1
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line_text) + 1


def to_range(source: SourceFile | None, span: Span) -> lsp.Range:
    def position(line: int, col: int) -> lsp.Position:
        text = source.line_text(line) if source is not None else ""
        return lsp.Position(line=max(line - 1, 0), character=utf16_column(text, col) if text else max(col - 1, 0))

    return lsp.Range(start=position(span.line, span.col), end=position(span.end_line, span.end_col))


def to_offset(source: SourceFile, position: lsp.Position) -> int:
    """The character offset in `source` of an LSP position."""
    line = position.line + 1
    return source.offset(line, code_point_column(source.line_text(line), position.character))
