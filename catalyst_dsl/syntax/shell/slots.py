"""What the script lexers find: the quoting Context and Slot of each placeholder, and the
reading machinery the bash and PowerShell lexers share."""

from __future__ import annotations

import enum

from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.expr import nodes as ast


class Context(enum.Enum):
    WORD = "an unquoted word"
    DOUBLE = "double quotes"
    SINGLE = "single quotes"
    HEREDOC = "an unquoted here-document"
    HEREDOC_QUOTED = "a quoted here-document"
    ANSI_C = "a $'...' string"
    COMMENT = "a comment"
    UNSAFE = "a place that cannot be escaped"


@record
class Slot:
    """Where one placeholder stands. `start`/`end` are its offsets in the template text.

    For here-documents, `delimiter` ends the body (a line equal to it in bash, a line
    starting with it in PowerShell) and `before`/`after` are the template text on the
    placeholder's line around it (None when another placeholder shares the line), so the
    runtime can refuse a value that would end the body early.
    """

    context: Context
    start: int
    end: int
    problem: str = ""
    help: str = ""
    delimiter: str = ""
    before: str | None = None
    after: str | None = None


#: The fix for a value in command position, in bash and PowerShell alike.
COMMAND_HELP = (
    "a value cannot choose which program runs: write the command name in the script "
    "(e.g. a `case` over the allowed values)"
)


class Mark:
    """A placeholder in the character sequence the lexers read."""

    __slots__ = ("part", "fields")

    def __init__(self, part: ast.Part) -> None:
        self.part = part
        self.fields: dict = {}

    def set(self, context: Context, **more) -> None:
        self.fields = {"context": context, **more}

    def unsafe(self, problem: str, help: str) -> None:
        if self.fields.get("context") is not Context.UNSAFE:
            self.fields = {"context": Context.UNSAFE, "problem": problem, "help": help}


class Lexer:
    def __init__(self, text: str, parts: tuple) -> None:
        self.text = text
        self.seq: list = []
        self.marks: list[Mark] = []
        for part in parts:
            if isinstance(part, ast.TextPart):
                self.seq.extend(part.text)
            else:
                mark = Mark(part)
                self.marks.append(mark)
                self.seq.append(mark)

    def at(self, i: int) -> object:
        return self.seq[i] if 0 <= i < len(self.seq) else ""

    def ch(self, i: int) -> str:
        """The character at `i` for membership tests: NUL for a placeholder or past the end."""
        c = self.at(i)
        return c if isinstance(c, str) and c else "\0"

    def ahead(self, i: int, text: str) -> bool:
        return all(self.at(i + k) == c for k, c in enumerate(text))

    def slots(self) -> tuple[Slot, ...]:
        return tuple(
            Slot(start=m.part.start, end=m.part.end, **(m.fields or {"context": Context.WORD})) for m in self.marks
        )

    def body_line(self, mark: Mark, i: int) -> tuple[str | None, str | None]:
        """The template text before and after the placeholder at `i` on its line."""
        start = i
        while start > 0 and self.at(start - 1) != "\n":
            start -= 1
        end = i + 1
        while end < len(self.seq) and self.at(end) != "\n":
            end += 1
        line = self.seq[start:end]
        if sum(isinstance(c, Mark) for c in line) > 1:
            return None, None
        return "".join(self.seq[start:i]), "".join(self.seq[i + 1 : end])
