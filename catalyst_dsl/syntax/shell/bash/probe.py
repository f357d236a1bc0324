"""The script as the parser sees it (the probe): the author's text with a reference in
place of each placeholder, the holes' byte ranges, and what the other parts of the
analyzer ask of it: a node's text, a word's literal value, a command's effective
program and arguments, where a span lies in the template.

The holes are sorted by where they start, so asking whether a node holds one is a
bisection and a long script with many values stays linear.
"""

from __future__ import annotations

import bisect
import re

from catalyst_dsl.syntax.shell.programs.words import UNKNOWN
from catalyst_dsl.syntax.shell.bash.findings import REFERENCE, Hole


class ScriptProbe:
    """The state every part of the analyzer shares, and its questions about the text.

    The parts that analyse a child script (`bash -c CODE`) or an argument list are
    given by the composed analyzer (refs.py), which alone knows how to make one."""

    def __init__(self, pieces: tuple[str | Hole, ...]) -> None:
        chunks: list[bytes] = []
        self.holes: list[tuple[Hole, int, int]] = []  # each with its byte range in the probe
        self.text_at: list[tuple[int, int, bytes]] = []  # (probe byte, template offset, text) per author piece
        at = 0
        template = 0
        for piece in pieces:
            if isinstance(piece, Hole):
                data = ("${" + REFERENCE.format(piece.index) + "}").encode()
                self.holes.append((piece, at, at + len(data)))
                template = piece.end
            else:
                data = piece.encode("utf-8", "surrogatepass")
                self.text_at.append((at, template, data))
                template += len(piece)
            chunks.append(data)
            at += len(data)
        self.probe = b"".join(chunks)
        # What the script declares, filled by Facts._facts (facts.py) before anything asks.
        self.clean: set[str] = set()
        self.assigned: set[str] = set()
        self.integer_names: set[str] = set()
        self.array_names: set[str] = set()
        self.associative: set[str] = set()
        self.namerefs: set[str] = set()
        self.exported: set[str] = set()
        self.declared_at: dict[str, object] = {}
        #: Regions that are names with a subscript (`unset 'a[x]'`): only the subscript is arithmetic.
        self.named_regions: set[tuple[int, int]] = set()
        #: (variable, the nodes of its new text or None when opaque, the assigning node)
        self.sites: list[tuple[str, list | None, object]] = []
        self.sites_of: dict[str, list] = {}
        self.hole_starts = [start for _, start, _ in self.holes]
        self.functions: set[str] = set()
        # Each command's words, read once however many values it holds (placement, allow_list).
        self._argv_cache: dict[tuple, tuple] = {}
        self._argument_ends: dict[tuple, dict[int, int]] = {}
        self.root = None
        self.bodies: dict | None = None
        #: A child's variables its parent script may have given a value (`export N=...`).
        self.inherited: frozenset = frozenset()

    def _text(self, node) -> str:
        return self.probe[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def _bytes(self, node) -> bytes:
        return self.probe[node.start_byte : node.end_byte]

    def _literal(self, node) -> str | None:
        """The text of a word the author wrote as a constant, or None if it expands."""
        if node is None:
            return None
        if node.type == "command_name" and node.child_count == 1:
            node = node.children[0]
        if node.type == "concatenation" and node.child_count and node.children[0].type == "word":
            head = self._text(node.children[0])
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=|-[-A-Za-z0-9_.=]*", head):
                return head + UNKNOWN  # NAME=<value>, --option=<value>: the head is known
        if self._overlaps_hole(node.start_byte, node.end_byte):
            return None  # it holds a value (also inside single quotes, where it is text to the parser)
        text = self._text(node)
        if node.type in ("word", "number") and not re.search(r"[$`*?\[{~]", text):
            return re.sub(r"\\(.)", r"\1", text)  # `\;` is `;`
        if node.type == "raw_string":
            return text[1:-1]
        if node.type == "string" and all(c.type in ('"', "string_content") for c in node.children):
            return re.sub(r'\\([\\"$`])', r"\1", text[1:-1])
        return None

    def _template_span(self, start: int, end: int) -> tuple[int, int]:
        """Offsets in the template of the probe's bytes start..end (inside the author's text)."""
        for probe_at, template_at, data in reversed(self.text_at):
            if probe_at <= start:
                head = len(data[: start - probe_at].decode("utf-8", "surrogatepass"))
                length = len(self.probe[start:end].decode("utf-8", "surrogatepass"))
                return template_at + head, template_at + head + length
        return 0, 0

    def _holds_hole(self, node, holes=None) -> bool:
        """Whether a placeholder lies within `node` (found by bisection: a long script with
        many values stays linear)."""
        at = bisect.bisect_left(self.hole_starts, node.start_byte)
        return at < len(self.hole_starts) and self.holes[at][2] <= node.end_byte

    def _hole_at(self, start: int) -> bool:
        """Whether the byte `start` lies inside a placeholder."""
        at = bisect.bisect_right(self.hole_starts, start) - 1
        return at >= 0 and start < self.holes[at][2]

    def _overlaps_hole(self, start: int, end: int) -> bool:
        at = bisect.bisect_left(self.hole_starts, end) - 1
        return at >= 0 and self.holes[at][2] > start

    def _effective(self, command) -> tuple[str | None, list]:
        """The builtin or program a command runs, behind `builtin`, `command` and `time`,
        its name read as bash reads it (`\\read`, `"read"`), and the arguments it gets."""
        words = [command.child_by_field_name("name"), *command.children_by_field_name("argument")]
        at = 0
        while at < len(words) - 1 and self._literal(words[at]) in ("builtin", "command", "time", "nohup"):
            at += 1
            while at < len(words) - 1 and (self._literal(words[at]) or "").startswith("-"):
                at += 1  # `command -p`, `time -p`
        return self._literal(words[at]), words[at + 1 :]

    # -- what the composed analyzer gives (refs.py) --------------------------------------------------------

    def _refused_arguments(self, argv: list[str | None]) -> dict[int, str]:
        """The arguments of a command that may not hold a value, with why (`refs.argv_refusals`)."""
        raise NotImplementedError

    def _child_code_reads_stdin(self, code: str) -> bool:
        """Whether the literal code of a `bash -c` runs its standard input as code."""
        raise NotImplementedError

    def _child_code_problem(self, code: str, inherited: frozenset) -> str:
        """The first problem of the literal code of a `bash -c` given the variables `inherited`, or ""."""
        raise NotImplementedError
