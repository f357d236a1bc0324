"""Shell script templates: the quoting context of every `{{ }}` / `${{ }}` in a script.

A value pasted into a script as text can end a quote, start a command substitution or
a new line and run commands of its own. As Go's html/template does for HTML, the script
template is lexed once (cached by its text) and each placeholder gets the context it
stands in: an unquoted word, double quotes, single quotes, or the body of a quoted or
unquoted here-document. The runtime escapes each value for exactly that context
(`runtime/escaping.py`); the checker reports a placeholder whose context cannot be
escaped with certainty (C822) instead of guessing.

The lexers know the quoting rules of bash and PowerShell, not their whole grammars.
Where they cannot prove what a character means (backticks, `${...}`, arithmetic, a
comment, the name of the command to run) the slot is UNSAFE with the reason and the fix.
"""

from __future__ import annotations

import enum
import functools
import re

import attrs

from catalyst_dsl.syntax import expr_ast as ast
from catalyst_dsl.syntax.templates import parse_template

BASH = "bash"
POWERSHELL = "powershell"
JAVASCRIPT = "javascript"


class Context(enum.Enum):
    WORD = "an unquoted word"
    DOUBLE = "double quotes"
    SINGLE = "single quotes"
    HEREDOC = "an unquoted here-document"
    HEREDOC_QUOTED = "a quoted here-document"
    UNSAFE = "a place that cannot be escaped"


@attrs.frozen
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
    strip_tabs: bool = False
    before: str | None = None
    after: str | None = None
    #: An unquoted word inside a brace expansion: quoted even when plain.
    always_quote: bool = False


def raw_argument(part: ast.Part) -> ast.Expr | None:
    """The argument of `${{ raw(x) }}`: the author's opt-out from escaping, or None."""
    if isinstance(part, ast.ExprPart):
        expr = part.expr
        if isinstance(expr, ast.Call) and isinstance(expr.callee, ast.Name) and expr.callee.name == "raw" and len(expr.args) == 1:
            return expr.args[0]
    return None


@functools.lru_cache(maxsize=4096)
def script_slots(text: str, language: str) -> tuple[Slot, ...]:
    """One Slot per placeholder of the template `text`, in order, for a script in `language`."""
    parts = parse_template(text).parts
    if language == BASH:
        return _BashLexer(text, parts).run()
    if language == POWERSHELL:
        return _PowerShellLexer(text, parts).run()
    return tuple(Slot(Context.UNSAFE, p.start, p.end, "in JavaScript code, which is not escaped", JS_HELP)
                 for p in parts if not isinstance(p, ast.TextPart))


JS_HELP = "read the value inside the script with get('name') instead of pasting it into the code"


class _Mark:
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


class _Lexer:
    def __init__(self, text: str, parts: tuple) -> None:
        self.text = text
        self.seq: list = []
        self.marks: list[_Mark] = []
        for part in parts:
            if isinstance(part, ast.TextPart):
                self.seq.extend(part.text)
            else:
                mark = _Mark(part)
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
        return tuple(Slot(start=m.part.start, end=m.part.end, **(m.fields or {"context": Context.WORD})) for m in self.marks)

    def body_line(self, mark: _Mark, i: int) -> tuple[str | None, str | None]:
        """The template text before and after the placeholder at `i` on its line."""
        start = i
        while start > 0 and self.at(start - 1) != "\n":
            start -= 1
        end = i + 1
        while end < len(self.seq) and self.at(end) != "\n":
            end += 1
        line = self.seq[start:end]
        if sum(isinstance(c, _Mark) for c in line) > 1:
            return None, None
        return "".join(self.seq[start:i]), "".join(self.seq[i + 1:end])


# -- bash -----------------------------------------------------------------------------------------

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
#: Words after which the next word is still a command name.
_KEEPS_COMMAND = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "fi", "done", "esac", "coproc"})
#: Operators of `[[ ]]` that evaluate their operands as arithmetic (which runs `a[$(cmd)]`).
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
#: Builtins that evaluate their arguments as arithmetic.
_ARITHMETIC_COMMANDS = frozenset({"let"})
#: Builtins that run their arguments as shell code, and shells that run the word after -c.
_CODE_COMMANDS = frozenset({"eval", "source", ".", "trap"})
_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "/bin/bash", "/bin/sh"})
_CODE_HELP = "pass the value as data instead: in `env:`, or as an argument after the code (bash -c 'echo \"$1\"' _ {{x}})"

