"""Values computed from a secret are secret: the evaluator marks them, the masker hides their text,
plans show placeholders."""

from __future__ import annotations

import base64
import copy
import json
import re
from pathlib import Path

import pytest

from catalyst_dsl.runtime.values.evaluate import render
from catalyst_dsl.runtime.engine.scope import RunEnv, Scope
from catalyst_dsl.runtime.values.secrets import Masker
from catalyst_dsl.runtime.values.taint import MIN_DERIVED_LENGTH, SecretText, placeholders, secret_text

SECRET = "Hunter2SecretValue"


def env_with(secret: str = SECRET, **others) -> tuple[RunEnv, Masker]:
    masker = Masker()
    masker.add(secret)
    inputs = {"token": secret_text(secret, "token", masker), **others}
    return RunEnv(Scope(), inputs, Path("."), lambda: []), masker


#: expression -> what it computes from SECRET; each must come out marked and masked.
DERIVED = {
    "${{ token.toUpperCase() }}": SECRET.upper(),
    "${{ token.toLowerCase() }}": SECRET.lower(),
    "${{ token.split('').join(' ') }}": " ".join(SECRET),
    "${{ token.slice(2, 9) }}": SECRET[2:9],
    "${{ token.substring(3) }}": SECRET[3:],
    "${{ token.replace('Secret', '-') }}": SECRET.replace("Secret", "-"),
    "${{ 'Bearer ' + token }}": "Bearer " + SECRET,
    "${{ JSON.stringify({auth: {token: token}}) }}": json.dumps({"auth": {"token": SECRET}}, separators=(",", ":")),
    "header {{token}} end": f"header {SECRET} end",
    "${{ get('token').trim() }}": SECRET,
    "${{ [token.toUpperCase()].join('') }}": SECRET.upper(),
    "${{ token.padStart(30, '*') }}": SECRET.rjust(30, "*"),
}


@pytest.mark.parametrize("template", DERIVED)
def test_a_value_computed_from_a_secret_is_marked_and_its_text_masked(template):
    env, masker = env_with()
    value = render(template, env)
    assert value == DERIVED[template]  # the program gets the real value
    assert isinstance(value, SecretText) and value.sources == {"token"}
    assert SECRET not in masker.mask_text(f"log: {value}!")
    assert value not in masker.mask_text(f"log: {value}!")
    assert "<secret" in placeholders(value)


def test_the_secret_itself_keeps_its_own_placeholder():
    env, _ = env_with()
    assert placeholders(render("{{token}}", env)) == "<secret:token>"
    assert placeholders(render("${{ token.toUpperCase() }}", env)) == "<secret-derived:token>"


def test_a_template_in_a_plan_shows_its_text_with_the_secret_pieces_as_placeholders():
    env, masker = env_with()
    value = render("curl -H 'Authorization: {{token}}' -d ${{ token.toLowerCase() }}", env)
    assert placeholders(value) == "curl -H 'Authorization: <secret:token>' -d <secret-derived:token>"
    # The text around a secret stays readable in logs: only the secret parts are masked.
    assert masker.mask_text(value) == "curl -H 'Authorization: ***' -d ***"


def test_pieces_too_short_to_mask_alone_are_masked_once_put_together():
    env, masker = env_with()
    value = render("${{ token.slice(0, 3) + token.slice(3, 6) }}", env)
    assert value == SECRET[:6]
    assert masker.mask_text(f"[{SECRET[:6]}]") == "[***]"
    assert render("${{ 'id-' + token.slice(0, 3) }}", env) == "id-Hun"
    assert masker.mask_text("id-Hun") == "***"


def test_very_short_derived_text_is_marked_but_not_masked_as_text():
    env, masker = env_with()
    first = render("${{ token.charAt(0) }}", env)
    assert isinstance(first, SecretText) and len(first) < MIN_DERIVED_LENGTH
    assert placeholders(first) == "<secret-derived:token>"
    assert masker.mask_text("an H here") == "an H here"  # masking every H would hide nothing useful
    indexed = render("${{ token[1] }}", env)
    assert indexed == "u" and isinstance(indexed, SecretText)


def test_a_short_secret_is_masked_but_its_short_derivations_only_marked():
    env, masker = env_with("x7q")
    upper = render("${{ token.toUpperCase() }}", env)
    assert masker.mask_text("x7q and X7Q") == "*** and X7Q"
    assert placeholders(upper) == "<secret-derived:token>"


