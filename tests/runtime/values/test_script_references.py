"""Values reach bash scripts by reference: attacks, run for real.

Every value placed in a `bash` or `test` script travels in an environment variable and
the script holds `"${CATALYST_V_n}"`. The matrix gives each hostile payload as an input,
in every place a value can stand, and reads back what the script received; the hostile
shapes put values where bash (or a program it starts) evaluates text, and each must be
refused before the run or run no command; `catalyst check` and `catalyst run` refuse
the same scripts.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from catalyst_dsl.syntax.shell import Context, bash_analysis
from tests.helpers.script_payloads import PAYLOADS


#: Places a value stands in: a script line that writes what the value became to out/NAME.
CONTEXTS = {
    "unquoted": "printf '%s' {{v}} > out/unquoted",
    "double": "printf '%s' \"{{v}}\" > out/double",
    "single": "printf '%s' 'pre{{v}}post' > out/single",
    "ansi-c": "printf '%s' $'pre\\t{{v}}post' > out/ansi-c",
    "heredoc": "cat > out/heredoc <<EOF\n{{v}}\nEOF",
    "heredoc-quoted": "cat > out/heredoc-quoted <<'EOF'\n$HOME `x` \\ {{v}}\nEOF",
    "heredoc-tabs": "cat > out/heredoc-tabs <<-EOF\n\t{{v}}\n\tEOF",
    "for-list": "for item in {{v}}; do printf '%s' \"$item\" > out/for-list; done",
    "after-dashes": "set -- {{v}}; printf '%s' \"$1\" > out/after-dashes",
    "substitution": "got=\"$(printf '%s.' \"{{v}}\")\"; printf '%s' \"${got%.}\" > out/substitution",
    "backticks": "got=`printf '%s.' {{v}}`; printf '%s' \"${got%.}\" > out/backticks",
    "assignment": "value={{v}}; printf '%s' \"$value\" > out/assignment",
    "default": "printf '%s' \"${unset_name:-{{v}}}\" > out/default",
    "brace-expansion": "set -- x{,{{v}}}; printf '%s' \"${2#x}\" > out/brace-expansion",
    "comment": "printf '%s' ok > out/comment # {{v}}",
    "herestring": "cat <<< {{v}} > out/herestring",
    "case": "case {{v}} in *) printf '%s' matched > out/case;; esac",
    "test": "[[ {{v}} == {{v}} ]] && printf '%s' same > out/test",
}


def expected(context: str, value: str) -> str:
    return {
        "single": f"pre{value}post",
        "ansi-c": f"pre\t{value}post",
        "heredoc": value + "\n",
        "heredoc-quoted": f"$HOME `x` \\ {value}\n",
        "heredoc-tabs": value + "\n",
        "herestring": value + "\n",
        "comment": "ok",
        "case": "matched",
        "test": "same",
    }.get(context, value)


def _playbook(action: str) -> str:
    script = "mkdir -p out\n" + "\n".join(CONTEXTS.values()) + "\n"
    body = "\n".join("      " + line for line in script.splitlines())
    return (
        "name: matrix\n"
        "description: every place a value stands in a script\n"
        "owner: Engineer\n"
        "inputs:\n"
        "  - name: v\n"
        "    type: string\n"
        "steps:\n"
        f"  - {action}: |\n{body}\n"
        "    writes: [\"out/**\"]\n"
    )


@pytest.mark.parametrize("action", ["bash", "test"])
@pytest.mark.parametrize("payload", sorted(PAYLOADS))
def test_no_payload_runs_and_every_place_receives_it_exactly(project, action, payload):
    value = PAYLOADS[payload]
    project.playbook("matrix", _playbook(action))
    result = project.run("matrix", "--mode", "autonomous", v=value)
    assert result.exit_code == 0, result.output
    assert not project.exists("PWNED")
    received = {name: (project.root / "out" / name).read_text(encoding="utf-8") for name in CONTEXTS}
    assert received == {name: expected(name, value) for name in CONTEXTS}


def test_the_plan_shows_the_script_with_references_and_the_values_it_gets(project):
    project.playbook(
        "shown",
        """
        name: shown
        description: the script and its values in the plan
        owner: Engineer
        inputs:
          - name: v
            type: string
        steps:
          - bash: echo {{v}} "{{v}}"
            env: {MODE: fast}
            writes: []
        """,
    )
    plan = json.loads(project.run("shown", "--what-if", "--format", "json", v="x; touch PWNED").stdout)
    step = next(s for s in plan["steps"] if s["action"] == "bash")
    assert step["config"]["script"] == 'echo "${CATALYST_V_0}" "${CATALYST_V_1}"'
    assert step["config"]["env"] == {"MODE": "fast", "CATALYST_V_0": "x; touch PWNED", "CATALYST_V_1": "x; touch PWNED"}
    assert not project.exists("PWNED")


def test_a_step_env_cannot_replace_a_value(project):
    project.playbook(
        "override",
        """
        name: override
        description: env names the value's variable
        owner: Engineer
        inputs:
          - name: v
            type: string
        steps:
          - bash: mkdir -p out && printf '%s' {{v}} > out/got
            env: {CATALYST_V_0: "; touch PWNED"}
            writes: [out/**]
        """,
    )
    result = project.run("override", "--mode", "autonomous", v="safe")
    assert result.exit_code == 0, result.output
    assert project.read("out/got") == "safe"


def test_a_secret_in_a_script_is_masked_in_the_plan(project):
    project.playbook(
        "hidden",
        """
        name: hidden
        description: a secret by reference
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - bash: printf '%s' {{token}}
            writes: []
        """,
    )
    result = project.run("hidden", "--what-if", "--format", "json", token="it's $Hidden")
    assert result.exit_code == 0, result.output
    assert "Hidden" not in result.stdout
    step = next(s for s in json.loads(result.stdout)["steps"] if s["action"] == "bash")
    assert step["config"]["env"] == {"CATALYST_V_0": "<secret:token>"}
    ran = project.run("hidden", "--mode", "autonomous", token="it's $Hidden")
    assert ran.exit_code == 0, ran.output
    assert "Hidden" not in ran.output and "***" in ran.output
    assert not any("Hidden" in p.read_text(errors="replace") for p in project.root.rglob("*") if p.is_file())


#: Shapes where bash, or the program it starts, reads text as code, a program, a name or
#: arithmetic. Each must be refused (checked below) and, whatever the analysis says, a
#: rendered script must run no command.
REFUSED = [
    # arithmetic
    "echo $(( {{v}} + 1 ))",
    "echo \"$(( {{v}} ))\"",
    "(( {{v}} ))",
    "echo $[ {{v}} + 1 ]",
    "let n={{v}}",
    "for (( i=0; i<{{v}}; i++ )); do :; done",
    "a[{{v}}]=1",
    "echo ${a[{{v}}]}",
    "echo ${x:{{v}}}",
    "echo ${x:1:{{v}}}",
    "a=([{{v}}]=1)",
    "declare -a a=(x [{{v}}]=1)",
    "[[ $a -eq {{v}} ]]",
    "[[ \"{{v}}\" -gt 3 ]]",
    "declare -i n; n={{v}}",
    "declare -i n=\"{{v}}\"",
    "typeset -i n={{v}}",
    "local -i n={{v}}",
    "x={{v}}; echo $(( x + 1 ))",
    "x=\"{{v}}\"; (( x ))",
    "read -r x <<< {{v}}; echo $((x))",
    "f() { echo $(( $1 )); }; f {{v}}",
    "set -- {{v}}; echo $(( $1 ))",
    "for i in {{v}}; do echo $((i)); done",
    "y={{v}}; x=$y; echo $((x))",
    "x=${y:={{v}}}; echo $((y))",
    # variable names
    "unset a[{{v}}]",
    "unset -v \"a[{{v}}]\"",
    "unset {{v}}",
    "read {{v}}",
    "read -r {{v}} <<< x",
    "printf -v {{v}} %s x",
    "command printf -v {{v}} %s x",
    "mapfile -C {{v}} -c 1 a <<< x",
    "readarray {{v}}",
    "getopts ab {{v}}",
    "wait -p {{v}}",
    "declare {{v}}=1",
    "export {{v}}",
    "local {{v}}",
    "readonly {{v}}",
    "declare -n r={{v}}; echo $r",
    "[[ -v {{v}} ]]",
    "[[ -v \"{{v}}\" ]]",
    "test -v {{v}}",
    "[ -v {{v}} ]",
    "echo ${!{{v}}}",
    "x={{v}}; echo ${!x}",
    # special variables
    "RANDOM={{v}}",
    "SRANDOM=\"{{v}}\"",
    "OPTIND={{v}}",
    "BASH_XTRACEFD={{v}}",
    "BASH_COMPAT={{v}}",
    "PS4=\"{{v}}\"; set -x; true",
    "PROMPT_COMMAND={{v}}",
    "BASH_ENV={{v}} bash -c true",
    "export LD_PRELOAD={{v}}",
    "PATH={{v}}; ls",
    "GIT_SSH_COMMAND={{v}} git fetch",
    "NODE_OPTIONS={{v}} node x.js",
    "IFS={{v}}",
    "local PS1={{v}}",
    "x=${PS4:={{v}}}",
    # program position
    "{{v}} --version",
    "\"{{v}}\" arg",
    "A=1 {{v}}",
    "$({{v}})",
    "x={{v}}; $x",
    "for f in {{v}}; do \"$f\"; done",
    "exec {{v}}",
    "command {{v}}",
    "command -p {{v}} x",
    "builtin {{v}}",
    "env {{v}}",
    "env -i A=1 {{v}}",
    "nohup {{v}} &",
    "timeout 5 {{v}}",
    "timeout -s KILL 5 {{v}}",
    "sudo {{v}}",
    "sudo -u root {{v}}",
    "xargs {{v}} < /dev/null",
    "xargs -n 1 {{v}} < /dev/null",
    "find . -maxdepth 0 -exec {{v}} \\;",
    "find . -maxdepth 0 -execdir {{v}} {} +",
    "hash -p {{v}} ls; ls",
    "nice -n 5 {{v}}",
    "time {{v}}",
    "stdbuf -o0 {{v}}",
    "setsid {{v}}",
    "flock /tmp/x {{v}}",
    "chroot / {{v}}",
    "env -S {{v}}",
    "nice {{v}} ls",
    "timeout {{v}} ls",
    # code arguments
    "eval {{v}}",
    "eval \"echo {{v}}\"",
    "builtin eval {{v}}",
    "command eval {{v}}",
    "source {{v}}",
    ". {{v}}",
    "trap {{v}} EXIT",
    "trap \"echo {{v}}\" EXIT",
    "alias l={{v}}",
    "alias \"l={{v}}\"",
    "bash -c {{v}}",
    "bash -ec {{v}}",
    "sh -c -- {{v}}",
    "bash -c \"echo {{v}}\"",
    "env bash -c {{v}}",
    "sudo bash -c {{v}}",
    "xargs sh -c {{v}} < /dev/null",
    "find . -exec sh -c {{v}} \\;",
    "python3 -c {{v}}",
    "python3 -c \"print('{{v}}')\"",
    "node -e {{v}}",
    "perl -e {{v}}",
    "ruby -e {{v}}",
    "awk {{v}} /dev/null",
    "sed {{v}} /dev/null",
    "sed -e {{v}} /dev/null",
    "bash {{v}}",
    "python3 {{v}}",
    "enable -f {{v}} x",
    "complete -C {{v}} x",
    "compgen -W {{v}}",
    "ssh host {{v}}",
    "su -c {{v}}",
    "watch {{v}}",
    "git -c {{v}} status",
    "git -c core.pager={{v}} log",
    "tar --to-command {{v}} -xf x.tar",
    "rsync -e {{v}} a b",
    "make X={{v}}",
    # input that is code: stdin of an interpreter, xargs, an alias, bash -c code given the value
    "echo {{v}} | bash",
    "printf %s {{v}} | sh -s",
    "echo {{v}} | python3 -",
    "bash <<< {{v}}",
    "bash <<E\n{{v}}\nE",
    "cat <<E | bash\n{{v}}\nE",
    "echo {{v}} | xargs sh -c",
    "echo {{v}} | xargs eval",
    "python3 - <<< {{v}}",
    "shopt -s expand_aliases; alias p=eval; p {{v}}",
    "bash -c 'eval \"$1\"' _ {{v}}",
    "sh -c 'echo $(( $1 ))' _ {{v}}",
    "x={{v}}; echo \"${x@P}\"",
    "x={{v}}; [[ x -eq 1 ]]",
    "while read -r l; do eval \"$l\"; done <<< {{v}}",
    "echo {{v}} | while read -r l; do $l; done",
    "busybox sh -c {{v}}",
    "sudo -s echo {{v}}",
    "flock /tmp/l -c {{v}}",
    "sqlite3 db {{v}}",
    "npx {{v}}",
    "mapfile -t a <<< {{v}}; eval \"${a[0]}\"",
    # a variable that may hold a value, read where bash evaluates text
    "declare -i n; read -r n <<< {{v}}",
    "declare -i n; printf -v n %s {{v}}",
    "declare -i n; for n in {{v}}; do :; done",
    "declare -i \"n\"; n={{v}}",
    "declare -i n; : \"${n:={{v}}}\"",
    "read -r PS4 <<< {{v}}; set -x",
    "printf -v PS4 %s {{v}}",
    "for PS4 in {{v}}; do set -x; done",
    "mapfile -t PS4 <<< {{v}}",
    "read -r BASH_ENV <<< {{v}}; bash -c :",
    "printf -v 'BASH_CMDS[lsx]' %s {{v}}",
    "declare -n r=PS4; r={{v}}",
    "declare -n r; for r in {{v}}; do :; done",
    "declare -n r; read -r r <<< {{v}}",
    "x={{v}}; y=x; (( y ))",
    "x={{v}}; n=x; echo $(( ${!n} ))",
    "x={{v}}; eval '(( x ))'",
    "x={{v}}; trap 'eval \"$x\"' EXIT",
    "f() { for a; do eval \"$a\"; done; }; f {{v}}",
    "set -- {{v}}; for a; do eval \"$a\"; done",
    "x={{v}}; let y=x",
    "x={{v}}; declare -i y=x",
    "x={{v}}; echo \"${s:x}\"",
    "x={{v}}; a[x]=1",
    "x={{v}}; unset 'a[x]'",
    "x={{v}}; [[ -v a[x] ]]",
    "x={{v}}; [[ x+0 -eq 1 ]]",
    "a=({{v}}); (( a[0] ))",
    "read -ra p <<< {{v}}; (( p[0] ))",
    "echo {{v}} >/dev/null; eval \"$_\"",
    "read -r <<< {{v}}; eval \"$REPLY\"",
    "[[ {{v}} =~ (.*) ]]; eval \"${BASH_REMATCH[1]}\"",
    "x={{v}}; cat <<EOF\n$(( x ))\nEOF",
    "declare -a arr={{v}}",
    "local -A m={{v}}",
    "arr=(); declare arr={{v}}",
    "x={{v}}; declare -A m=\"$x\"",
    "x={{v}}; find . -name $x",
    "ev\\\nal {{v}}",
    "x={{v}}; echo $(\\\n( x ))",
    "BASH_ALIASES[e]=eval; e {{v}}",
    "coproc bash; echo {{v}} >&\"${COPROC[1]}\"",
    "sh 0< <(echo {{v}})",
    "echo {{v}} > >(bash)",
    "echo {{v}} | (bash)",
    "echo {{v}} | { bash; }",
    "run() { bash; }; echo {{v}} | run",
    "exec '{{v}}' PWNED",
    "timeout 5 '{{v}}' PWNED",
    "find . -exec true \\; -exec {{v}} \\;",
    "code='eval \"$1\"'; bash -c \"$code\" _ {{v}}",
    "find . -exec true \\; -exec bash -c 'eval \"$1\"' _ {{v}} \\;",
    # second round: names chosen at run time, builtins behind prefixes, children given values, option starts
    "n=count; printf -v \"$n\" %s {{v}}; (( count ))",
    "n=PS4; read -r \"$n\" <<< {{v}}",
    "builtin read -r x <<< {{v}}; (( x ))",
    "command printf -v x %s {{v}}; (( x ))",
    "\\read -r x <<< {{v}}; (( x ))",
    "builtin declare -i n; n={{v}}",
    "f=-i; declare $f n; n={{v}}",
    "builtin declare -n r=PS4; r={{v}}",
    "command let y={{v}}",
    "f() { for ((i=1; i<=$#; i++)); do n=${!i}; echo $((n+1)); done; }; f {{v}}",
    "eval \"${!#}\"; f {{v}}",
    "val_1={{v}}; i=1; echo $(( val_$i ))",
    "x={{v}}; a=([x]=1)",
    "x={{v}}; declare 'a[x]=1'",
    "x={{v}}; command read 'a[x]' <<< 1",
    "export N={{v}}; bash -c 'echo $(( N + 1 ))'",
    "N={{v}} bash -c '(( N ))'",
    "env N={{v}} bash -c '(( N ))'",
    "export N={{v}}; sh -c '$N'",
    "set -o posix; alias run=eval; run {{v}}",
    "url={{v}}; git fetch \"$url\" main",
    "lsr() { git ls-remote \"$1\" HEAD; }; lsr {{v}}",
    "git ls-remote \"${u:-{{v}}}\" HEAD",
    "m={{v}}; tar -xf a.tar \"$m\"",
    "bash -c 'git ls-remote \"$1\" HEAD' _ {{v}}",
    "git config -- core.fsmonitor {{v}}",
    "git config gpg.ssh.defaultKeyCommand {{v}}",
    "echo {{v}} | bash ./../../dev/stdin",
    "bash -c 'source /dev/stdin' <<< {{v}}",
    # third round: >& re-expands, CR, compound [[ ]], integers bash fills, subscripted namerefs, groups, make,
    # git aliases
    "echo build >& {{v}}",
    "log={{v}}; make >& \"$log\"",
    "echo hi \\\r\n{{v}} PWNED",
    "x={{v}}; [[ x -eq 1 && 1 == 1 ]]",
    "x={{v}}; [[ ( x -eq 1 ) ]]",
    "a=({{v}}); [[ a[0] -gt 0 && 1 ]]",
    "declare -i REPLY; read -r <<< {{v}}",
    "n={{v}}; declare -n r='a[n]'; echo \"$r\"",
    "n={{v}}; exec {a[n]}>/dev/null",
    "mkdir -p -- {{v}}; cd -- {{v}}; (( ${PWD##*/} ))",
    "echo {{v}} | bash -c \"$(cat)\"",
    "time { bash; } <<< {{v}}",
    "f() { cat; }; f() { bash; }; echo {{v}} | f",
    "coproc B { bash; }; echo {{v}} >&\"${B[1]}\"",
    "x={{v}}; nice tar cf o.tar ./$x",
    "git ls-remote {,}{{v}}",
    "shopt -s expand_al''iases; al''ias run=eval; run {{v}}",
    "VERSION={{v}} make release",
    "export VERSION={{v}}; make",
    "env VERSION={{v}} make",
    # parse trouble and odd places
    "cat <<$'EOF'\n{{v}}\nEOF",
    "cat <<\"E\"F\n{{v}}\nEF",
    "cat <<{{v}}\nx\n{{v}}",
    "echo ${x{{v}}}",
    "echo $\"a{{v}}\" (",
    "echo {{v}} |& if",
]

