"""The script ShellCheck reads of a template (syntax/shell/shellcheck.py), and the way back:
each run of the author's text found where the run's rendering put it, wherever a value
stands (a word, single quotes, a quoted here-document the run rewrites, `raw()`)."""

from __future__ import annotations

import pytest

from catalyst_dsl.syntax.expr.templates import parse_template
from catalyst_dsl.syntax.shell.shellcheck import findings_in, script_view

# (template, a piece of the author's text after the values): the piece must come back to
# where the template has it.
CASES = {
    "word": ('echo {{ a }}"x" && ls $HOME', "$HOME"),
    "single quotes": ("echo '{{ a }}' $HOME", "$HOME"),
    "double quotes": ('echo "v{{ a }}" $HOME', "$HOME"),
    "quoted here-document": ("cat <<'EOF'\n$PATH {{ a }}\nEOF\necho $HOME", "$HOME"),
    "raw": ("echo ${{ raw(a) }} $HOME", "$HOME"),
    "refused (arithmetic)": ("echo $(( {{ a }} + 1 )) $HOME", "$HOME"),
    "no value": ("echo $HOME", "$HOME"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_authors_text_maps_back_to_the_template(name: str) -> None:
    template, piece = CASES[name]
    parts = parse_template(template).parts if "{{" in template else None
    view = script_view(template, parts)
    at = view.text.rindex(piece)
    assert view.template_range(at, at + len(piece)) == (template.rindex(piece), template.rindex(piece) + len(piece))


def test_a_value_reaches_shellcheck_as_bash_gets_it() -> None:
    template = "echo {{ a }} '{{ b }}'"
    assert script_view(template, parse_template(template).parts).text == (
        "echo \"${CATALYST_V_0}\" ''\"${CATALYST_V_1}\"''"
    )


def test_a_comment_on_a_values_stand_in_is_dropped() -> None:
    template = "echo {{ a }} $x"
    view = script_view(template, parse_template(template).parts)
    comments = [
        {"line": 1, "column": 6, "endLine": 1, "endColumn": 23, "level": "info", "code": 2086, "message": "m"},
        {"line": 1, "column": 24, "endLine": 1, "endColumn": 26, "level": "warning", "code": 2154, "message": "x"},
        {"line": 1, "column": 24, "endLine": 1, "endColumn": 26, "level": "unknown", "code": 1, "message": "?"},
        {"line": "one"},
    ]
    [finding] = findings_in(view, comments)
    assert (finding.code, template[finding.start : finding.end]) == (2154, "$x")