def test_containers_are_not_marked_but_the_text_inside_them_is():
    env, _ = env_with()
    value = render("${{ [token, 'plain'] }}", env)
    assert type(value) is list and isinstance(value[0], SecretText) and type(value[1]) is str
    assert placeholders({"a": value}) == {"a": ["<secret:token>", "plain"]}
    parts = render("${{ token.split('S') }}", env)
    assert all(isinstance(p, SecretText) for p in parts)


def test_a_conditional_marks_the_branch_it_chooses_not_the_other():
    env, _ = env_with(flag=True)
    chosen = render("${{ flag ? token : 'public' }}", env)
    assert isinstance(chosen, SecretText)
    other = render("${{ !flag ? token : 'public' }}", env)
    assert other == "public" and not isinstance(other, SecretText)
    # Testing the secret does not make the answer secret: a boolean says one bit.
    assert render("${{ token.startsWith('H') ? 'yes' : 'no' }}", env) == "yes"
    assert not isinstance(render("${{ token.startsWith('H') ? 'yes' : 'no' }}", env), SecretText)
    assert render("${{ token || 'default' }}", env) == SECRET
    assert isinstance(render("${{ token || 'default' }}", env), SecretText)
    assert not isinstance(render("${{ '' || 'default' }}", env), SecretText)


def test_numbers_and_booleans_computed_from_a_secret_stay_plain():
    env, masker = env_with()
    assert render("${{ token.length }}", env) == len(SECRET)
    assert render("${{ token === 'x' }}", env) is False
    assert masker.mask_text(str(len(SECRET))) == str(len(SECRET))


def test_marks_survive_copies_and_values_without_secrets_are_untouched():
    env, _ = env_with()
    value = render("${{ token.toUpperCase() }}", env)
    assert copy.deepcopy({"v": value})["v"].sources == {"token"}
    assert type(render("${{ 'a'.toUpperCase() + 'b' }}", env)) is str
    assert type(render("plain ${{ 'text' }}", env)) is str


def test_marked_text_is_written_as_its_text_by_json_and_yaml():
    import yaml

    env, _ = env_with()
    value = render("${{ {key: token.toLowerCase()} }}", env)
    assert json.loads(json.dumps(value)) == {"key": SECRET.lower()}
    assert yaml.safe_load(yaml.safe_dump(value)) == {"key": SECRET.lower()}


def test_programs_transforming_a_secret_are_masked_in_base64_and_reversed():
    masker = Masker()
    masker.add(SECRET)
    for encoded in (SECRET.encode(), (SECRET + "\n").encode(), (SECRET + "-more").encode()):
        shown = base64.b64encode(encoded).decode()
        assert base64.b64encode(SECRET.encode()[:18]).decode() not in masker.mask_text(shown)
    assert masker.mask_text(SECRET[::-1]) == "***"
    short = Masker()
    short.add("abc")
    assert short.mask_text("cba YWJj") == "cba YWJj"  # too short to mask in program forms


