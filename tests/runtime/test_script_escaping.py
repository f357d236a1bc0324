"""Values in scripts stay data: the injection matrix, run for real through `catalyst run`.

Every payload is given as an input and placed in every quoting context of a `bash` and
a `test` step; the script writes what it received to a file. No payload may run a
command (no PWNED file appears) and every file holds the value byte for byte.
PowerShell is not installed here: its escaping is checked by reading the escaped text
back with PowerShell's documented quoting rules, and the script a stand-in `pwsh` is
given is checked to hold the escaped value.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.escaping import escape
from catalyst_dsl.syntax.shell import BASH, POWERSHELL, Context, Slot, script_slots

PAYLOADS = {
    "semicolon": "x; touch PWNED",
    "substitution": "$(touch PWNED)",
    "backticks": "`touch PWNED`",
    "single-quote": "x' ; touch PWNED; '",
    "double-quote": 'x" ; touch PWNED; "',
    "newline": "\ntouch PWNED",
    "variable": "$HOME",
    "backslash": "\\",
    "glob": "*",
    "option": "--flag",
    "spaces": "a  b\tc",
    "empty": "",
    "here-doc-end": "EOF\ntouch PWNED",
    "unicode": "é ‘’ “” „ `$",
    "plain": "hello-world_1.0",
    "comma": "b,c",
}

#: Quoting contexts: a script line that writes what the value became to out/NAME.
#: Here-documents add the line break that ends the value's line.
CONTEXTS = {
    "unquoted": "printf '%s' {{v}} > out/unquoted",
    "double": "printf '%s' \"{{v}}\" > out/double",
    "single": "printf '%s' 'pre{{v}}post' > out/single",
    "heredoc": "cat > out/heredoc <<EOF\n{{v}}\nEOF",
    "heredoc-quoted": "cat > out/heredoc-quoted <<'EOF'\n{{v}}\nEOF",
    "heredoc-tabs": "cat > out/heredoc-tabs <<-EOF\n\t{{v}}\n\tEOF",
    "for-list": "for item in {{v}}; do printf '%s' \"$item\" > out/for-list; done",
    "after-dashes": "set -- {{v}}; printf '%s' \"$1\" > out/after-dashes",
    "substitution": "got=\"$(printf '%s.' \"{{v}}\")\"; printf '%s' \"${got%.}\" > out/substitution",
    "assignment": "value={{v}}; printf '%s' \"$value\" > out/assignment",
    "brace-expansion": "set -- x{,{{v}}}; printf '%s' \"${2#x}\" > out/brace-expansion",
}


def expected(context: str, value: str) -> str:
    if context == "single":
        return f"pre{value}post"
    if context.startswith("heredoc"):
        return value + "\n"
    return value


def _script() -> str:
    return "mkdir -p out\n" + "\n".join(CONTEXTS.values()) + "\n"


def _playbook(action: str) -> str:
    body = "\n".join("      " + line for line in _script().splitlines())
    return ("name: matrix\n"
            "description: every quoting context of a script\n"
            "owner: Engineer\n"
            "inputs:\n"
            "  - name: v\n"
            "    type: string\n"
            "steps:\n"
            f"  - {action}: |\n{body}\n"
            "    writes: [\"out/**\"]\n")


def _received(project) -> dict[str, str]:
    return {name: (project.root / "out" / name).read_text(encoding="utf-8") for name in CONTEXTS}


@pytest.mark.parametrize("action", ["bash", "test"])
@pytest.mark.parametrize("payload", sorted(PAYLOADS))
def test_no_payload_runs_and_every_context_receives_it_exactly(project, action, payload):
    value = PAYLOADS[payload]
    project.playbook("matrix", _playbook(action))
    if payload == "here-doc-end":
        # A line `EOF` would end the here-documents early: the step refuses it instead.
        result = project.run("matrix", "--mode", "autonomous", v=value)
        assert result.exit_code == 2 and "UnsafeValue" in result.output and "here-document" in result.output
        assert not project.exists("PWNED") and not project.exists("out")
        return
    result = project.run("matrix", "--mode", "autonomous", v=value)
    assert result.exit_code == 0, result.output
    assert not project.exists("PWNED")
    assert _received(project) == {name: expected(name, value) for name in CONTEXTS}


def test_benign_values_render_as_written(project):
    # A plain word is not quoted, so scripts read and plan as they always did.
    project.playbook("plain", """
        name: plain
        description: plain values
        owner: Engineer
        inputs:
          - name: who
            type: string
          - name: count
            type: number
        steps:
          - bash: echo hello {{who}} "{{who}}" '{{who}}' {{count}} ${{ count + 1 }}
            writes: []
        """)
    plan = json.loads(project.run("plain", "--what-if", "--format", "json", who="Ann-1.0", count="3").stdout)
    scripts = [s["config"]["script"] for s in plan["steps"] if s["action"] == "bash"]
    assert scripts == ["echo hello Ann-1.0 \"Ann-1.0\" 'Ann-1.0' 3 4"]


def test_what_if_shows_the_script_as_it_would_run(project):
    project.playbook("shown", """
        name: shown
        description: the escaped script in the plan
        owner: Engineer
        inputs:
          - name: v
            type: string
        steps:
          - bash: echo {{v}} "{{v}}"
            writes: []
        """)
    plan = json.loads(project.run("shown", "--what-if", "--format", "json", v="x; touch PWNED").stdout)
    scripts = [s["config"]["script"] for s in plan["steps"] if s["action"] == "bash"]
    assert scripts == ["echo 'x; touch PWNED' \"x; touch PWNED\""]
    assert not project.exists("PWNED")


def test_raw_opts_out_of_escaping(project):
    project.playbook("trusted", """
        name: trusted
        description: a trusted fragment
        owner: Engineer
        steps:
          - var: redirect
            value: "> out.txt"
          - bash: mkdir -p out && cd out && echo hi ${{ raw(redirect) }}
            writes: [out/**]
        """)
    result = project.run("trusted", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/out.txt") == "hi\n"


def test_an_unescapable_place_stops_the_run_before_any_step(project):
    project.playbook("unsafe", """
        name: unsafe
        description: a value as the command name
        owner: Engineer
        inputs:
          - name: tool
            type: string
        steps:
          - bash: "{{tool}} --version"
            writes: []
        """)
    result = project.run("unsafe", "--mode", "autonomous", tool="touch PWNED")
    assert result.exit_code == 1 and "C822" in result.output
    assert not project.exists("PWNED")


@pytest.mark.parametrize("value, refusal", [("a\0b", "UnsafeValue"), ("a\udcffb", "not UTF-8 text")])
def test_values_no_shell_string_can_hold_are_refused(project, value, refusal):
    # A value that is not UTF-8 is refused with the command line already; NUL at the script.
    project.playbook("odd", """
        name: odd
        description: NUL and lone surrogates
        owner: Engineer
        inputs:
          - name: v
            type: string
        steps:
          - bash: printf '%s' "{{v}}" > out.txt
            writes: [out.txt]
        """)
    result = project.run("odd", "--mode", "autonomous", v=value)
    assert result.exit_code == 2 and refusal in result.output, result.output
    assert not project.exists("out.txt")


def test_non_string_values_render_as_their_text(project):
    project.playbook("kinds", """
        name: kinds
        description: numbers, booleans, null, arrays and objects in a script
        owner: Engineer
        steps:
          - var: things
            value: '${{ {"n": 1.5, "yes": true, "none": null, "list": ["a b", "c"], "obj": {"k": "it''s"}} }}'
          - bash: |
              printf '%s|' {{things.n}} {{things.yes}} {{things.none}} {{things.list}} {{things.obj}} > out/out.txt
            writes: [out/**]
        """)
    result = project.run("kinds", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/out.txt") == "1.5|true|null|a b,c|{\"k\":\"it's\"}|"


# --- the lexer -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("script", "contexts"), [
    ("echo {{v}} \"{{v}}\" '{{v}}'", ["WORD", "DOUBLE", "SINGLE"]),
    ("cat <<EOF\n{{v}}\nEOF\ncat <<'X'\n{{v}}\nX\necho {{v}}", ["HEREDOC", "HEREDOC_QUOTED", "WORD"]),
    ("x=\"$(echo \"{{v}}\" $(echo '{{v}}'))\"; echo {{v}}", ["DOUBLE", "SINGLE", "WORD"]),
    ("x=\"$(echo ok)\" {{v}}", ["UNSAFE"]),  # after an assignment comes the command
    ("{{v}} arg", ["UNSAFE"]),
    ("A=1 \"{{v}}\" arg", ["UNSAFE"]),
    ("$({{v}})", ["UNSAFE"]),
    ("echo `{{v}}` $(({{v}})) ${x:-{{v}}} $'{{v}}' # {{v}}", ["UNSAFE"] * 5),
    ("let n={{v}}; [[ {{v}} -lt 2 ]]; [[ {{v}} == a ]]", ["UNSAFE", "UNSAFE", "WORD"]),
    ("echo $(case a in a) echo {{v}};; esac) {{v}}", ["UNSAFE", "UNSAFE"]),
    ("cat <<{{v}}\nx\n", ["UNSAFE"]),
    ("echo x 2>&1 > {{v}} && cat < {{v}}", ["WORD", "WORD"]),
    ("eval echo {{v}}; trap \"echo {{v}}\" EXIT; . {{v}}", ["UNSAFE"] * 3),
    ("bash -c {{v}}; bash -c 'echo \"$1\"' _ {{v}}", ["UNSAFE", "WORD"]),
    ("echo x{,{{v}}}", ["WORD"]),
    # Quotes inside ${...} hide its `}`: the placeholder after it is unquoted.
    ("echo ${a:-'}'} {{v}} \"${a:-\"}\"}\" {{v}}", ["WORD", "WORD"]),
    ("export A={{v}}; read -p {{v}} x; bash -e -c 'echo \"$1\"' _ {{v}}", ["WORD", "WORD", "WORD"]),
])
def test_bash_contexts(script, contexts):
    assert [slot.context.name for slot in script_slots(script, BASH)] == contexts


@pytest.mark.parametrize(("script", "contexts"), [
    ("Write-Output {{v}} '{{v}}' \"{{v}}\" ‘{{v}}’ “{{v}}”", ["WORD", "SINGLE", "DOUBLE", "SINGLE", "DOUBLE"]),
    ("$a = @'\n{{v}}\n'@\n$b = @\"\n{{v}}\n\"@", ["HEREDOC_QUOTED", "HEREDOC"]),
    ("& {{v}}\nx{{v}}\n# {{v}}\n<# {{v}} #>\n\"$({{v}})\" ${ {{v}} }", ["UNSAFE"] * 6),
    ("'it''s {{v}}' \"say \"\"{{v}}\"\"\"", ["SINGLE", "DOUBLE"]),
    # A `)` inside a string or parentheses within $(...) does not end the subexpression.
    ("\"$( ')' + {{v}} )\" \"$( \"a)\" + {{v}} )\"", ["UNSAFE", "UNSAFE"]),
    ("@\"\n$( (1) + {{v}} )\n\"@", ["UNSAFE"]),
    ("\"$(Get-Date -f 'yyyy') {{v}}\" {{v}}", ["DOUBLE", "WORD"]),
])
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
    assert _read_single(escape(value, _slot(Context.SINGLE), POWERSHELL)) == value
    assert _read_double(escape(value, _slot(Context.DOUBLE), POWERSHELL)) == value
    word = escape(value, _slot(Context.WORD), POWERSHELL)
    assert word[0] == word[-1] == "'" and _read_single(word[1:-1]) == value
    here = escape(value, _slot(Context.HEREDOC, delimiter='"@', before="", after=""), POWERSHELL)
    assert _read_double(here, here=True) == value
    assert escape(value, _slot(Context.HEREDOC_QUOTED, delimiter="'@", before="", after=""), POWERSHELL) == value


def test_powershell_numbers_stay_numbers_and_here_strings_cannot_be_ended():
    assert escape(42, _slot(Context.WORD), POWERSHELL) == "42"
    assert escape(-1.5, _slot(Context.WORD), POWERSHELL) == "-1.5"
    assert escape(float("nan"), _slot(Context.WORD), POWERSHELL) == "'NaN'"
    assert escape(True, _slot(Context.WORD), POWERSHELL) == "'true'"
    assert escape("42", _slot(Context.WORD), POWERSHELL) == "'42'"
    with pytest.raises(StepError) as caught:
        escape("x\n'@\nRemove-Item -Recurse /", _slot(Context.HEREDOC_QUOTED, delimiter="'@", before="", after=""), POWERSHELL)
    assert caught.value.code == "UnsafeValue"


def test_powershell_stand_in_receives_the_escaped_script(project, tmp_path, monkeypatch):
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    fake = bin_dir / "pwsh"
    fake.write_text('#!/bin/bash\ncat "${@: -1}"\n', encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    project.playbook("ps", """
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
        """)
    result = project.run("ps", "--mode", "autonomous", v="x' ; $(touch PWNED) \"`")
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.output.splitlines() if "Write-Output" in ln)
    assert line.split("│")[-1].strip() == "Write-Output 'x'' ; $(touch PWNED) \"`' 'x'' ; $(touch PWNED) \"`' \"x' ; `$(touch PWNED) `\"``\""
    assert not project.exists("PWNED")


def test_here_documents_refuse_values_they_would_change():
    tabs = _slot(Context.HEREDOC, delimiter="EOF", strip_tabs=True, before="\t", after="")
    assert escape("a\tb\nc", tabs, BASH) == "a\tb\nc"
    with pytest.raises(StepError, match="start with a tab"):
        escape("a\n\tb", tabs, BASH)  # <<- would strip that tab
    shared = _slot(Context.HEREDOC_QUOTED, delimiter="EOF", before=None, after=None)
    with pytest.raises(StepError, match="here-document early"):
        escape("x\nEOF", shared, BASH)
    assert escape("GEO", shared, BASH) == "GEO"


def test_bash_escaping_never_quotes_a_plain_word():
    for word in ("hello", "a-b_c.d/e:f=g,h+i@j%k", "42"):
        assert escape(word, _slot(Context.WORD), BASH) == word
    assert escape("", _slot(Context.WORD), BASH) == "''"
    assert re.fullmatch(r"'.*'", escape("a b", _slot(Context.WORD), BASH))


def test_temp_paths_in_values_are_not_rewritten(project):
    # `temp://` in the author's text becomes the scratch path; in a value it is data. A
    # rewrite inside a value could otherwise break its quoting (a path ending in `\`).
    project.playbook("scratch", """
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
        """)
    result = project.run("scratch", "--mode", "autonomous", a="temp://x\\", b="; touch PWNED; echo ")
    assert result.exit_code == 0, result.output
    assert not project.exists("PWNED")
    assert project.read("out/out.txt") == "made\ntemp://x\\|; touch PWNED; echo |temp://x\\|"


def test_a_secret_escaped_into_a_script_is_still_masked(project):
    # Escaping changes how a secret is written (a quote becomes '\'' or \"), and the masker
    # knows those forms, so the plan shows *** rather than the escaped secret.
    secret = "it's $ecret \"q\" `x`"
    project.playbook("hidden", """
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
        """)
    result = project.run("hidden", "--what-if", "--format", "json", token=secret)
    assert result.exit_code == 0, result.output
    scripts = [s["config"]["script"] for s in json.loads(result.stdout)["steps"] if s["action"] in ("bash", "powershell")]
    assert scripts == ["printf '%s' '***' \"***\" '***'\ncat <<EOF\n***\nEOF\n", "Write-Output '***' '***' \"***\"\n"]


#: Script shapes where bash itself reads a quoted value as code: as arithmetic (where
#: `a[$(cmd)]` runs cmd), as a variable name with a subscript, as the code of a shell or
#: eval, or after a quote the lexer must not misread. Each must be refused before the run
#: (UNSAFE) or, when rendered, run no command.
HOSTILE_SHAPES = [
    "echo ${a:-'}'} {{v}}",
    "echo ${a:-\"}\"} {{v}}",
    "echo ${a:-$(echo })} {{v}}",
    "cat <<E\nx\\\nE\necho {{v}}\nE",
    "declare -i n\nn={{v}}",
    "declare -i n\nn=\"{{v}}\"",
    "declare -i n={{v}}",
    "typeset -i n=\"{{v}}\"",
    "declare -n r={{v}}; echo $r",
    "declare {{v}}=1",
    "for (( i=0; i<{{v}}; i++ )); do :; done",
    "echo $[ {{v}} + 1 ]",
    "echo \"$[ {{v}} + 1 ]\"",
    "a=([{{v}}]=1)",
    "declare -a a=(x [{{v}}]=1)",
    "[[ -v {{v}} ]]",
    "[[ -v \"{{v}}\" ]]",
    "test -v {{v}}",
    "[ -v {{v}} ]",
    "printf -v {{v}} %s x",
    "read {{v}} <<< x",
    "mapfile -C {{v}} -c 1 a <<< x",
    "builtin eval {{v}}",
    "command eval {{v}}",
    "env bash -c {{v}}",
    "bash -ec {{v}}",
    "sh -c -- {{v}}",
    "echo \"$\\\n(echo {{v}})\"",
    "echo \"$\\\n{a:-{{v}}}\"",
    "builtin let n={{v}}",
    "command printf -v {{v}} %s x",
    "env -i A=1 bash -c {{v}}",
]


@pytest.mark.parametrize("script", HOSTILE_SHAPES)
@pytest.mark.parametrize("value", ["a[$(touch PWNED)]", "x;touch PWNED", "$(touch PWNED)"])
def test_bash_never_reads_a_value_as_code(tmp_path, script, value):
    slots = script_slots(script, BASH)
    if any(slot.context is Context.UNSAFE for slot in slots):
        return  # refused before the run (C822)
    rendered, at = [], 0
    for slot in slots:
        rendered += [script[at:slot.start], escape(value, slot, BASH)]
        at = slot.end
    rendered.append(script[at:])
    subprocess.run(["bash", "-c", "".join(rendered)], cwd=tmp_path, capture_output=True, timeout=30)
    assert not (tmp_path / "PWNED").exists(), "".join(rendered)


def test_a_quoted_brace_inside_a_parameter_expansion_does_not_hide_an_unquoted_value(project):
    # bash skips the quoted `}` in ${a:-'}'}, so the placeholder after it is an unquoted word.
    project.playbook("brace", """
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
        """)
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
    from catalyst_dsl.runtime.escaping import render_script
    from catalyst_dsl.syntax import expr_ast as ast

    literal = "echo {{ who }} "
    placeholder = ast.RefPart(ast.PathRef("who", (), start=0, end=3), start=len(literal), end=len(literal) + 7, base=len(literal) + 2)
    script = ir.Tmpl(literal + "{{who}}", (ast.TextPart(literal, start=0, end=len(literal)), placeholder))

    class Env:
        def lookup(self, name):
            return {"who": "x; touch PWNED"}[name]

    rendered = render_script(script, Env(), BASH)
    assert rendered == "echo {{ who }} 'x; touch PWNED'"
    assert rendered.values == ((len(literal), len(rendered)),)


class _Every:
    """A set holding every character: with it as a lexer's special characters, each one
    goes through the lexer's full questions, none through its shortcut for plain text."""

    def __contains__(self, item: object) -> bool:
        return True


def test_the_bash_lexers_shortcut_for_plain_text_gives_the_contexts_of_its_full_questions(monkeypatch) -> None:
    """BashLexer.run takes a character that means nothing where it stands straight into the
    word; on random scripts made of every character the lexer acts on (and placeholders,
    here-documents, substitutions, assignments), the slots are those of the lexer that
    asks `step` about every character."""
    import random

    from catalyst_dsl.syntax.shell import bash
    from catalyst_dsl.syntax.templates import parse_template

    pieces = [*" \t\n#\\'\"`$()|;&<>[]{}=-+*?!,.:/@%^~", "a", "x1", "echo", "EOF", "<<", "<<-", "$(", "${", "$((", "))",
              "[[", "]]", "-eq", "-v", "declare", "-i", "read", "bash", "-c", "eval", "let", "case", "in", "esac", "for",
              "do", "done", "if", "then", "fi", "export", "{{x}}", "${{ y }}", "${{ raw(z) }}", "\\\n", "a=", "arr=(",
              "printf", "2>", "&>", "<(", "$'", '$"', "$[", "cat <<EOF\n", "\nEOF\n", "<<'EOF'\n"]
    rng = random.Random(16)
    scripts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 60))) for _ in range(3000)]
    parts = [parse_template(script).parts for script in scripts]
    quick = [bash.BashLexer(script, p).run() for script, p in zip(scripts, parts)]
    for name in ("_SPECIAL", "_SPECIAL_IN_DOUBLE", "_SPECIAL_IN_SINGLE"):
        monkeypatch.setattr(bash, name, _Every())
    asked = [bash.BashLexer(script, p).run() for script, p in zip(scripts, parts)]
    assert sum(slot.context is not Context.WORD for slots in asked for slot in slots) > 1000  # the scripts reach the other contexts
    for script, got, want in zip(scripts, quick, asked):
        assert got == want, script