_COMMAND_HELP = ("a value cannot choose which program runs: write the command name in the script "
                 "(e.g. a `case` over the allowed values)")
_ARITH_HELP = ("arithmetic evaluates text such as a[$(cmd)] as code: check the value is a number first "
               "(${{ Number(x) }} in a `var` step) and pass it in `env:`")


class _Frame:
    """A command context: the script itself, or the inside of `$(...)`/`<(...)`."""

    def __init__(self, nested: bool, resume: list | None = None) -> None:
        self.nested = nested
        #: The quoting modes of the enclosing frame, restored at the closing `)`.
        self.resume = resume or []
        #: Every placeholder inside this frame: they are also part of the word it stands in.
        self.all_marks: list[_Mark] = []
        self.depth = 0
        self.command_position = True
        self.word: list = []
        self.word_marks: list[_Mark] = []
        self.redirect = False
        self.heredoc: bool | None = None  # the next word is a here-document delimiter (strip tabs?)
        self.test_marks: list[_Mark] | None = None  # inside [[ ]]
        self.test_arithmetic = False
        self.command: str | None = None
        self.command_marks: list[_Mark] = []
        self.array = 0
        self.last_word = ""
        #: Unquoted `{` of a brace expansion open in the current word ({a,b}).
        self.braces = 0


