"""Values in scripts stay data: PowerShell escaping, and what bash and PowerShell share
(raw(), values no script can hold, values of every type, `temp://`, masking). The bash
matrix of payloads and places is in test_script_references.py.

PowerShell is not installed here: its escaping is checked by reading the escaped text
back with PowerShell's documented quoting rules, and the script a stand-in `pwsh` is
given is checked to hold the escaped value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.escaping import escape
from catalyst_dsl.syntax.shell import BASH, POWERSHELL, Context, Slot, script_slots
from tests.helpers.script_payloads import PAYLOADS


def test_raw_opts_out_of_escaping(project):
    project.playbook(
        "trusted",
        """
        name: trusted
        description: a trusted fragment
        owner: Engineer
        steps:
          - var: redirect
            value: "> out.txt"
          - bash: mkdir -p out && cd out && echo hi ${{ raw(redirect) }}
            writes: [out/**]
        """,
    )
    result = project.run("trusted", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/out.txt") == "hi\n"


def test_an_unescapable_place_stops_the_run_before_any_step(project):
    project.playbook(
        "unsafe",
        """
        name: unsafe
        description: a value as the command name
        owner: Engineer
        inputs:
          - name: tool
            type: string
        steps:
          - bash: "{{tool}} --version"
            writes: []
        """,
    )
    result = project.run("unsafe", "--mode", "autonomous", tool="touch PWNED")
    assert result.exit_code == 1 and "C822" in result.output
    assert not project.exists("PWNED")


@pytest.mark.parametrize("value, refusal", [("a\0b", "UnsafeValue"), ("a\udcffb", "not UTF-8 text")])
def test_values_no_shell_string_can_hold_are_refused(project, value, refusal):
    # A value that is not UTF-8 is refused with the command line already; NUL at the script.
    project.playbook(
        "odd",
        """
        name: odd
        description: NUL and lone surrogates
        owner: Engineer
        inputs:
          - name: v
            type: string
        steps:
          - bash: printf '%s' "{{v}}" > out.txt
            writes: [out.txt]
        """,
    )
    result = project.run("odd", "--mode", "autonomous", v=value)
    assert result.exit_code == 2 and refusal in result.output, result.output
    assert not project.exists("out.txt")


def test_non_string_values_render_as_their_text(project):
    project.playbook(
        "kinds",
        """
        name: kinds
        description: numbers, booleans, null, arrays and objects in a script
        owner: Engineer
        steps:
          - var: things
            value: '${{ {"n": 1.5, "yes": true, "none": null, "list": ["a b", "c"], "obj": {"k": "it''s"}} }}'
          - bash: |
              printf '%s|' {{things.n}} {{things.yes}} {{things.none}} {{things.list}} {{things.obj}} > out/out.txt
            writes: [out/**]
        """,
    )
    result = project.run("kinds", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/out.txt") == "1.5|true|null|a b,c|{\"k\":\"it's\"}|"


# --- the lexer -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "contexts"),
    [
        ("Write-Output {{v}} '{{v}}' \"{{v}}\" ‘{{v}}’ “{{v}}”", ["WORD", "SINGLE", "DOUBLE", "SINGLE", "DOUBLE"]),
        ("$a = @'\n{{v}}\n'@\n$b = @\"\n{{v}}\n\"@", ["HEREDOC_QUOTED", "HEREDOC"]),
        ("& {{v}}\nx{{v}}\n# {{v}}\n<# {{v}} #>\n\"$({{v}})\" ${ {{v}} }", ["UNSAFE"] * 6),
        ("'it''s {{v}}' \"say \"\"{{v}}\"\"\"", ["SINGLE", "DOUBLE"]),
        # A `)` inside a string or parentheses within $(...) does not end the subexpression.
        ("\"$( ')' + {{v}} )\" \"$( \"a)\" + {{v}} )\"", ["UNSAFE", "UNSAFE"]),
        ("@\"\n$( (1) + {{v}} )\n\"@", ["UNSAFE"]),
        ("\"$(Get-Date -f 'yyyy') {{v}}\" {{v}}", ["DOUBLE", "WORD"]),
    ],
)
def test_powershell_contexts(script, contexts):
    assert [slot.context.name for slot in script_slots(script, POWERSHELL)] == contexts


# --- PowerShell escaping, read back by its quoting rules ------------------------------------------------

_PS_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
_PS_DOUBLE_QUOTES = '"\u201c\u201d\u201e'


def _read_single(body: str) -> str:
    """The value of a single-quoted PowerShell string's body: a doubled quote is one quote;
    a lone quote would have ended the string (so must not occur)."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c in _PS_SINGLE_QUOTES:
            assert i + 1 < len(body) and body[i + 1] in _PS_SINGLE_QUOTES, f"the string ends early at {i}: {body!r}"
            out.append(body[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _read_double(body: str, here: bool = False) -> str:
    """The value of a double-quoted body: backtick escapes the next character; `$` and
    (outside here-strings) a lone double quote would expand or end the string."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "`":
            out.append(body[i + 1])
            i += 2
            continue
        assert c != "$", f"an unescaped $ would expand: {body!r}"
        assert here or c not in _PS_DOUBLE_QUOTES, f"the string ends early at {i}: {body!r}"
        out.append(c)
        i += 1
    return "".join(out)


def _slot(context: Context, **more) -> Slot:
    return Slot(context, 0, 0, **more)


@pytest.mark.parametrize("payload", sorted(set(PAYLOADS) - {"here-doc-end"}))
def test_powershell_escaping_reads_back_as_the_value(payload):
    value = PAYLOADS[payload]
    assert _read_single(escape(value, _slot(Context.SINGLE))) == value
    assert _read_double(escape(value, _slot(Context.DOUBLE))) == value
    word = escape(value, _slot(Context.WORD))
    assert word[0] == word[-1] == "'" and _read_single(word[1:-1]) == value
    here = escape(value, _slot(Context.HEREDOC, delimiter='"@', before="", after=""))
    assert _read_double(here, here=True) == value
    assert escape(value, _slot(Context.HEREDOC_QUOTED, delimiter="'@", before="", after="")) == value


def test_powershell_numbers_stay_numbers_and_here_strings_cannot_be_ended():
    assert escape(42, _slot(Context.WORD)) == "42"
    assert escape(-1.5, _slot(Context.WORD)) == "-1.5"
    assert escape(float("nan"), _slot(Context.WORD)) == "'NaN'"
    assert escape(True, _slot(Context.WORD)) == "'true'"
    assert escape("42", _slot(Context.WORD)) == "'42'"
    with pytest.raises(StepError) as caught:
        escape("x\n'@\nRemove-Item -Recurse /", _slot(Context.HEREDOC_QUOTED, delimiter="'@", before="", after=""))
    assert caught.value.code == "UnsafeValue"


def test_powershell_stand_in_receives_the_escaped_script(project, tmp_path, monkeypatch):
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    fake = bin_dir / "pwsh"
    fake.write_text('#!/bin/bash\ncat "${@: -1}"\nprintf "%s|" "$CATALYST_V_0" "$CATALYST_V_1"\n', encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    project.playbook(
        "ps",
        """
        name: ps
        description: PowerShell quoting
        owner: Engineer
        inputs:
          - name: v
            type: string
        steps:
          - powershell: |
              Write-Output {{v}} '{{v}}' "{{v}}"
            writes: []
            name: shown
          - display: "{{shown.stdout}}"
        """,
    )
    result = project.run("ps", "--mode", "autonomous", v="x' ; $(touch PWNED) \"`")
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.output.splitlines() if "Write-Output" in ln)
    # Where PowerShell expands variables, the value is a reference and travels in the
    # environment; in single quotes it is escaped.
    assert (
        line.split("│")[-1].strip()
        == "Write-Output ${env:CATALYST_V_0} 'x'' ; $(touch PWNED) \"`' \"${env:CATALYST_V_1}\""
    )
    assert "x' ; $(touch PWNED) \"`|x' ; $(touch PWNED) \"`|" in result.output
    assert not project.exists("PWNED")


def test_temp_paths_in_values_are_not_rewritten(project):
    # `temp://` in the author's text becomes the scratch path; in a value it is data. A
    # rewrite inside a value could otherwise break its quoting (a path ending in `\`).
    project.playbook(
        "scratch",
        """
        name: scratch
        description: temp paths in text and in values
        owner: Engineer
        inputs:
          - name: a
            type: string
          - name: b
            type: string
        steps:
          - bash: |
              echo made > temp://made.txt
              cat temp://made.txt > out/out.txt
              printf '%s|' '{{a}}' '{{b}}' "{{a}}" >> out/out.txt
            writes: [out/**, "temp://**"]
        """,
    )
    result = project.run("scratch", "--mode", "autonomous", a="temp://x\\", b="; touch PWNED; echo ")
    assert result.exit_code == 0, result.output
    assert not project.exists("PWNED")
    assert project.read("out/out.txt") == "made\ntemp://x\\|; touch PWNED; echo |temp://x\\|"


def test_a_secret_escaped_into_a_script_is_still_masked(project):
    # Escaping changes how a secret is written (a quote becomes '\'' or \"), and the masker
    # knows those forms, so the plan shows *** rather than the escaped secret.
    secret = "it's $ecret \"q\" `x`"
    project.playbook(
        "hidden",
        """
        name: hidden
        description: a secret in every quoting context
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - bash: |
              printf '%s' {{token}} "{{token}}" '{{token}}'
              cat <<EOF
              {{token}}
              EOF
            writes: []
          - powershell: |
              Write-Output {{token}} '{{token}}' "{{token}}"
            writes: []
        """,
    )
    result = project.run("hidden", "--what-if", "--format", "json", token=secret)
    assert result.exit_code == 0, result.output
    scripts = [
        s["config"]["script"] for s in json.loads(result.stdout)["steps"] if s["action"] in ("bash", "powershell")
    ]
    assert scripts == [
        (
            "printf '%s' \"${CATALYST_V_0}\" \"${CATALYST_V_1}\" ''\"${CATALYST_V_2}\"''\n"
            "cat <<EOF\n${CATALYST_V_3}\nEOF\n"
        ),
        "Write-Output ${env:CATALYST_V_0} '***' \"${env:CATALYST_V_1}\"\n",
    ]


def test_a_quoted_brace_inside_a_parameter_expansion_does_not_hide_an_unquoted_value(project):
    # bash skips the quoted `}` in ${a:-'}'}, so the placeholder after it is an unquoted word.
    project.playbook(
        "brace",
        """
        name: brace
        description: a quoted brace in a default value
        owner: Engineer
        inputs:
          - name: v
            type: string
        steps:
          - bash: |
              mkdir -p out && printf '%s|' ${a:-'}'} {{v}} > out/got
            writes: [out/**]
        """,
    )
    result = project.run("brace", "--mode", "autonomous", v="x; touch PWNED")
    assert result.exit_code == 0, result.output
    assert not project.exists("PWNED")
    assert project.read("out/got") == "}|x; touch PWNED|"


def test_a_script_is_rendered_from_its_compiled_parts_not_its_text_read_again() -> None:
    """A dialect may keep `{{ ... }}` in a script as the author's literal text (a TextPart):
    the run puts no value there, as the checker reads it; only the real placeholder is
    filled, escaped. (The script's text was once parsed again at run time, which turned
    such literal braces into a placeholder the checker had never seen.)"""
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.runtime.values.escaping import render_script
    from catalyst_dsl.syntax.expr import nodes as ast

    literal = "echo {{ who }} "
    placeholder = ast.RefPart(
        ast.PathRef("who", (), start=0, end=3), start=len(literal), end=len(literal) + 7, base=len(literal) + 2
    )
    script = ir.Tmpl(literal + "{{who}}", (ast.TextPart(literal, start=0, end=len(literal)), placeholder))

    class Env:
        def lookup(self, name):
            return {"who": "x; touch PWNED"}[name]

    rendered = render_script(script, Env(), BASH)
    assert rendered == 'echo {{ who }} "${CATALYST_V_0}"'
    assert rendered.env == {"CATALYST_V_0": "x; touch PWNED"}


def test_a_script_that_places_no_value_is_rendered_without_reading_it_as_shell() -> None:
    """A script of the author's text alone is run as written: rendering it imports none of
    syntax/shell/ (its lexers and analyses), which a run then never pays for; a script that
    places a value is analysed. Checked in a fresh interpreter, where nothing imported it yet."""
    import subprocess
    import sys

    probe = """
import sys
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.values.escaping import render_script
from catalyst_dsl.syntax.expr import nodes as ast

class Env:
    def lookup(self, name):
        return "x"

plain = render_script(ir.Lit("echo hi"), Env(), "bash")
before = "catalyst_dsl.syntax.shell" in sys.modules
given = render_script(ir.Lit("echo $NAME"), Env(), "bash", frozenset({"NAME"}))
placed = ast.RefPart(ast.PathRef("who", (), start=0, end=3), start=5, end=12, base=7)
valued = render_script(ir.Tmpl("echo {{who}}", (ast.TextPart("echo ", start=0, end=5), placed)), Env(), "bash")
print(plain, before, given, valued, valued.env, "catalyst_dsl.syntax.shell" in sys.modules)
"""
    root = Path(__file__).resolve().parents[3]  # this checkout's catalyst_dsl, first on the path
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root)
    assert shown.stdout.split("\n")[0] == "echo hi False echo $NAME echo \"${CATALYST_V_0}\" {'CATALYST_V_0': 'x'} True"
