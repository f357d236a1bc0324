"""The bash lexer: the quoting context of each placeholder in a bash script.

It follows quotes, `$(...)` (where quoting starts afresh), here-documents, comments and
which word is the command name; places whose meaning it cannot prove are UNSAFE.
"""

from __future__ import annotations

import re

from catalyst_dsl.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.shell.slots import COMMAND_HELP, Context, Lexer, Mark, Slot

_ASSIGNMENT = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
#: Words after which the next word is still a command name.
_KEEPS_COMMAND = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "fi", "done", "esac", "coproc"})
#: Operators of `[[ ]]` that evaluate their operands as arithmetic (which runs `a[$(cmd)]`).
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})
#: Commands whose argument after `-v` names a variable, whose subscript a[...] is arithmetic.
_NAME_OPTIONS = frozenset({"test", "[", "printf"})
#: Builtins that run the builtin named by their first argument.
_RUNS_OTHER = frozenset({"builtin", "command", "env", "exec", "nohup"})
#: Builtins whose operands name variables: the options whose argument is not a name.
_NAME_COMMANDS = {
    "read": frozenset({"-p", "-d", "-t", "-n", "-N", "-u", "-i"}),
    "mapfile": frozenset({"-d", "-n", "-O", "-s", "-u", "-c"}),
    "readarray": frozenset({"-d", "-n", "-O", "-s", "-u", "-c"}),
}
#: Builtins that declare variables: `name=value` operands, where -i makes values arithmetic.
_DECLARES = frozenset({"declare", "typeset", "local", "readonly", "export"})
_NAME = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*")
#: Builtins that evaluate their arguments as arithmetic.
_ARITHMETIC_COMMANDS = frozenset({"let"})
#: Builtins that run their arguments as shell code, and shells that run the word after -c.
_CODE_COMMANDS = frozenset({"eval", "source", ".", "trap"})
_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "/bin/bash", "/bin/sh"})
#: Characters `step` acts on outside quotes; any other joins the word as it is.
_SPECIAL = frozenset(" \t\n#\\'\"`$()|;&<>[{}")
#: Characters `quoted` acts on inside double quotes; any other joins the word as it is.
_SPECIAL_IN_DOUBLE = frozenset('"\\$`')
#: The one character `quoted` acts on inside single quotes.
_SPECIAL_IN_SINGLE = frozenset("'")
_ARITH_HELP = ("arithmetic evaluates text such as a[$(cmd)] as code: check the value is a number first "
               "(${{ Number(x) }} in a `var` step) and pass it in `env:`")
_CODE_HELP = "pass the value as data instead: in `env:`, or as an argument after the code (bash -c 'echo \"$1\"' _ {{x}})"


class _Frame:
    """A command context: the script itself, or the inside of `$(...)`/`<(...)`."""

    def __init__(self, nested: bool, resume: list | None = None) -> None:
        self.nested = nested
        #: The quoting modes of the enclosing frame, restored at the closing `)`.
        self.resume = resume or []
        #: Every placeholder inside this frame: they are also part of the word it stands in.
        self.all_marks: list[Mark] = []
        self.depth = 0
        self.command_position = True
        self.word: list = []
        self.word_marks: list[Mark] = []
        self.redirect = False
        self.heredoc: bool | None = None  # the next word is a here-document delimiter (strip tabs?)
        self.test_marks: list[Mark] | None = None  # inside [[ ]]
        self.test_arithmetic = False
        self.command: str | None = None
        self.command_marks: list[Mark] = []
        self.array = 0
        self.last_word = ""
        #: bash -c was seen: True until its code operand, then False.
        self.shell_code: bool | None = None
        #: declare -i / -n was seen in this command.
        self.integers = False
        #: Unquoted `{` of a brace expansion open in the current word ({a,b}).
        self.braces = 0