#: Shapes where a value is plain data: each runs and receives the value.
ALLOWED = [
    "printf '%s' {{v}}",
    "printf '%s' \"a{{v}}b\"",
    "printf '%s' 'a{{v}}b'",
    "bash -c 'printf %s \"$1\"' _ {{v}}",
    "python3 -c 'import sys; print(sys.argv[1])' {{v}}",
    "[ {{v}} -eq 1 ] 2>/dev/null; true",
    "x={{v}}; printf '%s' \"$x\"",
    "f() { printf '%s' \"$1\"; }; f {{v}}",
    "echo {{v}} | xargs printf '%s'",
    "echo {{v}} | python3 -c 'import sys; sys.stdin.read()'",
    "x={{v}}; printf '%s' \"${x@Q}\"",
    "x={{v}}; (( ${#x} > 3 )) || true",
    "x={{v}}; [[ ${#x} -gt 3 ]] || true",
    "a=({{v}}); printf '%s' \"${!a[@]}\"",
    "arr=(); arr={{v}}; printf '%s' \"${arr[@]}\"",
    "echo {{v}} | while read -r l; do printf '%s' \"$l\"; done",
    "for ((i = 0; i < 3; i++)); do printf '%s' {{v}}; done",
    "n=3; echo $(( n + 1 )) {{v}}",
    "APP=x; printf '%s' \"Deploying $APP {{v}} now\"",
    "git commit --dry-run -m \"$HOME {{v}}\" >/dev/null 2>&1; true",
    "find . -maxdepth 0 -name {{v}}",
    "env A={{v}} true",
    "timeout 5 echo {{v}}",
    "git log -1 --format=%s -- {{v}} 2>/dev/null; true",
    "printf '%s\\n' {{v}} | grep -c x; true",
    "echo # {{v}}",
    "cat <<E\n${HOME:+x} {{v}}\nE",
    "x=( {{v}} \"{{v}}\" ); printf '%s' \"${x[0]}\"",
    "arr=([0]={{v}}); printf '%s' \"${arr[0]}\"",
    "case {{v}} in a|b) ;; esac",
    "[[ {{v}} =~ x ]]; true",
    "echo ${x:-{{v}}} ${x:+{{v}}}",
]

