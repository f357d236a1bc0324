"""Load YAML into nodes with spans, reporting what YAML itself lets slip.

libyaml (through PyYAML's event API) does the scanning; this module composes the
events into `YNode`s itself, because that is the one pass where duplicate keys,
alias expansion, nesting depth and scalar typing can all be seen with their positions.
"""

from __future__ import annotations

import re

from catalyst_dsl.diagnostics import ids
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.syntax.decoding import decode  # noqa: F401 (read from here by the dialects)
from catalyst_dsl.syntax.pyyaml import yaml
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_errors import report_reader_error, report_yaml_error
from catalyst_dsl.syntax.yaml_nodes import YMap, YNode, YScalar, YSeq
from catalyst_dsl.syntax.yaml_schema import (
    STANDARD_TAGS,
    TYPED_FIRST_CHARS,
    NumberTooLarge,
    core_value,
    tagged_value,
    yaml11_reading,
)

try:  # libyaml when it is there: the pure-Python parser is ten times slower
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_ScalarEvent = yaml.ScalarEvent
_MappingStartEvent, _SequenceStartEvent = yaml.MappingStartEvent, yaml.SequenceStartEvent
_MappingEndEvent, _SequenceEndEvent = yaml.MappingEndEvent, yaml.SequenceEndEvent

#: Deeper flow nesting makes libyaml quadratic; no playbook needs it.
MAX_DEPTH = 64
#: Alias expansion budget: nodes reachable through aliases, beyond the nodes written.
ALIAS_BUDGET_BASE = 10_000
ALIAS_BUDGET_FACTOR = 10


# -- Entry points --------------------------------------------------------------------


def load_yaml(
    source: SourceFile,
    sink: DiagnosticSink,
    *,
    start: int = 0,
    end: int | None = None,
) -> YNode | None:
    """Compose the single YAML document in `source.text[start:end]`.

    Spans always point into `source`, so front matter cut out of a Markdown file keeps
    the file's own lines and columns. Returns None when there is nothing usable.
    """
    text = source.text[start:end]
    if _flow_too_deep(source, text, start, sink):
        return None
    composer = _Composer(source, sink, start)
    # The parser driven here rather than through yaml.parse (a generator around the same
    # two calls), and scalars (most events) handed to their handler directly: a library's
    # files make hundreds of thousands of events.
    loader = _Loader(text)
    try:
        next_event = loader.get_event  # None once the stream has ended
        scalar, feed = composer._scalar, composer.feed
        while (event := next_event()) is not None:
            if scalar(event) if type(event) is _ScalarEvent else feed(event):
                break
    except yaml.MarkedYAMLError as exc:
        report_yaml_error(source, sink, start, exc)
        return None
    except yaml.YAMLError as exc:  # reader errors carry no mark in the C parser
        report_reader_error(source, sink, start, text, exc)
        return None
    finally:
        loader.dispose()
    return composer.result()


def _flow_too_deep(source: SourceFile, text: str, base: int, sink: DiagnosticSink) -> bool:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False  # cannot be too deep: skip the scan
    at = _too_deep_flow_at(text)
    if at is None:
        return False
    sink.report(
        ids.TOO_DEEP,
        f"collections are nested more than {MAX_DEPTH} levels deep",
        source.span(base + at, base + at + 1),
        help="flatten the structure; no playbook needs this depth",
    )
    return True