class _BashLexer(_Lexer):
    def run(self) -> tuple[Slot, ...]:
        self.frames = [_Frame(False)]
        #: Why nothing after this point can be proven (the rest of the script is unsafe).
        self.lost = ""
        self.modes: list[tuple[str, int]] = []  # (mode, depth) above the innermost frame
        self.pending: list[tuple[str, bool, bool]] = []  # here-documents waiting for their body
        i = 0
        n = len(self.seq)
        while i < n:
            i = self.step(i)
        self.end_command(self.frames[-1])
        return self.slots()

    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def add(self, item: object, mark: _Mark | None = None) -> None:
        frame = self.frame
        frame.word.append(item)
        if mark is not None:
            frame.word_marks.append(mark)
            frame.all_marks.append(mark)

    def place(self, mark: _Mark, i: int, context: Context) -> None:
        prev = self.at(i - 1)
        if prev == "$" and context is not Context.SINGLE:
            mark.unsafe("right after a `$`, where it would change what the `$` expands", "put a space or a quote between the `$` and the placeholder")
        elif self.lost:
            mark.unsafe(self.lost, "move the value out of the `$(...)` into a variable set before it")
        else:
            mark.set(context)
        self.add("\0", mark)

    def step(self, i: int) -> int:
        c = self.at(i)
        if self.modes:
            return self.quoted(i, c)
        frame = self.frame
        if isinstance(c, _Mark):
            self.place(c, i, Context.WORD)
            if frame.braces:
                c.fields["always_quote"] = True  # a plain `b,c` would split {a,b,c} in two
            return i + 1
        if c == "{" and (frame.word or self.ch(i + 1) not in " \t\n"):
            frame.braces += 1
        elif c == "}" and frame.braces:
            frame.braces -= 1
        if c in " \t":
            self.end_word(frame)
            return i + 1
        if c == "\n":
            self.end_command(frame)
            return self.bodies(i + 1) if self.pending else i + 1
        if c == "#" and not frame.word:
            self.modes.append(("comment", 0))
            return i + 1
        if c == "\\":
            if self.at(i + 1) == "\n":
                return i + 2
            self.add("\\")
            nxt = self.at(i + 1)
            if isinstance(nxt, _Mark):
                nxt.unsafe("right after a backslash", "remove the backslash")
                self.add("\0", nxt)
            elif nxt:
                self.add(nxt)
            return i + 2
        if c in "'\"`":
            self.add(c)
            self.modes.append(({"'": "single", '"': "double", "`": "backtick"}[c], 0))
            return i + 1
        if c == "$":
            return self.dollar(i)
        if c == "(":
            if not frame.word and frame.command_position and self.at(i + 1) == "(":
                self.modes.append(("arithmetic", 0))
                return i + 2
            if frame.word and "".join(x for x in frame.word if isinstance(x, str)).endswith("="):
                frame.array += 1
                self.add(c)
                return i + 1
            self.end_command(frame)
            if frame.nested:
                frame.depth += 1
            return i + 1
        if c == ")":
            if frame.array:
                frame.array -= 1
                self.add(c)
                return i + 1
            self.end_command(frame)
            if frame.nested:
                if frame.depth == 0:
                    self.frames.pop()
                    self.modes = frame.resume
                    outer = self.frame
                    outer.word.append("$()")
                    outer.word_marks.extend(frame.all_marks)
                    outer.all_marks.extend(frame.all_marks)
                    return i + 1
                frame.depth -= 1
            return i + 1
        if c in ";&|":
            if c == "&" and self.at(i + 1) == ">":
                self.end_word(frame)
                frame.redirect = True
                return i + 2 + (self.at(i + 2) == ">")
            self.end_command(frame)
            return i + 1
        if c in "<>":
            return self.redirection(i, c)
        self.add(c)
        return i + 1

    def dollar(self, i: int) -> int:
        if self.ahead(i, "$(("):
            self.add("$")
            self.modes.append(("arithmetic", 0))
            return i + 3
        if self.ahead(i, "$("):
            self.add("$")
            self.frames.append(_Frame(True))
            return i + 2
        if self.ahead(i, "${"):
            self.add("$")
            self.modes.append(("parameter", 0))
            return i + 2
        if self.ahead(i, "$'"):
            self.add("$")
            self.modes.append(("ansi", 0))
            return i + 2
        if self.ahead(i, '$"'):
            self.add("$")
            self.modes.append(("double", 0))
            return i + 2
        self.add("$")
        return i + 1

    def redirection(self, i: int, c: str) -> int:
        frame = self.frame
        word = "".join(x for x in frame.word if isinstance(x, str))
        if word.isdigit() and not frame.word_marks:
            frame.word = []  # `2>`: the digits name a file descriptor, they are not a word
        else:
            self.end_word(frame)
        if self.at(i + 1) == "(":  # <(...) >(...): a command inside
            self.add("<")
            self.frames.append(_Frame(True))
            return i + 2
        if c == "<" and self.ahead(i, "<<<"):
            frame.redirect = True
            return i + 3
        if c == "<" and self.ahead(i, "<<"):
            strip = self.at(i + 2) == "-"
            frame.heredoc = strip
            return i + 2 + strip
        j = i + 1
        while self.at(j) in (">", "&", "|"):
            j += 1
        frame.redirect = True
        return j

    def quoted(self, i: int, c: object) -> int:
        mode, depth = self.modes[-1]
        if mode == "comment":
            if c == "\n":
                self.modes.pop()
                return i  # the newline ends the command as usual
            if isinstance(c, _Mark):
                c.unsafe("inside a comment, where a line break in the value would start a command",
                         "move it out of the comment")
            return i + 1
        if isinstance(c, _Mark):
            if mode == "single":
                self.place(c, i, Context.SINGLE)
            elif mode == "double":
                self.place(c, i, Context.DOUBLE)
            else:
                reasons = {
                    "backtick": ("inside backticks `...`, whose quoting cannot be proven", "write $(...) instead of backticks"),
                    "ansi": ("inside $'...', where backslashes are escapes", "use plain single quotes '...'"),
                    "parameter": ("inside ${...}", "set a variable from the value first, then expand it"),
                    "arithmetic": ("inside arithmetic $((...)) or ((...))", _ARITH_HELP),
                }
                c.unsafe(*reasons[mode])
                self.add("\0", c)
            return i + 1
        if mode == "single":
            if c == "'":
                self.modes.pop()
            self.add(c)
            return i + 1
        if c == "\\" and mode != "arithmetic":
            nxt = self.at(i + 1)
            if isinstance(nxt, _Mark):
                nxt.unsafe("right after a backslash", "remove the backslash")
                self.add("\0", nxt)
            return i + 2
        if mode == "double":
            if c == '"':
                self.modes.pop()
            elif c == "$":
                if self.ahead(i, "$(("):
                    self.modes.append(("arithmetic", 0))
                    return i + 3
                if self.ahead(i, "$("):
                    self.frames.append(_Frame(True, self.modes))
                    self.modes = []
                    return i + 2
                if self.ahead(i, "${"):
                    self.modes.append(("parameter", 0))
                    return i + 2
            elif c == "`":
                self.modes.append(("backtick", 0))
            self.add(c)
            return i + 1
        if mode in ("backtick", "ansi"):
            if c == ("`" if mode == "backtick" else "'"):
                self.modes.pop()
            return i + 1
        if mode == "parameter":
            if c == "{":
                self.modes[-1] = (mode, depth + 1)
            elif c == "}":
                if depth == 0:
                    self.modes.pop()
                else:
                    self.modes[-1] = (mode, depth - 1)
            return i + 1
        # arithmetic: ends at the `))` that balances it
        if c == "(":
            self.modes[-1] = (mode, depth + 1)
        elif c == ")":
            if depth == 0 and self.at(i + 1) == ")":
                self.modes.pop()
                return i + 2
            self.modes[-1] = (mode, max(0, depth - 1))
        return i + 1

    # -- words and commands

    def end_word(self, frame: _Frame) -> None:
        if not frame.word:
            return
        text = "".join(x for x in frame.word if isinstance(x, str))
        marks = frame.word_marks
        frame.word, frame.word_marks, frame.braces = [], [], 0
        frame.command_marks.extend(marks)
        if frame.heredoc is not None:
            for mark in marks:
                mark.unsafe("in a here-document's delimiter", "write the delimiter (e.g. EOF) in the script")
            quoted = any(q in text for q in "'\"\\")
            delimiter = text.replace("'", "").replace('"', "").replace("\\", "")
            self.pending.append((delimiter, quoted, frame.heredoc))
            frame.heredoc = None
            return
        if frame.redirect:
            frame.redirect = False
            return
        if frame.test_marks is not None:
            if text == "]]" and not marks:
                if frame.test_arithmetic:
                    for mark in frame.test_marks:
                        mark.unsafe("in a [[ ]] test that compares numbers (-eq, -lt, …)", _ARITH_HELP)
                frame.test_marks = None
                return
            if text in _ARITHMETIC_TESTS:
                frame.test_arithmetic = True
            frame.test_marks.extend(marks)
            return
        if frame.array:
            return
        if frame.command in _SHELLS and frame.last_word == "-c":
            for mark in marks:
                mark.unsafe(f"in the code `{frame.command} -c` runs", _CODE_HELP)
        frame.last_word = text
        if not frame.command_position:
            return
        assignment = _ASSIGNMENT.match(text)
        if assignment and ("\0" not in text or text.index("\0") >= assignment.end()):
            return  # VAR=value: the next word is still the command
        if text in _KEEPS_COMMAND and not marks:
            return
        frame.command_position = False
        if text == "[[" and not marks:
            frame.test_marks, frame.test_arithmetic = [], False
            return
        if text in ("for", "select", "case", "in") and not marks:
            if text == "case" and frame.nested:
                # `pattern)` inside $(...) would look like its end: the rest cannot be proven.
                self.lost = "after a `case` within $(...), where the lexer loses track of the parentheses"
            return
        frame.command = text
        for mark in marks:
            mark.unsafe("as (part of) the name of the command to run", _COMMAND_HELP)

    def end_command(self, frame: _Frame) -> None:
        self.end_word(frame)
        if frame.command in _ARITHMETIC_COMMANDS:
            for mark in frame.command_marks:
                mark.unsafe(f"an argument of `{frame.command}`, which evaluates it as arithmetic", _ARITH_HELP)
        if frame.command in _CODE_COMMANDS:
            for mark in frame.command_marks:
                mark.unsafe(f"an argument of `{frame.command}`, which runs it as shell code", _CODE_HELP)
        if frame.test_marks is not None:
            frame.test_marks = None
        frame.command_marks = []
        frame.command = None
        frame.last_word = ""
        frame.command_position = True
        frame.redirect = False

    def bodies(self, i: int) -> int:
        """Read the bodies of the here-documents started on the line that just ended."""
        pending, self.pending = self.pending, []
        for delimiter, quoted, strip in pending:
            i = self.body(i, delimiter, quoted, strip)
        return i

    def body(self, i: int, delimiter: str, quoted: bool, strip: bool) -> int:
        n = len(self.seq)
        while i < n:
            end = i
            while end < n and self.at(end) != "\n":
                end += 1
            line = self.seq[i:end]
            if all(isinstance(c, str) for c in line):
                text = "".join(line)
                if (text.lstrip("\t") if strip else text) == delimiter:
                    return end + 1
            self.body_marks(i, end, delimiter, quoted, strip)
            i = end + 1
        return i

    def body_marks(self, i: int, end: int, delimiter: str, quoted: bool, strip: bool) -> None:
        expansion = 0
        j = i
        while j < end:
            c = self.at(j)
            if isinstance(c, _Mark):
                before, after = self.body_line(c, j)
                if self.lost:
                    c.unsafe(self.lost, "move the value out of the `$(...)` into a variable set before it")
                elif expansion:
                    c.unsafe("inside an expansion ($(...), ${...} or backticks) in a here-document", "move the value out of the expansion")
                elif not quoted and self.at(j - 1) == "$":
                    c.unsafe("right after a `$`, where it would change what the `$` expands", "put a space between the `$` and the placeholder")
                else:
                    c.set(Context.HEREDOC_QUOTED if quoted else Context.HEREDOC, delimiter=delimiter,
                          strip_tabs=strip, before=before, after=after)
            elif not quoted:
                if c == "\\":
                    j += 2
                    continue
                if c == "$" and self.at(j + 1) in ("(", "{"):
                    expansion += 1
                    j += 2
                    continue
                if c == "`":
                    expansion = 0 if expansion else 1
                elif c in ")}" and expansion:
                    expansion -= 1
            j += 1


