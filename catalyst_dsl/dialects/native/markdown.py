"""Markdown playbooks: front matter, inputs, phases, STOP HERE, @refs.

The front matter is parsed where it stands in the file, so every line and column stays
the file's own. The body becomes one `ai-prompt` step per phase heading (or one for the
whole body), a `checkpoint` after each phase that has a STOP HERE line, and a call edge
for every `@path` reference.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from pathlib import Path

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.diagnostics.ids import EMPTY_INPUT_NAME, UNCLOSED_FRONT_MATTER
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.native.lowerer import CatalystLowerer
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.front_matter import front_matter_end
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_loader import load_yaml
from catalyst_dsl.syntax.yaml_nodes import YScalar

#: A code span: a run of backticks, then text, then a run of the same length (CommonMark).
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
#: A heading: its level and its text, closing `#`s and spaces included (`heading_title`
#: takes them off: a lazy text before `[ \t#]*$` made a long run of spaces quadratic).
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+)$")
FENCE = re.compile(r"^[ \t]*(```|~~~)")
PHASE = re.compile(r"^phase\b", re.IGNORECASE)
INPUT_ITEM = re.compile(r"^[-*+][ \t]+(?:\*\*([^*]*)\*\*|`([^`]*)`)[ \t]*:?[ \t]*(.*)$")
STOP = re.compile(r"STOP HERE\**[ \t]*:?\**[ \t]*(.*)$")
#: `@path/to/file.md`; not `@req`, `@user` or `@@` (no extension, no path), nor an `@`
#: inside a word or path (after `.` or `-` too: `@.@.@.` had each `@` scan the whole run,
#: quadratic), nor a name that goes on after its extension (`@a.yaml.bak`, `@a.md-old`).
AT_REF = re.compile(r"(?<![\w@/`.-])@((?:[\w.@-]+/)*[\w.-]+\.(?:md|ya?ml))(?![\w-]|\.\w)")


def heading_title(match: re.Match) -> str:
    """The text of a HEADING match, without its closing `#`s and the spaces around it."""
    text = match.group(2)
    title = text.rstrip(" \t#")
    return title if title else text[:1]


@record
class Section:
    title: str
    level: int
    start: int  # offset of the heading line
    body_start: int
    end: int


def compile_markdown(source: SourceFile, sink: DiagnosticSink, catalog: Catalog) -> ir.Playbook | None:
    text = source.text
    lowerer = CatalystLowerer(source, sink, catalog, dialect="markdown")
    front = None
    body_start = 0
    if text.startswith("---\n") or text == "---":
        fm_end = front_matter_end(text)
        if fm_end is None:
            sink.report(
                UNCLOSED_FRONT_MATTER,
                "the front matter starts with --- but is never closed",
                source.span(0, 3),
                help="end the front matter with a line holding only ---",
            )
            return None
        front = load_yaml(source, sink, start=4, end=fm_end)
        body_start = text.find("\n", fm_end) + 1 or len(text) + 1
        if sink.has_errors:
            return None
    body = text[body_start:]
    lines = _lines(text, body_start)
    code = _Code(_code_ranges(lines))
    headings = _headings(lines, code)
    title = next((h for h in headings if h[1] == 1), None)
    stem = Path(source.path).stem
    inputs = _inputs(source, sink, lines, headings)
    phases = _phases(headings, len(text))
    calls = tuple(
        ir.CallRef(m.group(1), "markdown-ref", span=source.span(body_start + m.start(), body_start + m.end()))
        for m in AT_REF.finditer(body)
        if not _in_code(code, body_start + m.start())
    )
    stops = [(offset, m) for offset, line in lines if (m := STOP.search(line)) and not _in_code(code, offset)]
    steps: list[ir.Step] = []
    stop_offsets = [offset for offset, _ in stops]
    if phases:
        for section in phases:
            steps.append(
                _prompt_step(lowerer, source, section.start, section.end, _slug(section.title), section.title, code)
            )
            first, last = bisect_left(stop_offsets, section.start), bisect_left(stop_offsets, section.end)
            for offset, match in stops[first:last]:
                steps.append(_checkpoint_step(source, offset, match))
    elif body.strip():
        steps.append(_prompt_step(lowerer, source, body_start, len(text), "prompt", title[2] if title else stem, code))
        for offset, match in stops:
            steps.append(_checkpoint_step(source, offset, match))
    defaults = {"name": stem, "description": title[2] if title else stem, "owner": ""}
    return lowerer.playbook(front, defaults=defaults, extra_steps=tuple(steps), calls=calls, markdown_inputs=inputs)


def _lines(text: str, start: int) -> list[tuple[int, str]]:
    out = []
    offset = start
    for line in text[start:].split("\n"):
        out.append((offset, line))
        offset += len(line) + 1
    return out


def _code_ranges(lines):
    ranges = []
    open_at = None
    for offset, line in lines:
        if FENCE.match(line):
            if open_at is None:
                open_at = offset
            else:
                ranges.append((open_at, offset + len(line)))
                open_at = None
    if open_at is not None:
        ranges.append((open_at, lines[-1][0] + len(lines[-1][1])))
    return ranges


class _Code:
    """The fenced code blocks of a file, in order, for lookups in logarithmic time (a file
    of many blocks and headings must not cost their product)."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        self.ranges = ranges
        self.starts = [a for a, _ in ranges]

    def __contains__(self, offset: int) -> bool:
        i = bisect_right(self.starts, offset) - 1
        return i >= 0 and offset <= self.ranges[i][1]

    def within(self, start: int, end: int) -> list[tuple[int, int]]:
        """The blocks that overlap [start, end)."""
        i = max(bisect_right(self.starts, start) - 1, 0)
        j = bisect_left(self.starts, end)
        return [r for r in self.ranges[i:j] if r[1] >= start]