# The rest of a quoted scalar after its opening quote, through the closing one. Both are
# written as "unrolled loops" (no nested repetition), so a match is linear in its length.
_DOUBLE_QUOTED_REST = LazyPattern(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SINGLE_QUOTED_REST = LazyPattern(r"[^']*(?:''[^']*)*'")
#: Inside a flow collection only these matter; everything else is scalar text.
_FLOW_SPECIAL = LazyPattern(r"[\[\]{}\"'#]")
#: Where plain text in block context can stop: a value indicator `: `, a comment ` #`, the line end.
_PLAIN_STOP = LazyPattern(r":(?=[ \t\n]|$)|[ \t]#|\n")
_NOT_BLANK = LazyPattern(r"[^ \t\n]*")


def _too_deep_flow_at(text: str) -> int | None:
    """The offset of the first `[` or `{` that opens a flow collection deeper than MAX_DEPTH.

    A one-pass (linear) approximation of YAML's tokenizer that knows just enough to tell a
    flow bracket from a bracket in text: quoted scalars (which may span lines), block
    scalars (`|`, `>` and the lines indented below them), multi-line plain scalars and
    comments. Where it is unsure it reads text, never nesting: a missed deep collection is
    still stopped by the composer's own depth check; a bracket in text taken for nesting
    would be a false C009 on a valid playbook.
    """
    n = len(text)
    k = 0
    #: Lines indented more than this column are text (a block scalar's content or the
    #: continuation of a plain scalar); None when no such text is open.
    text_above: int | None = None
    #: The owner column of a node still to come from an earlier line (after `key:` or
    #: `- ` at a line end; the document root at first), None when nothing is pending.
    pending: int | None = -1
    while k < n:
        line_start = k
        line_end = text.find("\n", k)
        if line_end == -1:
            line_end = n
        while k < line_end and text[k] == " ":
            k += 1
        indent = k - line_start
        if text_above is not None:
            if not text[k:line_end].strip(" \t") or indent > text_above:
                k = line_end + 1
                continue
            text_above = None
        if text.startswith("%", line_start):  # a directive line
            k = line_end + 1
            continue
        if k == line_end or text[k] == "#":
            k = line_end + 1  # blank or comment only: nothing changes, not even `pending`
            continue
        # The column of the structure that owns a node starting here: a block scalar's
        # content or a plain scalar's continuation must be indented more than it.
        owner = pending if pending is not None else indent - 1
        key_col = indent  # where the current node (a key, perhaps) started
        props_col: int | None = None  # where the current node's anchor or tag started
        node = True  # a node may start here, so `[`, `{`, quotes, `|` and `>` are indicators
        plain = False  # inside a plain scalar
        while k < line_end:
            c = text[k]
            if c in " \t":
                k += 1
                continue
            # A `#` after a space starts a comment; so does one right after a quoted
            # scalar, flow collection or alias (libyaml needs no space there).
            if c == "#" and (text[k - 1] in " \t" or not (node or plain)):
                plain = False  # a comment ends a plain scalar: no continuation after it
                break
            col = k - line_start
            if not node:
                # Plain text, or what follows a closed quote, flow collection or alias:
                # only a `: ` (a value starts) or a comment can matter on the rest of the line.
                m = _PLAIN_STOP.search(text, k, line_end + 1)
                if m is None or m.group() == "\n":
                    break
                if m.group() != ":":
                    plain = False
                    break
                node, plain, owner, props_col = True, False, key_col, None
                k = m.end()
                continue
            after = text[k + 1] if k + 1 < line_end else "\n"
            if c in "-?:" and after in " \t\n":  # block sequence entry, explicit key or value
                # `!!str : x` is a mapping whose empty key has a tag: it is indented at the tag.
                owner = props_col if c == ":" and props_col is not None else col
                props_col = None
                k += 1
                continue
            if (
                k == line_start
                and (text.startswith("---", k) or text.startswith("...", k))
                and (k + 3 >= line_end or text[k + 3] in " \t")
            ):
                if c == ".":  # document end: nothing follows on the line
                    break
                owner = -1  # `--- |` starts a block scalar at the root
                k += 3
                continue
            if c in "&!":  # an anchor or a tag: the node itself comes after it
                props_col = col if props_col is None else props_col
                k = _NOT_BLANK.match(text, k, line_end).end()
                continue
            # A key's properties belong to it: a mapping whose first key is `!!str a`
            # is indented at the tag, not at the `a`.
            key_col = col if props_col is None else props_col
            node = False
            if c == "*":  # an alias
                k = _NOT_BLANK.match(text, k, line_end).end()
            elif c in "|>":  # a block scalar: the rest of the line is its header
                text_above = owner
                break
            elif c in "\"'":
                m = (_DOUBLE_QUOTED_REST if c == '"' else _SINGLE_QUOTED_REST).match(text, k + 1)
                if m is None:
                    return None  # never closed: the rest is text, and YAML reports the quote
                k = m.end()
                if k > line_end:  # the scalar spanned lines: carry on in the line it ends in
                    line_start = text.rfind("\n", 0, k) + 1
                    line_end = text.find("\n", k)
                    line_end = n if line_end == -1 else line_end
            elif c in "[{":
                depth = 1
                k += 1
                quote_end = -1  # where the last quoted scalar inside the collection ended
                while depth:
                    m = _FLOW_SPECIAL.search(text, k)
                    if m is None:
                        return None  # never closed: YAML reports it
                    q = m.start()
                    c = text[q]
                    k = q + 1
                    if c in "[{":
                        depth += 1
                        if depth > MAX_DEPTH:
                            return q
                    elif c in "]}":
                        depth -= 1
                    elif c == "#":
                        # A comment when it starts a token; else text, as in [a#b].
                        if text[q - 1] in " \t\n[]{}," or q == quote_end:
                            k = text.find("\n", q)
                            if k == -1:
                                return None
                    elif text[q - 1] in " \t\n[{,:":  # a quote that starts a quoted scalar
                        m = (_DOUBLE_QUOTED_REST if c == '"' else _SINGLE_QUOTED_REST).match(text, k)
                        if m is None:
                            return None
                        k = quote_end = m.end()
                    # else: a quote inside a plain scalar such as [don't], which is text
                if k > line_end:  # the collection spanned lines
                    line_start = text.rfind("\n", 0, k) + 1
                    line_end = text.find("\n", k)
                    line_end = n if line_end == -1 else line_end
            else:
                plain = True
        if plain:
            text_above = owner  # more-indented lines continue the plain scalar
        pending = owner if node else None
        k = line_end + 1
    return None


class _Frame:
    __slots__ = ("node", "anchor", "key", "has_key", "keys", "size", "merges")

    def __init__(self, node: YSeq | YMap, anchor: str | None, mapping: bool) -> None:
        self.node = node
        self.anchor = anchor
        #: The key waiting for its value; None with has_key set for a collection key (C012).
        self.key: YScalar | None = None
        self.has_key = False
        #: A mapping's keys so far (None for a list, which has none).
        self.keys: dict[str, YScalar] | None = {} if mapping else None
        self.size = 1
        #: The mapping's `<<` keys with their values, once it has one (few mappings do).
        self.merges: list[tuple[YScalar, YNode]] | None = None


class _Composer:
    """Turns the event stream into nodes, one document, checking as it goes."""

    def __init__(self, source: SourceFile, sink: DiagnosticSink, base: int) -> None:
        self.source = source
        self.sink = sink
        self.base = base
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[YNode, int] | None] = {}
        self.root: YNode | None = None
        self.documents = 0
        self.written = 0
        self.expanded = 0
        self.failed = False

    # Each feed returns True to stop reading events.
    def feed(self, event: yaml.Event) -> bool:
        kind = type(event)
        if kind is _ScalarEvent:
            return self._scalar(event)
        if kind is _MappingEndEvent or kind is _SequenceEndEvent:
            return self._end(event)
        if kind is _MappingStartEvent or kind is _SequenceStartEvent:
            return self._start(event, kind is _MappingStartEvent)
        if kind is yaml.AliasEvent:
            return self._alias(event)
        if kind is yaml.DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                at = self.base + event.start_mark.index
                self.sink.report(
                    ids.MULTIPLE_DOCUMENTS,
                    "a playbook file holds one YAML document; a second one starts here",
                    self.source.span(at, at + 3),
                    help="move the second playbook into a file of its own, or remove the '---' line",
                )
                return True
        return False

    def _span_of(self, event: yaml.Event) -> tuple[int, int]:
        return self.base + event.start_mark.index, self.base + event.end_mark.index

    def _check_tag(self, event: yaml.Event, start: int, end: int) -> str | None:
        tag = event.tag
        if tag is None or tag == "!":
            return None
        if tag not in STANDARD_TAGS:
            self.sink.report(
                ids.UNSUPPORTED_TAG,
                f"the YAML tag '{self._written_tag(start, tag)}' is not supported in playbooks",
                self.source.span(start, end),
                help="remove the tag; playbooks use plain YAML values",
            )
            return None
        return tag

    def _written_tag(self, start: int, tag: str) -> str:
        """The tag as the user wrote it (`!!int`), not as YAML resolves it (`tag:yaml.org,2002:int`).

        A node's properties (its `&anchor` and `!tag`, in either order) come first in its
        span; the one starting with `!` is the tag.
        """
        text = self.source.text
        at = start
        for _ in range(2):
            written = _NOT_BLANK.match(text, at).group()
            if written.startswith("!"):
                return written
            if not written.startswith("&"):
                break
            at += len(written)
            while text[at : at + 1] in (" ", "\t", "\n"):
                at += 1
        # Not found where expected: give the standard shorthand back where there is one.
        return "!!" + tag[len("tag:yaml.org,2002:") :] if tag.startswith("tag:yaml.org,2002:") else tag

    def _scalar(self, event: yaml.ScalarEvent) -> bool:
        base = self.base
        start, end = base + event.start_mark.index, base + event.end_mark.index
        tag = None if event.tag is None else self._check_tag(event, start, end)
        text = event.value
        style = event.style or ""
        if tag is not None:
            try:
                value = tagged_value(text, tag)
            except ValueError as exc:
                self.sink.report(
                    ids.UNSUPPORTED_TAG,
                    f"{exc} (tag {self._written_tag(start, tag)})",
                    self.source.span(start, end),
                    help="remove the tag or fix the value",
                )
                value = text
        elif style or (text and text[0] not in TYPED_FIRST_CHARS):
            value = text  # quoted, or plain text that reads as nothing else (most scalars)
        else:
            try:
                value = core_value(text)
            except NumberTooLarge as exc:
                self.sink.report(
                    ids.NUMBER_TOO_LARGE,
                    str(exc),
                    self.source.span(start, end),
                    help="write a smaller number, or quote it if it is meant as text",
                )
                value = text
        node = YScalar(value, text, style, start, end, self.source, tag)
        self.written += 1
        anchor = event.anchor
        stack = self.stack
        if anchor is not None or not stack:
            return self._add(node, anchor, 1)
        # `_add` written out for the usual scalar, one without an anchor in a list or a
        # mapping: most events of a file are such scalars.
        frame = stack[-1]
        frame.size += 1
        parent = frame.node
        if frame.keys is None:  # a list
            parent.items.append(node)
            return False
        if not frame.has_key:
            frame.key, frame.has_key = self._key(node), True
            return False
        return self._pair(frame, parent, node)

    def _start(self, event: yaml.Event, mapping: bool) -> bool:
        base = self.base
        start, end = base + event.start_mark.index, base + event.end_mark.index
        if event.tag is not None:
            self._check_tag(event, start, end)
        flow = bool(event.flow_style)
        node: YSeq | YMap = (
            YMap([], start, end, self.source, flow) if mapping else YSeq([], start, end, self.source, flow)
        )
        if len(self.stack) >= MAX_DEPTH:
            self.sink.report(
                ids.TOO_DEEP,
                f"collections are nested more than {MAX_DEPTH} levels deep",
                self.source.span(start, start + 1),
                help="flatten the structure; no playbook needs this depth",
            )
            return True
        if event.anchor is not None:
            self.anchors[event.anchor] = None  # in progress: an alias to it is recursive
        self.written += 1
        self.stack.append(_Frame(node, event.anchor, mapping))
        return False

    def _end(self, event: yaml.Event) -> bool:
        frame = self.stack.pop()
        node = frame.node
        node.end = self.base + event.end_mark.index
        if frame.merges:  # a mapping's only
            self._apply_merges(frame)
        return self._add(node, frame.anchor, frame.size)

    def _alias(self, event: yaml.AliasEvent) -> bool:
        start, end = self._span_of(event)
        name = event.anchor
        if name not in self.anchors:
            self.sink.report(
                ids.BAD_ALIAS,
                f"the alias *{name} has no anchor &{name} before it",
                self.source.span(start, end),
                help=f"define &{name} before using *{name}",
            )
            return True
        target = self.anchors[name]
        if target is None:
            self.sink.report(
                ids.BAD_ALIAS,
                f"the alias *{name} refers to the node that contains it",
                self.source.span(start, end),
                help="an alias cannot refer to its own ancestor; copy the content instead",
            )
            return True
        node, size = target
        self.expanded += size
        budget = ALIAS_BUDGET_BASE + ALIAS_BUDGET_FACTOR * self.written
        if self.expanded > budget:
            self.sink.report(
                ids.ALIAS_BOMB,
                f"aliases expand to more than {budget:,} nodes (an alias bomb)",
                self.source.span(start, end),
                help="use fewer nested aliases; write the repeated content out where it is needed",
            )
            return True
        return self._add(_at_alias(node, start, end), None, size)

    def _add(self, node: YNode, anchor: str | None, size: int) -> bool:
        if anchor is not None:
            self.anchors[anchor] = (node, size)
        if not self.stack:
            self.root = node
            return False
        frame = self.stack[-1]
        frame.size += size
        parent = frame.node
        if frame.keys is None:  # a list
            parent.items.append(node)
            return False
        if not frame.has_key:
            frame.key, frame.has_key = self._key(node), True
            return False
        return self._pair(frame, parent, node)

    def _pair(self, frame: _Frame, parent: YMap, node: YNode) -> bool:
        """`node` is the value of the key `frame` holds: the pair goes into `parent`."""
        key, frame.key, frame.has_key = frame.key, None, False
        if key is None:
            # A collection key (reported as C012) is dropped with its value: a stand-in
            # key would take part in duplicate detection (a false C006 when two of them,
            # or one and a real "?" key, share a mapping) and in every later key check.
            return False
        if key.text == "<<" and key.is_plain:
            if frame.merges is None:
                frame.merges = []
            frame.merges.append((key, node))
            return False
        first = frame.keys.get(key.text)
        if first is not None:
            self.sink.report(
                ids.DUPLICATE_KEY,
                f"the key '{key.text}' appears twice in this mapping",
                key.span,
                labels=[Label(first.span, "first defined here")],
                help="remove one of them: YAML parsers silently keep only the last one",
            )
            return False
        frame.keys[key.text] = key
        parent.pairs.append((key, node))
        return False

    def _key(self, node: YNode) -> YScalar | None:
        if isinstance(node, YScalar):
            if node.style:
                return node  # a quoted key is text, for YAML 1.1 tools too
            if node.text and not isinstance(node.value, str):
                reading = yaml11_reading(node) or f"{_kind_of(node.value)}"
                self.sink.report(
                    ids.NON_STRING_KEY,
                    f"the key {node.text} is read as {reading}, not as text",
                    node.span,
                    help=f"quote the key: '{node.text}'",
                )
            elif (reading := yaml11_reading(node)) is not None:
                self.sink.report(
                    ids.NON_STRING_KEY,
                    f"YAML 1.1 tools read the key {node.text} as {reading}",
                    node.span,
                    help=f"quote the key: '{node.text}'",
                )
            return node
        self.sink.report(
            ids.COMPLEX_KEY,
            "a mapping key must be a plain string, not a collection",
            node.span,
            help="use a string key",
        )
        return None

    def _apply_merges(self, frame: _Frame) -> None:
        node = frame.node
        assert isinstance(node, YMap)
        for key, value in frame.merges:
            sources = value.items if isinstance(value, YSeq) else [value]
            if all(isinstance(merged, YMap) for merged in sources):
                self.sink.report(
                    ids.MERGE_KEY,
                    "a merge key (<<) is a YAML 1.1 extension: catalyst merges it, as the original engine did, "
                    "but YAML 1.2 tools read a key named '<<'",
                    key.span,
                    help="write the keys out, or keep shared steps in a `function` or a called playbook",
                )
            for merged in sources:
                if not isinstance(merged, YMap):
                    self.sink.report(
                        ids.YAML_SYNTAX,
                        "a merge key (<<) needs a mapping or a list of mappings",
                        key.span,
                        help="merge an anchored mapping: <<: *defaults",
                    )
                    continue
                for k, v in merged.pairs:
                    if k.text not in frame.keys:  # keys written here win over merged ones
                        frame.keys[k.text] = k
                        node.pairs.append((k, v))

    def result(self) -> YNode | None:
        return self.root


def _at_alias(node: YNode, start: int, end: int) -> YNode:
    """The aliased node, re-positioned at the alias (its children stay where they were written)."""
    if isinstance(node, YScalar):
        return YScalar(node.value, node.text, node.style, start, end, node.source, node.tag)
    if isinstance(node, YSeq):
        return YSeq(node.items, start, end, node.source, node.flow)
    return YMap(node.pairs, start, end, node.source, node.flow)


def _kind_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "text"