# -- PowerShell -----------------------------------------------------------------------------------

_PS_SINGLE = "'\u2018\u2019\u201a\u201b"
_PS_DOUBLE = '"\u201c\u201d\u201e'
#: Characters that end a bare word in PowerShell.
_PS_BOUNDARY = frozenset(" \t\r\n;,(){}|=")
_PS_WORD_HELP = "put it inside quotes: '{{x}}' or \"{{x}}\""


class _PowerShellLexer(_Lexer):
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
                if isinstance(c, _Mark):
                    alone = (i == 0 or self.ch(i - 1) in _PS_BOUNDARY) and (i + 1 >= n or self.ch(i + 1) in _PS_BOUNDARY)
                    if call_next:
                        c.unsafe("as the command that `&` or `.` runs", _COMMAND_HELP)
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
                if isinstance(c, _Mark):
                    if mode == "double" and depth:
                        c.unsafe("inside a $(...) subexpression in a string", "move the value out of the $(...)")
                    elif mode == "double" and self.at(i - 1) in ("$", "`"):
                        c.unsafe("right after a `$` or a backtick", "put a space before the placeholder")
                    else:
                        c.set(Context.SINGLE if mode == "single" else Context.DOUBLE)
                elif mode == "double" and c == "`":
                    i += 1
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
                if isinstance(c, _Mark):
                    before, after = self.body_line(c, i)
                    if mode == "here-double" and (depth or self.at(i - 1) in ("$", "`")):
                        c.unsafe("inside a $(...) subexpression, or right after `$` or a backtick, in a here-string",
                                 "move the value out of the $(...)")
                    else:
                        c.set(Context.HEREDOC_QUOTED if mode == "here-single" else Context.HEREDOC,
                              delimiter=here_end, before=before, after=after)
                elif line_start and self.ahead(i, here_end):
                    mode = "code"
                    i += 1
                elif mode == "here-double" and c == "`":
                    i += 1
                elif mode == "here-double" and c == "$" and self.at(i + 1) == "(":
                    depth, i = depth + 1, i + 1
                elif mode == "here-double" and depth and c == ")":
                    depth -= 1
            elif mode == "comment":
                if isinstance(c, _Mark):
                    c.unsafe("inside a comment, where a line break in the value would start a command", "move it out of the comment")
                elif c == "\n":
                    mode = "code"
            elif mode == "block":
                if isinstance(c, _Mark):
                    c.unsafe("inside a <# #> comment, which the value could end", "move it out of the comment")
                elif c == "#" and self.at(i + 1) == ">":
                    mode, i = "code", i + 1
            elif mode == "braced":
                if isinstance(c, _Mark):
                    c.unsafe("inside a ${...} variable name", "set a variable from the value first")
                elif c == "}":
                    mode = "code"
            i += 1
        return self.slots()

    def _line_break(self, i: int) -> int:
        """The index after the line break that must follow `@'` / `@"`, or 0 when there is none."""
        while self.at(i) in (" ", "\t"):
            i += 1
        if self.at(i) == "\r":
            i += 1
        return i + 1 if self.at(i) == "\n" else 0
