"""Front-end fixes: each test pins one behaviour that was wrong before (see the golden cases too)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalyst_dsl.compiler import MAX_FILE_BYTES, compile_bytes, compile_path
from catalyst_dsl._internal.terminal_text import safe_text
from catalyst_dsl.diagnostics.text import render_text
from catalyst_dsl.syntax import yaml_loader

HEAD = b"name: x\ndescription: d\nowner: o\n"


def found(data: bytes, path: str = "p.yaml") -> list[tuple[str, int, str]]:
    return [(d.code, d.span.line, d.message) for d in compile_bytes(data, path).diagnostics]


def codes(data: bytes, path: str = "p.yaml") -> list[str]:
    return [code for code, _, _ in found(data, path)]


def rendered(data: bytes, path: str = "p.yaml") -> str:
    result = compile_bytes(data, path)
    return render_text(result.diagnostics, {path: result.source} if result.source else {})


# -- 1. C015 gives the real size --------------------------------------------------------


def test_file_too_large_reports_its_real_size(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * (7 * 1024 * 1024))
    [diagnostic] = compile_path(str(path)).diagnostics
    assert diagnostic.code == "C015"
    assert diagnostic.message.startswith("the file is 7.0 MiB;")


def test_file_just_over_the_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    assert [d.code for d in compile_path(str(path)).diagnostics] == ["C015"]


# -- 2. collection keys never make a duplicate ---------------------------------------------


def test_two_collection_keys_are_not_duplicates() -> None:
    data = HEAD + b"steps:\n  - var: r\n    value:\n      [a]: 1\n      [b]: 2\n"
    assert codes(data) == ["C012", "C012"]


def test_a_collection_key_is_not_a_duplicate_of_a_question_mark_key() -> None:
    data = HEAD + b"steps:\n  - var: r\n    value:\n      [a]: 1\n      \"?\": 2\n      ? {b: c}\n      : 3\n"
    assert codes(data) == ["C012", "C012"]


def test_real_duplicates_beside_a_collection_key_are_still_reported() -> None:
    data = HEAD + b"steps:\n  - var: r\n    value:\n      [a]: 1\n      k: 2\n      k: 3\n"
    assert [(c, line) for c, line, _ in found(data)] == [("C012", 7), ("C006", 9)]


# -- 3. brackets in text are not nesting ----------------------------------------------------

DEEP = 70


@pytest.mark.parametrize(
    "value",
    [
        b'"' + b"[" * DEEP + b'"',  # double-quoted
        b"'it''s " + b"{" * DEEP + b"'",  # single-quoted, with an escaped quote
        b'"first line\n      ' + b"[" * DEEP + b' second line"',  # quoted over two lines
        b"|\n      " + b"{" * DEEP + b"\n      more text",  # literal block scalar
        b">-\n      " + b"[" * DEEP + b"\n",  # folded block scalar
        b"!!str |\n      " + b"[" * DEEP,  # a tag before the block scalar
        b"see a" + b"[" * DEEP,  # plain text: [ inside a plain scalar is text
        b"first line\n      " + b"[" * DEEP,  # plain text continued on the next line
        b"x # " + b"[" * DEEP,  # a comment after the value
        b'["' + b"]" * DEEP + b'", ' + b"'" + b"[" * DEEP + b"']",  # quoted items in a flow list
    ],
)
def test_brackets_in_text_are_not_too_deep(value: bytes) -> None:
    data = HEAD + b"steps:\n  - display: " + value + b"\n    name: after\n"
    assert "C009" not in codes(data)


def test_brackets_in_comments_and_front_matter_text_are_not_too_deep() -> None:
    assert "C009" not in codes(HEAD + b"# " + b"[" * DEEP + b"\nsteps:\n  - display: x\n")
    front = b"---\ndescription: |\n  " + b"{" * DEEP + b"\n---\n# Title\nDo it.\n"
    assert "C009" not in codes(front, "p.md")


@pytest.mark.parametrize(
    "value",
    [
        b"[" * DEEP + b"]" * DEEP,
        b"|\n      text\n    other: " + b"[" * DEEP + b"]" * DEEP,  # after a block scalar ends
        b'{a: "]]]]", b: ' + b"[" * DEEP + b"]" * DEEP + b"}",  # after a quoted "]" in a flow mapping
        b"[\n" + b"[\n" * DEEP + b"]" * (DEEP + 1),  # flow nesting over many lines
        b"\"text\" \n    other: &a !!seq " + b"[" * DEEP + b"]" * DEEP,  # after properties
    ],
)
def test_real_deep_flow_nesting_is_still_too_deep(value: bytes) -> None:
    data = HEAD + b"steps:\n  - var: v\n    value: " + value + b"\n"
    assert codes(data)[0] == "C009"


def test_the_prescan_stays_linear() -> None:
    # Text and structure of every kind, a few MiB of it: one pass, no backtracking.
    chunk = b"  - display: \"" + b"[" * 50 + b"\"\n  - bash: |\n      " + b"{" * 50 + b"\n  # " + b"[" * 50 + b"\n"
    data = HEAD + b"steps:\n" + chunk * 10_000
    # One pass over a few MiB; its time against the size is measured in bench/, not here.
    assert yaml_loader._too_deep_flow_at(data.decode()) is None


_ATOMS = [
    "[",
    "]",
    "{",
    "}",
    '"',
    "'",
    "|",
    ">",
    "#",
    "\n",
    " ",
    "  ",
    ": ",
    "- ",
    "a",
    ",",
    "\\",
    "? ",
    "&x ",
    "!!str ",
    "\n  ",
    "\n    ",
    "---",
    "''",
    "key: |\n",
    "\n- ",
]


def _bracket_depth(text: str) -> int:
    """The deepest nesting of flow collections written with brackets, as libyaml reads it."""
    depth = deepest = 0
    stack = []
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            bracket = text[event.start_mark.index] in "[{"
            depth += bracket
            deepest = max(deepest, depth)
            stack.append(bracket)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= stack.pop()
    return deepest


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_ATOMS), max_size=30).map("".join))
def test_prescan_agrees_with_libyaml(text: str) -> None:
    # With the limit lowered to 2, any small document can go over it. Where libyaml reads
    # the text, the pre-scan must never see nesting that is not there (a false C009), and
    # in these cases it sees all the bracket nesting that is there.
    try:
        depth = _bracket_depth(text)
    except yaml.YAMLError:
        return
    saved, yaml_loader.MAX_DEPTH = yaml_loader.MAX_DEPTH, 2
    try:
        reported = yaml_loader._too_deep_flow_at(text) is not None
    finally:
        yaml_loader.MAX_DEPTH = saved
    assert reported == (depth > 2), (text, depth)


# -- 4. C204 means no steps were written --------------------------------------------------


def test_wrong_steps_are_not_no_steps() -> None:
    assert codes(HEAD + b"steps: [42]\n") == ["C401"]
    assert codes(HEAD + b"steps:\n  - name: a\n") == ["C402"]


def test_steps_without_a_value_is_no_steps() -> None:
    assert found(HEAD + b"steps:\n") == [("C204", 4, "a playbook needs at least one step; `steps` has no value")]
    assert codes(HEAD + b"steps: []\n") == ["C204"]
    assert codes(HEAD + b"steps: hello\n") == ["C302"]  # a value, of the wrong type


# -- 5. C207 describes what was written ------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "code", "message"),
    [
        (b'"1"', "C302", "'catalyst' expects a number, got the string '1'"),
        (b"", "C207", "`catalyst` has no value; it gives the language version, a number"),
        (b"[1]", "C207", "the language version is a number, not a list"),
        (b"{v: 1}", "C207", "the language version is a number, not a mapping"),
        (b"true", "C207", "the language version is a number, not the boolean true"),
        (b"latest", "C207", "the language version is a number, not the string 'latest'"),
        (b'"2"', "C207", "the language version is a number, not the string '2'"),
        (b"2", "C207", "language version 2 is not supported"),
    ],
)
def test_language_version_messages(written: bytes, code: str, message: str) -> None:
    data = HEAD + b"catalyst: " + written + b"\nsteps:\n  - display: x\n"
    assert [(c, m) for c, _, m in found(data)] == [(code, message)]


def test_quoted_version_one_is_read_as_version_one() -> None:
    result = compile_bytes(HEAD + b'catalyst: "1"\nsteps:\n  - display: x\n', "p.yaml")
    assert result.playbook is not None and result.playbook.language == 1


# -- 6. C408 says which kind of misplaced `writes:` it is ----------------------------------------


@pytest.mark.parametrize(
    "step", [b"display: hi", b"http-get: https://example.com", b"ai-prompt: hi", b"playbook: other"]
)
def test_writes_on_an_action_that_writes_nothing(step: bytes) -> None:
    data = HEAD + b"steps:\n  - " + step + b"\n    writes: [out/a.txt]\n"
    [(code, line, message)] = found(data)
    assert (code, line) == ("C408", 6)
    assert message.startswith("'writes' is only for shell-like steps (bash, powershell, command, script")
    assert "declares its own writes" not in message


@pytest.mark.parametrize(("step", "key"), [(b"file-write: out/a.txt", "path"), (b"git-commit: save", "files")])
def test_writes_on_an_action_that_declares_its_writes(step: bytes, key: str) -> None:
    data = HEAD + b"allowedWritePaths: ['**']\nsteps:\n  - " + step + b"\n    writes: [out/a.txt]\n"
    [(code, _, message)] = found(data)
    assert code == "C408" and message.endswith(f"declares its own writes (its `{key}`)")


def test_writes_on_a_shell_step_is_fine() -> None:
    assert codes(HEAD + b"steps:\n  - bash: make\n    writes: [out/a.txt]\n") == []


# -- 7. C010 shows the tag as written ------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (b"!!int three", "'three' is not an integer (tag !!int)"),
        (b"&n !!int three", "'three' is not an integer (tag !!int)"),
        (b"!!int &n three", "'three' is not an integer (tag !!int)"),
        (b"!!python/object:os.system {}", "the YAML tag '!!python/object:os.system' is not supported in playbooks"),
        (b"!include other.yaml", "the YAML tag '!include' is not supported in playbooks"),
    ],
)
def test_tags_are_shown_as_written(value: bytes, message: str) -> None:
    data = HEAD + b"steps:\n  - var: v\n    value: " + value + b"\n"
    assert [m for c, _, m in found(data) if c == "C010"] == [message]


# -- 8. control characters never reach the terminal ---------------------------------------------


def _caret_under(text: str, word: str) -> None:
    """The first caret line sits under `word` in the source line printed above it."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "^" in line)
    source, carets = lines[at - 1], lines[at]
    assert carets.index("^") == source.index(word)