VALUES = ["a[$(touch PWNED)]", "x;touch PWNED", "$(touch PWNED)", "touch PWNED", "-c touch PWNED", "'\"; touch PWNED #"]


def _analysis(script: str):
    return bash_analysis(script.replace("{{v}}", "{{ v }}"))


def _run(script: str, value: str, cwd) -> None:
    analysis = _analysis(script)
    env = {**os.environ, **{f"CATALYST_V_{i}": value for i in range(len(analysis.slots))}}
    subprocess.run(
        ["bash", "-c", analysis.script], cwd=cwd, env=env, capture_output=True, timeout=30, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("script", REFUSED)
def test_every_place_that_evaluates_a_value_is_refused(script):
    analysis = _analysis(script)
    assert analysis.refusals, f"not refused: {script!r} -> {analysis.script!r}"
    assert analysis.script is None
    for finding in analysis.refusals:
        assert finding.problem and finding.help and finding.start < finding.end


@pytest.mark.parametrize("script", ALLOWED)
@pytest.mark.parametrize("value", VALUES)
def test_a_value_that_is_data_runs_no_command(tmp_path, script, value):
    analysis = _analysis(script)
    assert not analysis.refusals, [f.problem for f in analysis.refusals]
    _run(script, value, tmp_path)
    assert not (tmp_path / "PWNED").exists(), analysis.script


def test_the_reference_replaces_the_placeholder_in_its_context():
    analysis = _analysis(
        "echo {{v}} \"a {{v}}\" 'b {{v}}' $'c {{v}}' # {{v}}\ncat <<'E'\n$x {{v}}\nE\ncat <<E\n{{v}}\nE"
    )
    assert [s.context for s in analysis.slots] == [
        Context.WORD,
        Context.DOUBLE,
        Context.SINGLE,
        Context.ANSI_C,
        Context.COMMENT,
        Context.HEREDOC_QUOTED,
        Context.HEREDOC,
    ]
    assert analysis.script == (
        'echo "${CATALYST_V_0}" "a ${CATALYST_V_1}" \'b \'"${CATALYST_V_2}"\'\' '
        "$'c '\"${CATALYST_V_3}\"$'' # ${CATALYST_V_4}\n"
        "cat <<E\n\\$x ${CATALYST_V_5}\nE\ncat <<E\n${CATALYST_V_6}\nE"
    )


def test_single_quotes_inside_a_double_quoted_parameter_are_text():
    # In "${x:-'...'}" the single quotes are characters, so the value is in double quotes.
    analysis = _analysis("printf '%s' \"${unset_name:-'{{v}}'}\"")
    assert analysis.slots[0].context is Context.DOUBLE
    assert analysis.script == "printf '%s' \"${unset_name:-'${CATALYST_V_0}'}\""


def test_a_use_of_a_variable_that_holds_a_value_is_refused_where_it_is():
    script = "x={{ v }}\ny=$x\necho $(( y + 1 ))"
    analysis = bash_analysis(script)
    assert analysis.slots[0].context is Context.WORD
    [use] = analysis.uses
    assert script[use.start : use.end] == "y" and "arithmetic" in use.problem


@pytest.mark.parametrize(
    "script",
    [
        "echo $(( {{v}} ))",
        "unset a[{{v}}]",
        "exec {{v}}",
        "bash -c {{v}}",
        "PS4={{v}}",
        "cat <<$'EOF'\n{{v}}\nEOF",
        "x={{v}}; (( x ))",
    ],
)
def test_check_and_run_refuse_the_same_scripts(project, script):
    body = "\n".join("      " + line for line in script.replace("{{v}}", "{{ inputs.v }}").splitlines())
    project.playbook(
        "refused",
        (
            "name: refused\ndescription: a value where bash evaluates it\nowner: Engineer\n"
            "inputs:\n  - name: v\n    type: string\n"
            f"steps:\n  - bash: |\n{body}\n    writes: []\n"
        ),
    )
    checked = project.cli("check")
    assert checked.exit_code == 1 and "C822" in checked.output, checked.output
    result = project.run("refused", "--mode", "autonomous", v="a[$(touch PWNED)]")
    assert result.exit_code != 0 and "C822" in result.output, result.output
    assert not project.exists("PWNED")


def test_a_raw_fragment_is_analysed_with_its_text_at_run_time(project):
    # At check time raw() text is unknown; at run time it is read as written, so a raw
    # fragment that puts a value in program position is refused then.
    project.playbook(
        "rawrun",
        """
        name: rawrun
        description: raw fragment before a value
        owner: Engineer
        inputs:
          - name: v
            type: string
        steps:
          - var: prefix
            value: "eval"
          - bash: ${{ raw(prefix) }} {{v}}
            writes: []
        """,
    )
    result = project.run("rawrun", "--mode", "autonomous", v="touch PWNED")
    assert result.exit_code != 0 and ("UnsafeTemplate" in result.output or "C822" in result.output), result.output
    assert not project.exists("PWNED")


@pytest.mark.parametrize(
    "script, refused",
    [
        ("git ls-remote {{ inputs.v }} >/dev/null 2>&1 || true", True),
        ("tar cf out.tar \"{{ inputs.v }}\"", True),
        ("git ls-remote --end-of-options {{ inputs.v }} >/dev/null 2>&1 || true", False),
        ("printf '%s' {{ inputs.v }}", False),
        ("echo {{ inputs.v }} | xargs find . -maxdepth 0 -name", None),
        ("git sync {{ inputs.v }} || true", True),
        ("split -l 1 {{ inputs.v }} /dev/null || true", True),
        ("git commit --dry-run -m {{ inputs.v }} >/dev/null 2>&1 || true", False),
    ],
)
def test_a_value_read_as_an_option_that_runs_a_program_is_refused_at_run_time(project, script, refused):
    project.playbook(
        "option",
        (
            "name: option\ndescription: a value as an option\nowner: Engineer\n"
            "inputs:\n  - name: v\n    type: string\n"
            f"steps:\n  - bash: |\n      {script}\n    writes: []\n"
        ),
    )
    result = project.run("option", "--mode", "autonomous", v="--upload-pack=touch PWNED;")
    assert not project.exists("PWNED")
    if refused is None:  # refused before the run: xargs splits its input into find's options
        assert result.exit_code != 0 and "C822" in result.output, result.output
    elif refused:
        assert result.exit_code != 0 and "UnsafeValue" in result.output, result.output
    else:
        assert "UnsafeValue" not in result.output and "C822" not in result.output, result.output


def test_the_script_is_not_the_programs_input(project):
    # The script runs from a file: `exec <<< value` changes only what later commands read.
    project.playbook(
        "stdin",
        (
            "name: stdin\ndescription: exec redirecting the input\nowner: Engineer\n"
            "inputs:\n  - name: v\n    type: string\nsteps:\n  - bash: |\n"
            "      exec <<< {{ inputs.v }}\n      while IFS= read -r line; do printf 'got %s\\n' \"$line\"; done\n"
            "    writes: []\n"
        ),
    )
    result = project.run("stdin", "--mode", "autonomous", v="touch PWNED")
    assert result.exit_code == 0, result.output
    assert "got touch PWNED" in result.output and not project.exists("PWNED")


@pytest.mark.parametrize(
    "script, refused",
    [
        ("echo $(( N + 1 ))", True),
        ("eval \"$N\"", True),
        ("$N --version", True),
        ("printf '%s' \"$N\"", False),
        ("echo $(( M + 1 ))", False),
        ("printf '%s' {{ inputs.v }} \"$N\"; (( N ))", True),
    ],
)
def test_a_value_given_in_env_is_a_value_to_the_script(project, script, refused):
    # `env: {N: "{{ inputs.v }}"}` passes a value under the name N: the script's uses of N
    # are checked as uses of a value; M holds the author's constant.
    project.playbook(
        "given",
        (
            "name: given\ndescription: a value in env\nowner: Engineer\n"
            "inputs:\n  - name: v\n    type: string\n"
            f"steps:\n  - bash: |\n      {script}\n"
            "    env: {N: \"{{ inputs.v }}\", M: \"3\"}\n    writes: []\n"
        ),
    )
    checked = project.cli("check")
    result = project.run("given", "--mode", "autonomous", v="a[$(touch PWNED)]")
    assert not project.exists("PWNED")
    if refused:
        assert checked.exit_code == 1 and "C822" in checked.output, checked.output
        assert result.exit_code != 0 and "C822" in result.output, result.output
    else:
        assert checked.exit_code == 0, checked.output
        assert result.exit_code == 0, result.output


def test_a_script_nested_too_deep_is_refused_and_a_long_one_is_read():
    # Following a value to the top of the script costs the nesting depth at each level, so
    # the depth is bounded; length is not (bench/ measures the cost, tests never time it).
    deep = "x=" + "".join("$(echo {{ v }} " for _ in range(200)) + ")" * 200
    assert "nested deeper" in bash_analysis(deep).refusals[0].problem
    long = "printf '%s' " + " ".join("{{ v }}" for _ in range(3000))
    analysis = bash_analysis(long)
    assert not analysis.refusals and len(analysis.slots) == 3000
