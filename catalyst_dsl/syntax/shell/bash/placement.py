"""Where each placeholder stands: its quoting context (how its reference is written), a
here-document body read as bash reads it, and the program that would take a value
starting with `-` as an option.
"""

from __future__ import annotations

import re

from catalyst_dsl.syntax.shell.programs.options import option_program
from catalyst_dsl.syntax.shell.bash.findings import Finding, Hole
from catalyst_dsl.syntax.shell.bash.probe import ScriptProbe
from catalyst_dsl.syntax.shell.bash.tree import enclosing, escaped, quoted_heredoc, quoting
from catalyst_dsl.syntax.shell.slots import Context


class Placement(ScriptProbe):
    """A Finding for each placeholder, from where it stands."""

    def _slot(self, root, hole: Hole, start: int, end: int) -> Finding:
        node = root.descendant_for_byte_range(start, end)
        inside = node.start_byte < start and end < node.end_byte
        body = enclosing(node, "heredoc_body")
        if body is not None:
            return self._body_slot(hole, body, start)
        if node.type == "expansion" and node.end_byte == end and not self.probe[node.start_byte : start].strip():
            context = quoting(node)
            at = node
        elif node.type == "raw_string" and inside:
            # inside a double-quoted `${x:-'...'}` the quotes are text, and the value is in double quotes
            context, at = (Context.DOUBLE if quoting(node) is Context.DOUBLE else Context.SINGLE), node
        elif node.type == "ansi_c_string" and inside:
            if escaped(self.probe, start):
                return self._refuse(
                    hole, "right after a backslash in a $'...' string", "put the value elsewhere in the string"
                )
            context, at = Context.ANSI_C, node
        elif node.type == "comment" and node.start_byte < start:
            return Finding(Context.COMMENT, hole.start, hole.end)
        else:
            return self._refuse(
                hole,
                "not a whole word for bash (it follows a backslash, or is part of a name)",
                "put the placeholder apart: in double quotes, or between spaces",
            )
        problem = self._path(at, start)
        if problem is not None:
            return self._refuse(hole, *problem)
        return Finding(context, hole.start, hole.end, option_of=self._option_of(at) or "")

    def _option_of(self, node) -> str | None:
        """The program that reads the argument the value begins (`"${V}"`, `${V}.git`,
        `''"${V}"`, `"$prefix${V}"` with an empty prefix) as an option that may run
        something, if no `--` comes before it."""
        argument = node
        while argument.parent is not None and argument.parent.type in ("string", "concatenation"):
            argument = argument.parent
        command = argument.parent
        if command is None or command.type != "command":
            return None
        first = self._first_piece(argument)
        if first is None or (first.start_byte, first.end_byte) != (node.start_byte, node.end_byte):
            return None
        key = ("option", command.start_byte, command.end_byte)
        if key not in self._argv_cache:
            name, arguments = self._effective(command)
            self._argv_cache[key] = (
                [name] + [self._literal(a) for a in arguments],
                {a.start_byte: i for i, a in enumerate(arguments, 1)},
                {a.start_byte: a.end_byte for a in arguments},
            )
        argv, index_of, ends = self._argv_cache[key]
        at = index_of.get(argument.start_byte)
        if at is None or ends.get(argument.start_byte) != argument.end_byte:
            return None  # not an argument (a prefix assignment, a redirection)
        return option_program(argv, at)

    def _body_slot(self, hole: Hole, body, start: int) -> Finding:
        """A placeholder in a here-document's body. The body is read here as bash reads it,
        not from the parse (tree-sitter reads `$(( ))` in a body as a subshell): only `$`,
        a backquote and a backslash are special in it, so a reference is plain data unless
        it stands after a backslash or inside an expansion of the author's."""
        if quoted_heredoc(body, self._text):
            context = Context.HEREDOC_QUOTED
        else:
            context = Context.HEREDOC
            before = self.probe[body.start_byte : start]
            if escaped(self.probe, start):
                return self._refuse(
                    hole, "right after a backslash in a here-document", "put the value elsewhere on the line"
                )
            text = self.probe[body.start_byte : body.end_byte]
            if b"$(" in text or b"`" in text or b"$[" in text or before.count(b"${") > before.count(b"}"):
                return self._refuse(
                    hole,
                    "in a here-document that runs commands or arithmetic (`$(...)`, backquotes, "
                    "`$[...]`) or inside a `${...}` of it, where its place cannot be shown",
                    "compute those before the here-document into variables, or quote its delimiter (<<'EOF')",
                )
        problem = self._path(body, start)
        if problem is not None:
            return self._refuse(hole, *problem)
        return Finding(context, hole.start, hole.end)

    def _refuse(self, hole: Hole, problem: str, help: str) -> Finding:
        return Finding(Context.UNSAFE, hole.start, hole.end, problem, help)

    def _first_piece(self, argument):
        """The first non-empty piece of a word (`''"$x"` starts with `$x`), or None if it
        starts with literal text."""
        pieces = [argument]
        while pieces:
            node = pieces[0]
            if self._bytes(node)[:1].isspace():
                return None  # (tree-sitter starts an expansion at the blank before it) it starts with a blank
            if node.type in ("concatenation", "string") and node.named_child_count:
                pieces = [c for c in node.children if c.is_named] + pieces[1:]
            elif (
                self._bytes(node) in (b"''", b'""', b"$''")
                or node.type in ("expansion", "simple_expansion")
                and not self._is_value_use(node)
                and not self._holds_hole(node)
            ):
                pieces.pop(0)  # empty quotes, or a variable without a value that may be empty
            else:
                break
        if not pieces:
            return None
        first = pieces[0]
        if first.type == "word" and re.search(r"[{}]", self._text(first)):
            return first  # a brace expansion: which word comes first is known only when it runs
        if first.type in ("word", "raw_string", "string_content", "ansi_c_string", "number"):
            return None
        return first
