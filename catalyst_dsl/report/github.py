"""GitHub Actions workflow commands: one `::error …::` line per finding, shown on the diff.

GitHub reads `::error file=F,line=L,col=C,endLine=…,endColumn=…,title=T::message` lines
from a step's output and annotates the pull request at that place. Its escaping: in the
message `%`, CR and LF are percent-encoded; in a property value `:` and `,` too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from catalyst_dsl.diagnostics.model import Diagnostic
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl.diagnostics.text import display_path
from catalyst_dsl._internal.terminal_text import safe_text

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: Sequence[Diagnostic], *, relative_to: str) -> str:
    return "".join(_command(d, relative_to) + "\n" for d in diagnostics)


def _command(d: Diagnostic, relative_to: str) -> str:
    properties: list[tuple[str, str]] = []
    span = d.span
    if span is not None:
        properties.append(("file", safe_text(Path(display_path(span.file, relative_to)).as_posix())))
        properties += [
            ("line", str(span.line)),
            ("col", str(span.col)),
            ("endLine", str(max(span.end_line, span.line))),
        ]
        if span.end_line == span.line:
            # GitHub's endColumn is the last column marked; a span's end is exclusive.
            properties.append(("endColumn", str(max(span.end_col - 1, span.col))))
    properties.append(("title", f"{d.code} {d.name}"))
    # Each piece quotes the file, so it is made safe like the text output; the pieces are
    # joined with real line breaks, which the escaping below keeps inside one command.
    pieces = [
        safe_text(d.message),
        *(f"note: {safe_text(note)}" for note in d.notes),
        *([f"help: {safe_text(d.help)}"] if d.help else []),
    ]
    message = "\n".join(pieces)
    listed = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{_COMMANDS[d.severity]} {listed}::{escape_data(message)}"