def test_a_raw_escape_in_the_source_line_is_shown_escaped() -> None:
    text = rendered(HEAD + b"steps:\n  - display: \"\x1b[31mred\"\n")
    assert "\x1b" not in text
    assert '5 |   - display: "\\x1b[31mred"' in text
    assert "^~~~" in text  # the caret covers the four printed columns of \x1b


def test_carets_after_escaped_characters_stay_aligned() -> None:
    # U+202E (right-to-left override) and U+0085 (next line) are allowed in YAML text,
    # but must not reach a terminal; the unknown key after them is still pointed at.
    data = HEAD + "steps:\n  - {display: \"\u202e\u0085\", bogus: 1}\n".encode()
    text = rendered(data)
    assert "\u202e" not in text and "\u0085" not in text
    assert "\\u202e\\x85" in text
    _caret_under(text, "bogus")


def test_messages_quoting_the_file_are_escaped() -> None:
    text = rendered(HEAD + b'"\\e]0;pwned\\a": 1\nsteps:\n  - display: x\n')
    assert "\x1b" not in text and "\x07" not in text
    assert "unknown top-level key '\\x1b]0;pwned\\x07'" in text


def test_long_lines_with_escapes_keep_the_caret_on_the_column() -> None:
    data = HEAD + b"steps:\n  - {display: \"" + "\u2066".encode() * 150 + b"\", bogus: 1}\n"
    text = rendered(data)
    assert "\u2066" not in text
    _caret_under(text, "bogus")


