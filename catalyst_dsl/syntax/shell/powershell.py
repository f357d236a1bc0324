"""The PowerShell lexer: the quoting context of each placeholder in a PowerShell script.

PowerShell quotes differ from bash's: typographic quotes count, a doubled quote is one
quote, the backtick escapes, and `@'...'@` / `@"..."@` here-strings end at a line
starting with their closing quote.
"""

from __future__ import annotations

from catalyst_dsl.syntax.shell.slots import COMMAND_HELP, Context, Lexer, Mark, Slot

_PS_SINGLE = "'\u2018\u2019\u201a\u201b"
_PS_DOUBLE = '"\u201c\u201d\u201e'
#: Characters that end a bare word in PowerShell.
_PS_BOUNDARY = frozenset(" \t\r\n;,(){}|=")
_PS_WORD_HELP = "put it inside quotes: '{{x}}' or \"{{x}}\""


class PowerShellLexer(Lexer):
    def run(self) -> tuple[Slot, ...]:
        i = 0
        n = len(self.seq)
        mode = "code"
        depth = 0
        call_next = False  # the next word is run by `&` or `.`
        here_end = ""
        while i < n:
            c = self.at(i)
            line_start = i == 0 or self.at(i - 1) == "\n"
            if mode == "code":
                if isinstance(c, Mark):
                    alone = (i == 0 or self.ch(i - 1) in _PS_BOUNDARY) and (
                        i + 1 >= n or self.ch(i + 1) in _PS_BOUNDARY
                    )
                    if call_next:
                        c.unsafe("as the command that `&` or `.` runs", COMMAND_HELP)
                    elif self.at(i - 1) == "`":
                        c.unsafe("right after a backtick escape", "remove the backtick")
                    elif not alone:
                        c.unsafe("joined to other characters outside quotes", _PS_WORD_HELP)
                    else:
                        c.set(Context.WORD)
                    call_next = False
                elif c == "#" and (i == 0 or self.ch(i - 1) in _PS_BOUNDARY):
                    mode = "comment"
                elif c == "<" and self.at(i + 1) == "#":
                    mode, i = "block", i + 1
                elif c == "`":
                    i += 1
                elif c in _PS_SINGLE:
                    mode = "single"
                elif c in _PS_DOUBLE:
                    mode = "double"
                elif c == "@" and self.ch(i + 1) in (_PS_SINGLE + _PS_DOUBLE) and self._line_break(i + 2):
                    single = self.ch(i + 1) in _PS_SINGLE
                    mode, here_end = ("here-single", "'@") if single else ("here-double", '"@')
                    i = self._line_break(i + 2) - 1
                elif c == "$" and self.at(i + 1) == "{":
                    mode = "braced"
                elif c in "&." and (self.at(i + 1) in (" ", "\t")) and (i == 0 or self.ch(i - 1) in _PS_BOUNDARY):
                    call_next = True
                elif c not in (" ", "\t"):
                    call_next = False
            elif mode in ("single", "double"):
                quotes = _PS_SINGLE if mode == "single" else _PS_DOUBLE
                if isinstance(c, Mark):
                    if mode == "double" and depth:
                        c.unsafe("inside a $(...) subexpression in a string", "move the value out of the $(...)")
                    elif mode == "double" and self.at(i - 1) in ("$", "`"):
                        c.unsafe("right after a `$` or a backtick", "put a space before the placeholder")
                    else:
                        c.set(Context.SINGLE if mode == "single" else Context.DOUBLE)
                elif mode == "double" and c == "`":
                    i += 1
                elif depth and c in _PS_SINGLE + _PS_DOUBLE:
                    i = self._inner_string(i)
                elif mode == "double" and c == "$" and self.at(i + 1) == "(":
                    depth, i = depth + 1, i + 1
                elif mode == "double" and depth and c == "(":
                    depth += 1
                elif mode == "double" and depth and c == ")":
                    depth -= 1
                elif c in quotes and not depth:
                    if self.ch(i + 1) in quotes:
                        i += 1  # '' or "": the quote itself
                    else:
                        mode = "code"
            elif mode in ("here-single", "here-double"):
                if isinstance(c, Mark):
                    before, after = self.body_line(c, i)
                    if mode == "here-double" and (depth or self.at(i - 1) in ("$", "`")):
                        c.unsafe(
                            "inside a $(...) subexpression, or right after `$` or a backtick, in a here-string",
                            "move the value out of the $(...)",
                        )
                    else:
                        c.set(
                            Context.HEREDOC_QUOTED if mode == "here-single" else Context.HEREDOC,
                            delimiter=here_end,
                            before=before,
                            after=after,
                        )
                elif line_start and self.ahead(i, here_end):
                    mode = "code"
                    i += 1
                elif mode == "here-double" and c == "`":
                    i += 1
                elif mode == "here-double" and c == "$" and self.at(i + 1) == "(":
                    depth, i = depth + 1, i + 1
                elif mode == "here-double" and depth and c in _PS_SINGLE + _PS_DOUBLE:
                    i = self._inner_string(i)
                elif mode == "here-double" and depth and c == "(":
                    depth += 1
                elif mode == "here-double" and depth and c == ")":
                    depth -= 1
            elif mode == "comment":
                if isinstance(c, Mark):
                    c.unsafe(
                        "inside a comment, where a line break in the value would start a command",
                        "move it out of the comment",
                    )
                elif c == "\n":
                    mode = "code"
            elif mode == "block":
                if isinstance(c, Mark):
                    c.unsafe("inside a <# #> comment, which the value could end", "move it out of the comment")
                elif c == "#" and self.at(i + 1) == ">":
                    mode, i = "code", i + 1
            elif mode == "braced":
                if isinstance(c, Mark):
                    c.unsafe("inside a ${...} variable name", "set a variable from the value first")
                elif c == "}":
                    mode = "code"
            i += 1
        return self.slots()

    def _inner_string(self, i: int) -> int:
        """Skip a string inside a $(...) subexpression (its `)` do not end the
        subexpression); the index of its closing quote. Placeholders in it are code's."""
        quotes = _PS_SINGLE if self.ch(i) in _PS_SINGLE else _PS_DOUBLE
        i += 1
        while i < len(self.seq):
            c = self.at(i)
            if isinstance(c, Mark):
                c.unsafe("inside a $(...) subexpression in a string", "move the value out of the $(...)")
            elif c == "`" and quotes is _PS_DOUBLE:
                i += 1
            elif c in quotes:
                if self.ch(i + 1) not in quotes:
                    return i
                i += 1
            i += 1
        return i

    def _line_break(self, i: int) -> int:
        """The index after the line break that must follow `@'` / `@"`, or 0 when there is none."""
        while self.at(i) in (" ", "\t"):
            i += 1
        if self.at(i) == "\r":
            i += 1
        return i + 1 if self.at(i) == "\n" else 0
