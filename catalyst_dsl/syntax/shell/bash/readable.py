"""Scripts the analysis does not follow: where bash might read the text otherwise than
the parse says (a joined line, a stray carriage return, aliases, an odd here-document
delimiter...), or nesting too deep to follow in linear time. Every value of such a
script is refused.
"""

from __future__ import annotations

import re

from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.shell.programs.stdin import reads_code_from_stdin
from catalyst_dsl.syntax.shell.bash.probe import ScriptProbe
from catalyst_dsl.syntax.shell.bash.tree import MAX_DEPTH, nesting_depth, walk


#: A here-document delimiter bash and tree-sitter read alike: a plain word, maybe quoted.
_PLAIN_DELIMITER = LazyPattern(r"\\?[A-Za-z0-9_.-]+|'[A-Za-z0-9_.-]+'|\"[A-Za-z0-9_.-]+\"")
#: A backslash-newline inside a word: bash joins the word (`ev\\<newline>al`), tree-sitter splits it.
_JOINED_LINE = LazyPattern(rb"[^\s\\]\\\n[^\s]")


class Readability(ScriptProbe):
    """Whether the parse can be trusted to say how bash reads the script."""

    def _unreadable(self, root) -> tuple[str, str] | None:
        """Why bash might read the script otherwise than the parse says, or None."""
        joined = _JOINED_LINE.search(self.probe)
        if joined is not None:
            line = self.probe.count(b"\n", 0, joined.start()) + 1
            return (
                f"in a script with a line continuation inside a word (line {line}), which bash joins and "
                "other readers split",
                "put a space before the backslash at the end of the line",
            )
        if nesting_depth(root) > MAX_DEPTH:
            return (
                f"in a script nested deeper than {MAX_DEPTH} levels, which catalyst does not follow",
                "split the script into functions or steps",
            )
        if re.search(rb"[\r\f\v]", self.probe):
            return (
                "in a script that holds a carriage return, form feed or vertical tab, which bash reads as part of "
                "a word and other readers as a blank",
                "save the script with plain line ends (LF)",
            )
        if re.search(rb"\{[A-Za-z_][A-Za-z0-9_]*\[", self.probe) and re.search(
            rb"\{[A-Za-z_][A-Za-z0-9_]*\[[^]]*\]\}[<>]", self.probe
        ):
            return (
                "in a script that names a file descriptor by an array element (`{a[i]}>`), whose subscript bash "
                "evaluates",
                "name the descriptor by a plain variable: {fd}>",
            )
        if re.search(rb"\bcoproc\b", self.probe):
            return (
                "in a script with a `coproc`, whose input catalyst cannot follow",
                "run the program with a file of its own",
            )
        if re.search(rb"alias|posix", re.sub(rb"['\"\\]", b"", self.probe), re.IGNORECASE):
            return (
                "in a script that turns aliases on, where a command's name may stand for any code",
                "use a function instead of an alias",
            )
        for node in walk(root):
            if node.is_error or node.is_missing:
                line, column = node.start_point
                return (
                    f"in a script that does not parse as bash (line {line + 1}, column {column + 1} of the script), "
                    "so where the value lands cannot be shown",
                    "fix the script's syntax (`bash -n` shows the error)",
                )
            if node.type == "command_name" and self._text(node) in ("{", "}"):
                return (
                    "in a script with a group `{ ...; }` where other readers see a command (after `time`, say)",
                    "put the group in a function, or drop the word before it",
                )
            if node.type == "number" and self.probe[node.end_byte : node.end_byte + 1] in (b"<", b">"):
                redirection = self._text(node) + self.probe[node.end_byte : node.end_byte + 1].decode()
                return (
                    f"in a script with the redirection {redirection}, "
                    "which bash reads as a redirection of that descriptor and other readers as an argument",
                    "write `<` for the input (`0<` is the same)",
                )
            if (
                node.type == "command"
                and self._literal(node.child_by_field_name("name")) == "coproc"
                and reads_code_from_stdin([self._literal(a) for a in node.children_by_field_name("argument")])
            ):
                return ("in a script whose `coproc` runs its input as code", "run the program with a script of its own")
            if node.type == "process_substitution" and self._stdin_runner(node) is not None:
                return (
                    f"in a script whose process substitution {self._text(node)[:40]} runs its input as code",
                    "write what the program runs to a file the script names, not to its input",
                )
            if node.type == "heredoc_start" and not _PLAIN_DELIMITER.fullmatch(self._text(node)):
                return (
                    f"in a script with the here-document delimiter {self._text(node)}, which is not a plain word: "
                    "readers of bash disagree on where its body ends",
                    "write the delimiter as a plain word, quoted or not: <<EOF, <<'EOF', <<\"EOF\"",
                )
        return None