def test_safe_text_escapes_only_unprintable_characters() -> None:
    # safe_text returns printable text without running its pattern: that holds only while
    # every character the pattern escapes is one Python calls unprintable.
    from catalyst_dsl._internal.terminal_text import UNSAFE

    assert [c for c in map(chr, range(0x110000)) if c.isprintable() and UNSAFE.match(c)] == []


def test_safe_text_leaves_tabs_and_ordinary_text_alone() -> None:
    assert safe_text("a\tb ▶️ café") == "a\tb ▶️ café"
    assert safe_text("\x00\x7f\x9b\u2028") == "\\x00\\x7f\\x9b\\u2028"


# -- 9. near-empty files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (b"", "p.md"),
        (b"\n\n  \n", "p.md"),
        (b"---\n---\n", "p.md"),
        (b"---\n# only a comment\n---\n\n", "p.md"),
        (b"---\n", "p.yaml"),
        (b"--- # a comment\n...\n", "p.yaml"),
    ],
)
def test_files_with_no_playbook_are_empty(data: bytes, path: str) -> None:
    assert found(data, path) == [("C014", 1, "the file is empty")]


def test_markdown_help_does_not_ask_for_steps() -> None:
    [diagnostic] = compile_bytes(b"---\n---\n", "p.md").diagnostics
    assert "steps" not in diagnostic.help and "Phase" in diagnostic.help