class BashLexer(Lexer):
    def run(self) -> tuple[Slot, ...]:
        self.frames = [_Frame(False)]
        #: Variables declared -i (integer) or -n (reference): assigning them evaluates the value.
        self.integers: set[str] = set()
        #: Why nothing after this point can be proven (the rest of the script is unsafe).
        self.lost = ""
        self.modes: list[tuple[str, int]] = []  # (mode, depth) above the innermost frame
        self.pending: list[tuple[str, bool, bool]] = []  # here-documents waiting for their body
        i = 0
        seq = self.seq
        n = len(seq)
        frames = self.frames
        while i < n:
            c = seq[i]
            # Most characters only join the current word: taken here, without `step`'s
            # questions, when they mean nothing where they stand (the same outcome as
            # `step` and `quoted`, which see every other character; a placeholder is a Mark).
            if type(c) is str:
                modes = self.modes
                if not modes:
                    plain = c not in _SPECIAL
                else:
                    mode = modes[-1][0]
                    plain = (mode == "double" and c not in _SPECIAL_IN_DOUBLE) or (mode == "single" and c not in _SPECIAL_IN_SINGLE)
                if plain:
                    frames[-1].word.append(c)
                    i += 1
                    continue
            i = self.step(i)
        self.end_command(self.frames[-1])
        return self.slots()

    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def add(self, item: object, mark: Mark | None = None) -> None:
        frame = self.frame
        frame.word.append(item)
        if mark is not None:
            frame.word_marks.append(mark)
            frame.all_marks.append(mark)

    def place(self, mark: Mark, i: int, context: Context) -> None:
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
        if isinstance(c, Mark):
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
                self.continued(i)
                return i + 2
            self.add("\\")
            nxt = self.at(i + 1)
            if isinstance(nxt, Mark):
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
            if not frame.word and (frame.command_position or frame.last_word == "for") and self.at(i + 1) == "(":
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
        if c == "[" and frame.array and (not frame.word or frame.word[-1] == "("):
            self.modes.append(("subscript", 0))  # a=([index]=value): the index is arithmetic
        self.add(c)
        return i + 1

    def continued(self, i: int) -> None:
        """A line continuation at `i`: bash removes it before reading tokens, so one inside
        a word can join `$` and `(` into `$(`. The lexer does not follow that."""
        before = self.at(i - 1)
        if isinstance(before, str) and before not in ("", " ", "\t", "\n"):
            self.lost = "after a line continuation (\\ at the end of a line) inside a word, which the lexer does not follow"

    def dollar(self, i: int) -> int:
        if self.ahead(i, "$(("):
            self.add("$")
            self.modes.append(("arithmetic", 0))
            return i + 3
        if self.ahead(i, "$["):  # the old spelling of $((...))
            self.add("$")
            self.modes.append(("arithmetic-bracket", 0))
            return i + 2
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
            if isinstance(c, Mark):
                c.unsafe("inside a comment, where a line break in the value would start a command",
                         "move it out of the comment")
            return i + 1
        if isinstance(c, Mark):
            if mode == "single":
                self.place(c, i, Context.SINGLE)
            elif mode == "double":
                self.place(c, i, Context.DOUBLE)
            else:
                reasons = {
                    "backtick": ("inside backticks `...`, whose quoting cannot be proven", "write $(...) instead of backticks"),
                    "ansi": ("inside $'...', where backslashes are escapes", "use plain single quotes '...'"),
                    "parameter": ("inside ${...}", "set a variable from the value first, then expand it"),
                    "parameter-single": ("inside ${...}", "set a variable from the value first, then expand it"),
                    "parameter-double": ("inside ${...}", "set a variable from the value first, then expand it"),
                    "arithmetic": ("inside arithmetic $((...)) or ((...))", _ARITH_HELP),
                    "arithmetic-bracket": ("inside arithmetic $[...]", _ARITH_HELP),
                    "subscript": ("in an array index ([index]=value), which is arithmetic", _ARITH_HELP),
                }
                c.unsafe(*reasons[mode])
                self.add("\0", c)
            return i + 1
        if mode == "single":
            if c == "'":
                self.modes.pop()
            self.add(c)
            return i + 1
        if mode == "parameter-single":
            if c == "'":
                self.modes.pop()
            return i + 1
        if c == "\\" and not mode.startswith("arithmetic"):
            nxt = self.at(i + 1)
            if nxt == "\n" and mode == "double":
                self.continued(i)
            if isinstance(nxt, Mark):
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
                if self.ahead(i, "$["):
                    self.modes.append(("arithmetic-bracket", 0))
                    return i + 2
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
        if mode == "parameter-double":
            if c == '"':
                self.modes.pop()
            elif c == "`" or self.ahead(i, "$("):
                self.lost = "after a command substitution inside ${...}, whose end cannot be proven"
            return i + 1
        if mode == "parameter":
            # Quotes inside ${...} hide a `}` from bash, even within double quotes.
            if c in "'\"":
                self.modes.append(("parameter-single" if c == "'" else "parameter-double", 0))
                return i + 1
            if c == "`" or self.ahead(i, "$("):
                self.lost = "after a command substitution inside ${...}, whose end cannot be proven"
                return i + 1
            if c == "{":
                self.modes[-1] = (mode, depth + 1)
            elif c == "}":
                if depth == 0:
                    self.modes.pop()
                else:
                    self.modes[-1] = (mode, depth - 1)
            return i + 1
        if mode in ("arithmetic-bracket", "subscript"):
            if c in "[]":
                if c == "]" and depth == 0:
                    self.modes.pop()
                else:
                    self.modes[-1] = (mode, depth + (1 if c == "[" else -1))
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
                        mark.unsafe("in a [[ ]] test that compares numbers or names a variable (-eq, -lt, -v …)", _ARITH_HELP)
                frame.test_marks = None
                return
            if text in _ARITHMETIC_TESTS:
                frame.test_arithmetic = True
            frame.test_marks.extend(marks)
            return
        if frame.array:
            return
        self.argument(frame, text, marks)
        frame.last_word = text
        if not frame.command_position:
            return
        assignment = _ASSIGNMENT.match(text)
        if assignment and ("\0" not in text or text.index("\0") >= assignment.end()):
            if _NAME.match(text).group() in self.integers:
                for mark in marks:
                    mark.unsafe("assigned to a variable declared with -i or -n, whose value is arithmetic or a name", _ARITH_HELP)
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
            mark.unsafe("as (part of) the name of the command to run", COMMAND_HELP)

    def argument(self, frame: _Frame, text: str, marks: list[Mark]) -> None:
        """Arguments that bash itself reads as code, arithmetic or a variable name."""
        command, last = frame.command, frame.last_word
        if command in _SHELLS and frame.shell_code is None and re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", last):
            frame.shell_code = True  # the first operand after -c is the code
        if frame.shell_code and text != "--" and not (text.startswith("-") and "\0" not in text):
            frame.shell_code = False
            for mark in marks:
                mark.unsafe(f"in the code `{command} -c` runs", _CODE_HELP)
        if command in _NAME_OPTIONS and last == "-v":
            for mark in marks:
                mark.unsafe(f"as the name after `{command} -v`, whose subscript a[...] is arithmetic", _ARITH_HELP)
        if command in _NAME_COMMANDS and last not in _NAME_COMMANDS[command]:
            for mark in marks:
                mark.unsafe(f"as a variable name `{command}` sets, whose subscript a[...] is arithmetic", _ARITH_HELP)
        if command in _DECLARES:
            if text.startswith(("-", "+")) and not marks and set(text[1:]) & set("in"):
                frame.integers = True  # declare -i / -n: every value is arithmetic or a name
            name = text.split("=", 1)[0]
            if marks and (frame.integers or "\0" in name or "$()" in name):
                for mark in marks:
                    mark.unsafe(f"an argument of `{command}` that sets a name, an integer or a reference", _ARITH_HELP)
            elif frame.integers and _NAME.fullmatch(name):
                self.integers.add(name)
        if command in _RUNS_OTHER and not marks and not text.startswith("-") and "=" not in text:
            frame.command = text  # `builtin eval …` is eval, `env bash -c …` is bash -c

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
        frame.shell_code = None
        frame.integers = False
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
        continued = False
        while i < n:
            end = i
            while end < n and self.at(end) != "\n":
                end += 1
            line = self.seq[i:end]
            if not continued and all(isinstance(c, str) for c in line):
                text = "".join(line)
                if (text.lstrip("\t") if strip else text) == delimiter:
                    return end + 1
            self.body_marks(i, end, delimiter, quoted, strip)
            # In an unquoted body a line ending in an odd number of backslashes joins the
            # next, which is then not the delimiter. (A value's backslashes are doubled.)
            tail = len(line) - len("".join(c if isinstance(c, str) else "\0" for c in line).rstrip("\\"))
            continued = not quoted and tail % 2 == 1
            i = end + 1
        return i

    def body_marks(self, i: int, end: int, delimiter: str, quoted: bool, strip: bool) -> None:
        expansion = 0
        j = i
        while j < end:
            c = self.at(j)
            if isinstance(c, Mark):
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
