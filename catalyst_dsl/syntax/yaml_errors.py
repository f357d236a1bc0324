"""libyaml's errors as diagnostics: the code and the fix for each problem it reports,
at the position it gives (or, for a reader error, which carries none, at the first
character YAML does not allow).
"""

from __future__ import annotations

from catalyst_dsl.diagnostics import ids
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.syntax.pyyaml import yaml
from catalyst_dsl.syntax.source import SourceFile

#: (words of libyaml's problem, the code to report, the fix), the first that matches wins.
_HELP_BY_PROBLEM = (
    ("found character '\\t'", ids.TAB_INDENTATION, "indent with spaces: YAML does not allow tabs for indentation"),
    ("mapping values are not allowed", ids.YAML_SYNTAX, "quote the value: a plain value cannot contain ': '"),
    ("found undefined alias", ids.BAD_ALIAS, "define the anchor (&name) before using the alias (*name)"),
    ("found duplicate anchor", ids.YAML_SYNTAX, "give each anchor a different name"),
    ("could not find expected ':'", ids.YAML_SYNTAX, "a key needs ': ' after it; check the indentation of this line"),
    ("found unexpected end of stream", ids.YAML_SYNTAX, "close the quote or bracket that is still open"),
    (
        "did not find expected key",
        ids.YAML_SYNTAX,
        "check the indentation: this line does not line up with the keys above",
    ),
    ("did not find expected '-' indicator", ids.YAML_SYNTAX, "check the indentation of this list item"),
    (
        "found character that cannot start any token",
        ids.YAML_SYNTAX,
        "quote the value: it starts with a character YAML reserves (such as @ or `)",
    ),
)


def report_yaml_error(source: SourceFile, sink: DiagnosticSink, base: int, exc: yaml.MarkedYAMLError) -> None:
    problem = exc.problem or exc.context or "invalid YAML"
    mark = exc.problem_mark or exc.context_mark
    code, help_text = ids.YAML_SYNTAX, "fix the YAML syntax at this position"
    for needle, c, h in _HELP_BY_PROBLEM:
        if needle in problem:
            code, help_text = c, h
            break
    if mark is not None and source.text[base + mark.index : base + mark.index + 1] == "\t":
        code, help_text = ids.TAB_INDENTATION, _HELP_BY_PROBLEM[0][2]
    if code == ids.TAB_INDENTATION:
        problem = "a tab is used for indentation"
        labels_allowed = False
    else:
        labels_allowed = True
    span = source.span(base + mark.index, base + mark.index + 1) if mark else source.span(base)
    labels = []
    if labels_allowed and exc.context and exc.context_mark and exc.context_mark.index != getattr(mark, "index", None):
        at = base + exc.context_mark.index
        labels.append(Label(source.span(at, at + 1), exc.context))
    sink.report(code, problem[0].lower() + problem[1:], span, labels=labels, help=help_text)


def report_reader_error(source: SourceFile, sink: DiagnosticSink, base: int, text: str, exc: yaml.YAMLError) -> None:
    bad = next((i for i, c in enumerate(text) if _unprintable(c)), None)
    where = source.span(base + bad, base + bad + 1) if bad is not None else source.span(base)
    char = f" (U+{ord(text[bad]):04X})" if bad is not None else ""
    sink.report(
        ids.UNREADABLE_FILE,
        f"the file contains a control character YAML does not allow{char}",
        where,
        help="remove the character, or write it as an escape inside a double-quoted string",
    )


def _unprintable(c: str) -> bool:
    o = ord(c)
    if c in "\t\n\r" or 0x20 <= o <= 0x7E or o == 0x85:
        return False
    if 0xA0 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or 0x10000 <= o <= 0x10FFFF:
        return o == 0xFEFF
    return True