@pytest.mark.parametrize("user", ["alice", "bob", "carol7"])  # the secret starts at each offset of a 3-byte group
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_base64_of_text_holding_a_secret_hides_the_secret_at_every_alignment(user, encode):
    masker = Masker()
    masker.add(SECRET)
    credentials = f"{user}:{SECRET}".encode()
    masked = masker.mask_text(f"Authorization: Basic {encode(credentials).decode()}")
    before, mask, after = masked.removeprefix("Authorization: Basic ").partition("***")
    assert mask, masked
    # Shown: the user's groups and the one group the secret starts in; after the mask,
    # the group it ends in (its last one or two bytes, mixed with padding) at most.
    start = len(user) + 1
    assert len(before) == -(-start // 3) * 4 and len(after) <= 4, masked


def test_base64_inside_a_short_secret_is_not_looked_for():
    short = Masker()
    short.add("abcde")
    shown = base64.b64encode(b"alice:abcde").decode()
    assert short.mask_text(shown) == shown  # under MIN_PROGRAM_FORM_LENGTH: four characters would mask ordinary text


BASIC = """
name: basic
description: prints HTTP Basic credentials made from a secret
owner: Engineer
inputs:
  - string: token
    secret: true
steps:
  - name: encode
    bash: |
      printf 'alice:%s' "$TOKEN" | base64
      printf 'Authorization: Basic %s\\n' "$(printf 'bob:%s' "$TOKEN" | base64 -w0)"
      printf 'carol7:%s' "$TOKEN" | base64 -w0 | tr '+/' '-_'; echo
    env:
      TOKEN: "{{ token }}"
"""


def test_basic_credentials_a_step_prints_appear_in_no_output_or_snapshot(project):
    project.playbook("basic", BASIC)
    result = project.run("basic", token=SECRET)
    assert result.exit_code == 0, result.output
    shown = {"console": result.output, **files_left(project.root)}
    data = SECRET.encode()
    recognisable = set()
    for offset in range(3):
        whole = data[offset:][: len(data[offset:]) // 3 * 3]
        recognisable |= {base64.b64encode(whole).decode(), base64.urlsafe_b64encode(whole).decode()}
    for user in ("alice", "bob", "carol7"):
        recognisable.add(base64.b64encode(f"{user}:{SECRET}".encode()).decode())
    for where, text in shown.items():
        for form in recognisable:
            assert form not in text, f"{form} in {where}"
    assert "Authorization: Basic " in result.output and "***" in result.output


# -- whole runs: no artifact holds a derived form --------------------------------------------------

#: name -> (the expression a playbook derives, the text it yields from SECRET).
RUN_DERIVATIONS = {
    "upper": ("${{ token.toUpperCase() }}", SECRET.upper()),
    "lower": ("${{ token.toLowerCase() }}", SECRET.lower()),
    "spaced": ("${{ token.split('').join(' ') }}", " ".join(SECRET)),
    "slice": ("${{ token.slice(4, 11) }}", SECRET[4:11]),
    "substring": ("${{ token.substring(2, 8) }}", SECRET[2:8]),
    "concatenation": ("${{ 'key=' + token }}", "key=" + SECRET),
    "json": (
        "${{ JSON.stringify({auth: {token: token}}) }}",
        json.dumps({"auth": {"token": SECRET}}, separators=(",", ":")),
    ),
    "template": ("prefix-{{token}}-suffix", f"prefix-{SECRET}-suffix"),
    "conditional": ("${{ token.length > 3 ? token.toLowerCase() : 'short' }}", SECRET.lower()),
    "array": ("${{ [token.toUpperCase(), 'other'] }}", SECRET.upper()),
}
#: How the playbook uses the derived value where text is expected (an array: its item).
USE = {"array": "derived[0]"}

LEAK = """
name: leak
description: derives a value from a secret and shows, saves, plans and hands it on
owner: Engineer
inputs:
  - string: token
    secret: true
steps:
  - var: derived
    value: "{expression}"
  - log-info: "derived: ${{{{ {use} }}}}"
  - display: "${{{{ {use} }}}}"
  - file-write: temp://derived.txt
    content: "${{{{ {use} }}}}"
  - name: echo
    bash: |
      printf 'echoed: %s\\n' "$DERIVED"
      printf '%s' "$DERIVED" | base64 -w0; echo
      printf '%s\\n' "$DERIVED" | base64 -w0; echo
      printf '%s' "$DERIVED" | rev; echo
    env:
      DERIVED: "${{{{ {use} }}}}"
  - return:
      derived: "${{{{ derived }}}}"
"""


def forms_of(text: str) -> set[str]:
    """What must appear nowhere: the text, and what the step's program made of it."""
    forms = {text, json.dumps(text)[1:-1], text[::-1]}
    if len(text) >= 6:
        forms |= {base64.b64encode(text.encode()).decode(), base64.b64encode((text + "\n").encode()).decode()}
    return forms


def files_left(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", RUN_DERIVATIONS)
def test_a_derived_secret_appears_in_no_output_file_plan_or_snapshot(project, tmp_path, case):
    expression, derived = RUN_DERIVATIONS[case]
    project.playbook("leak", LEAK.format(expression=expression, use=USE.get(case, "derived")))
    shown: dict[str, str] = {}
    text_run = project.run("leak", token=SECRET)
    assert text_run.exit_code == 0, text_run.output
    # The program got the value; the console shows its line with the secret part hidden.
    assert re.search(r"echoed: \S*\*\*\*", text_run.output), text_run.output
    shown["console"] = text_run.output
    json_run = project.run("leak", "--log-format", "json", token=SECRET)
    assert json_run.exit_code == 0, json_run.output
    shown["json log"] = json_run.output
    for run in project.archived_snapshots():
        run_id = run.stem[len("run-") :]
        shown[f"runs show {run_id}"] = project.cli("runs", "show", run_id).output
        shown[f"runs export {run_id}"] = project.cli("runs", "export", run_id).output
    report = tmp_path / "plan.json"
    plan_run = project.run("leak", "--what-if", "--what-if-report", str(report), token=SECRET)
    assert plan_run.exit_code == 0, plan_run.output
    shown["what-if"] = plan_run.output
    shown["what-if report"] = report.read_text(encoding="utf-8")
    markdown = project.run("leak", "--what-if", "--format", "markdown", token=SECRET)
    shown["what-if markdown"] = markdown.output
    shown.update(files_left(project.root))
    assert len(project.archived_snapshots()) == 2
    for where, text in shown.items():
        for form in forms_of(derived) | {SECRET}:
            assert form not in text, f"{form!r} ({case}) appears in {where}"
    plan = json.loads(shown["what-if report"])
    assert "<secret-derived:token>" in json.dumps(plan["outputs"]) or case == "template"
    assert "<secret:token>" in json.dumps(plan["outputs"]) or case != "template"
    assert plan["inputs"] == {"token": "<secret:token>"}


def test_a_derived_secret_in_an_approval_prompt_is_masked(project):
    project.playbook(
        "review",
        """
        name: review
        description: a checkpoint quoting a derived secret
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - name: review
            checkpoint: "approve the key ${{ token.toLowerCase() }}"
    """,
    )
    paused = project.run("review", token=SECRET)
    assert paused.exit_code == 4, paused.output
    assert "approve the key ***" in paused.output
    shown = {
        "console": paused.output,
        "runs show": project.cli("runs", "show", project.run_id()).output,
        **files_left(project.root),
    }
    for where, text in shown.items():
        assert SECRET.lower() not in text, f"the derived secret appears in {where}"


def test_a_derived_secret_in_an_error_message_is_masked(project):
    project.playbook(
        "fails",
        """
        name: fails
        description: an error quoting a derived secret
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - throw: KeyRejected
            message: "${{ 'rejected ' + token.toUpperCase().split('').join('.') }}"
    """,
    )
    failed = project.run("fails", token=SECRET)
    assert failed.exit_code != 0
    assert "rejected ***" in failed.output
    dotted = ".".join(SECRET.upper())
    for where, text in {"console": failed.output, **files_left(project.root)}.items():
        assert dotted not in text, f"the derived secret appears in {where}"


def test_on_resume_a_derived_value_is_computed_again_from_the_secret_asked_again(project):
    project.playbook(
        "resumed",
        """
        name: resumed
        description: derives a value, stops, and uses it after the resume
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - var: derived
            value: "${{ token.toUpperCase() }}"
          - name: use
            bash: "cat input.txt && mkdir -p out && printf '%s' \\"$DERIVED\\" > out/got.txt && echo $DERIVED"
            env:
              DERIVED: "{{derived}}"
            writes: [out/got.txt]
            errorPolicy: Suspend
    """,
    )
    first = project.run("resumed", "--mode", "autonomous", token=SECRET)
    assert first.exit_code == 4, first.output
    run_id = project.run_id()
    saved = project.live_snapshots()[0].read_text(encoding="utf-8")
    assert SECRET.upper() not in saved and "<secret:token>" in saved
    project.write("input.txt", "ready\n")
    asked = project.cli("resume", run_id)  # the secret is never saved: it is asked again
    assert asked.exit_code != 0 and "needs its secret input again: token" in asked.output, asked.output
    resumed = project.cli("resume", run_id, "-i", f"token={SECRET}")
    assert resumed.exit_code == 0, resumed.output
    assert project.read("out/got.txt") == SECRET.upper()  # the program's data holds the real value
    for where, text in {"console": resumed.output, **files_left(project.root)}.items():
        if where != "out/got.txt":
            assert SECRET.upper() not in text, f"the derived secret appears in {where}"


def test_an_approval_comment_holding_the_secret_is_stored_masked(project, monkeypatch):
    project.playbook(
        "review",
        """
        name: review
        description: a checkpoint in a run with a secret
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - name: review
            checkpoint: "look at it"
    """,
    )
    monkeypatch.setenv("CATALYST_SECRET_TOKEN", SECRET)
    assert project.run("review").exit_code == 4
    run_id = project.run_id()
    approved = project.cli("approve", run_id, "--as", "Engineer", "--comment", f"fine, the key {SECRET} works")
    assert approved.exit_code == 0, approved.output
    assert project.snapshot(run_id)["approvals"][-1]["comment"] == "fine, the key *** works"
    for where, text in files_left(project.root).items():
        assert SECRET not in text, f"the secret appears in {where}"


def test_a_plan_shows_secret_text_in_diffs_as_placeholders_also_short_pieces(project, tmp_path):
    project.playbook(
        "files",
        """
        name: files
        description: writes files computed from a secret
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - file-write: out/a.txt
            content: "first ${{ token.slice(0, 2) }}\\nthen ${{ token.toUpperCase() }}\\n"
    """,
    )
    result = project.run("files", "--what-if", "--format", "json", token=SECRET)
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)["steps"][0]["effects"][0]["diff"]
    assert "+first <secret-derived:token>\n+then <secret-derived:token>\n" in diff
    assert SECRET[:2] not in diff.split("@@")[-1]


def test_a_failed_condition_names_a_secret_by_its_placeholder():
    from catalyst_dsl.runtime.values.evaluate import explain

    env, _ = env_with()
    lines = dict(explain("${{ token.toLowerCase() === 'x' || token === 'y' }}", env))
    assert lines == {"token.toLowerCase()": '"<secret-derived:token>"', "token": '"<secret:token>"'}


def test_a_value_computed_from_a_program_output_that_echoes_the_secret_is_secret(project):
    project.playbook(
        "echoes",
        """
        name: echoes
        description: a program prints the secret back; a later step derives from its output
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - name: echo
            bash: printf '%s\\\\n' "$TOKEN"
            env:
              TOKEN: "{{token}}"
          - log-info: "upper: ${{ echo.stdout.trim().toUpperCase() }}"
          - log-info: "spaced: ${{ echo.stdout.trim().split('').join(' ') }}"
    """,
    )
    result = project.run("echoes", token=SECRET)
    assert result.exit_code == 0, result.output
    assert "upper: ***" in result.output and "spaced: ***" in result.output
    for where, text in {"console": result.output, **files_left(project.root)}.items():
        for form in (SECRET, SECRET.upper(), " ".join(SECRET)):
            assert form not in text, f"{form!r} appears in {where}"


def test_a_plan_is_the_same_bytes_whether_or_not_the_secret_is_known(project, monkeypatch):
    project.playbook(
        "deploy",
        """
        name: deploy
        description: writes a header computed from a secret
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - var: header
            value: "Bearer ${{ token.toUpperCase() }}"
          - log-info: "sending {{header}}"
          - file-write: out/auth.txt
            content: "{{header}}\\n${{ token.slice(0, 2) }}\\n"
          - return:
              header: "{{header}}"
    """,
    )
    without = project.run("deploy", "--what-if", "--format", "json")
    monkeypatch.setenv("CATALYST_SECRET_TOKEN", SECRET)
    known = project.run("deploy", "--what-if", "--format", "json")
    assert without.exit_code == known.exit_code == 0, known.output
    assert without.stdout == known.stdout  # a golden plan does not depend on who made it
    assert (
        "+Bearer <secret-derived:token>\n+<secret-derived:token>\n"
        in json.loads(known.stdout)["steps"][2]["effects"][0]["diff"]
    )


def test_a_secret_split_into_short_pieces_is_masked_as_a_whole(project):
    # Each character is too short to mask on its own, but the list holds the whole secret:
    # its text (as a program or a log receives it) and the saved list are masked.
    project.playbook(
        "pieces",
        """
        name: pieces
        description: splits a secret into characters
        owner: Engineer
        inputs:
          - string: token
            secret: true
        steps:
          - var: chars
            value: "${{ token.split('') }}"
          - bash: echo "{{chars}}"
            writes: []
          - return:
              chars: "${{ chars }}"
    """,
    )
    result = project.run("pieces", "--mode", "autonomous", token=SECRET)
    assert result.exit_code == 0, result.output
    shown = ",".join(SECRET)
    assert shown not in result.output
    saved = json.dumps(project.snapshot())
    assert shown not in saved and json.dumps(list(SECRET)) not in saved
    assert json.dumps(list(SECRET), indent=0).replace("\n", "") not in saved.replace(" ", "")
