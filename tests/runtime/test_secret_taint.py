"""Values computed from a secret are secret: the evaluator marks them, the masker hides their text, plans show placeholders."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import pytest

from catalyst_dsl.runtime.evaluate import render
from catalyst_dsl.runtime.scope import RunEnv, Scope
from catalyst_dsl.runtime.secrets import Masker
from catalyst_dsl.runtime.taint import MIN_DERIVED_LENGTH, SecretText, placeholders, secret_text

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