def _in_code(code: "_Code", offset: int) -> bool:
    return offset in code


def _headings(lines, code) -> list[tuple[int, int, str]]:
    """(offset, level, title) of each heading outside code blocks."""
    found = []
    for offset, line in lines:
        m = HEADING.match(line)
        if m and not _in_code(code, offset):
            found.append((offset, len(m.group(1)), heading_title(m).strip()))
    return found


def _phases(headings, text_end: int) -> list[Section]:
    """A phase runs from its heading to the next heading of its level or higher."""
    ends = [text_end] * len(headings)
    open_headings: list[int] = []  # indexes whose end is not found yet, levels increasing
    for i, (offset, level, _) in enumerate(headings):
        while open_headings and headings[open_headings[-1]][1] >= level:
            ends[open_headings.pop()] = offset
        open_headings.append(i)
    return [
        Section(title, level, offset, offset, ends[i])
        for i, (offset, level, title) in enumerate(headings)
        if PHASE.match(title)
    ]


def _inputs(source: SourceFile, sink: DiagnosticSink, lines, headings) -> tuple[ir.InputDecl, ...]:
    section = next(((o, lvl) for o, lvl, title in headings if title.lower() == "inputs"), None)
    if section is None:
        return ()
    start, level = section
    end = next((o for o, lvl, _ in headings if o > start and lvl <= level), None)
    decls: dict[str, ir.InputDecl] = {}
    for offset, line in lines:
        if offset <= start or (end is not None and offset >= end):
            continue
        m = INPUT_ITEM.match(line)
        if not m:
            continue
        raw = m.group(1) if m.group(1) is not None else m.group(2)
        name = raw.strip()
        col = m.start(1) if m.group(1) is not None else m.start(2)
        span = source.span(offset + col, offset + col + len(raw))
        if not name:
            sink.report(
                EMPTY_INPUT_NAME,
                "this input has no name",
                span,
                help="write the input name in bold or code: - **feature-id**: description",
            )
            continue
        if name not in decls:
            decls[name] = ir.InputDecl(name=name, type="string", description=m.group(3).strip() or None, span=span)
    return tuple(decls.values())


def _slug(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug if slug and slug[0].isalpha() else f"phase-{slug}" if slug else "phase"


def _code_in(text: str, fences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The code in a prompt's text: its fenced blocks (given, as offsets in `text`) and the
    code spans (`like this`, on one line) outside them. `{{ }}` there is an example."""
    fences = [(max(a, 0), min(b + 1, len(text))) for a, b in fences if b >= 0 and a < len(text)]
    found = list(fences)
    offset, fence = 0, 0  # lines and fences both in order: one pass over each
    for line in text.split("\n"):
        while fence < len(fences) and fences[fence][1] <= offset:
            fence += 1
        inside = fence < len(fences) and fences[fence][0] <= offset
        if not inside and "`" in line:
            found += [(offset + m.start(), offset + m.end()) for m in CODE_SPAN.finditer(line)]
        offset += len(line) + 1
    return found


def _prompt_step(
    lowerer: CatalystLowerer, source: SourceFile, start: int, end: int, name: str, title: str, code
) -> ir.Step:
    text = source.text[start:end].strip("\n")
    start = start + (len(source.text[start:end]) - len(source.text[start:end].lstrip("\n")))
    node = YScalar(text, text, "", start, start + len(text), source)
    fences = [(a - start, b - start) for a, b in code.within(start, start + len(text))]
    prompt = lowerer.values.template(node, t.STRING, literal=_code_in(text, fences)) or ir.Lit(text, span=node.span)
    heading_end = source.text.find("\n", start)
    span = source.span(start, heading_end if heading_end != -1 else start + len(text))
    config = ir.MapV((ir.Entry("prompt", prompt, span=span),), span=span)
    return ir.Step(action="ai-prompt", config=config, name=name, span=span, action_span=span, name_span=span)


def _checkpoint_step(source: SourceFile, offset: int, match: re.Match) -> ir.Step:
    message = match.group(1).strip() or "Approve to continue"
    span = source.span(offset + match.start(), offset + match.end())
    config = ir.MapV((ir.Entry("message", ir.Lit(message, span=span), span=span),), span=span)
    return ir.Step(action="checkpoint", config=config, span=span, action_span=span)