def test_markdown_front_matter_without_a_body_needs_a_body() -> None:
    [(code, line, message)] = found(b"---\nowner: Engineer\n---\n", "p.md")
    assert (code, line) == ("C204", 3)
    assert "no body" in message


def test_an_explicit_null_document_is_not_empty() -> None:
    assert codes(b"~\n") == ["C201"]


def test_an_escaped_brace_without_templates_is_the_literal_text():
    # `\{{` is a literal `{{`: with no real template in the string, the value must still
    # lose the backslash, as it does when the string also holds a template.
    result = compile_bytes(
        b'name: demo\ndescription: d\nowner: Engineer\nsteps:\n  - display: "Hi, \\\\{{name}}!"\n', "demo.yaml"
    )
    assert not result.diagnostics
    assert result.playbook.steps[0].config.get("message").value == "Hi, {{name}}!"


@pytest.mark.parametrize(
    "expression, too_deep",
    [
        (" + ".join(["1"] * 3000), True),
        (" && ".join(["true"] * 2000), True),
        ("get('x')" + ".trim()" * 1500, True),
        (" + ".join(["1"] * 40), False),
    ],
)
def test_an_expression_chained_thousands_deep_is_a_diagnostic_not_a_recursion_error(expression, too_deep):
    text = f'name: deep\ndescription: d\nowner: Engineer\nsteps:\n  - var: x\n    value: "${{{{ {expression} }}}}"\n'
    result = compile_bytes(text.encode(), "deep.yaml")
    nesting = [d for d in result.diagnostics if d.code == "C101" and "nest" in d.message]
    assert bool(nesting) == too_deep, [d.message for d in result.diagnostics]


def test_half_a_surrogate_pair_in_an_expression_string_is_a_diagnostic_and_a_whole_pair_is_one_character():
    head = "name: sur\ndescription: d\nowner: Engineer\nsteps:\n  - var: x\n    value: "
    lone = compile_bytes((head + "'${{ \"\\ud800\" }}'\n").encode(), "sur.yaml")
    assert [d.code for d in lone.diagnostics if d.severity.value == "error"] == ["C101"]
    assert "surrogate" in lone.diagnostics[-1].message
    pair = compile_bytes((head + "'${{ \"\\ud83d\\ude00\" }}'\n").encode(), "sur.yaml")
    assert not [d for d in pair.diagnostics if d.severity.value == "error"]


def test_after_a_duplicate_key_the_compiled_playbook_keeps_the_first_value() -> None:
    from catalyst_dsl.compiler import compile_path

    compiled = compile_path(str(Path(__file__).parents[2] / "golden" / "check" / "C006-keeps-first.yaml"))
    assert [d.code for d in compiled.diagnostics] == ["C006"]
    value = next(e.value for e in compiled.playbook.steps[0].config.entries if e.key == "value")
    assert value.value == "hello"
