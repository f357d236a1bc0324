"""Secret providers and the masker."""

from __future__ import annotations

import json
import os
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalyst_dsl.runtime.values.secrets import (
    EnvSecretProvider,
    FileSecretProvider,
    Masker,
    SecretFileError,
    SecretProvider,
    secret_placeholder,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are checked on POSIX only")


def private_file(path, text: str):
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


def test_placeholder():
    assert secret_placeholder("api-token") == "<secret:api-token>"


# -- providers ------------------------------------------------------------------------------


def test_env_provider():
    env = EnvSecretProvider(
        environ={"CATALYST_SECRET_API_TOKEN": "t0k", "CATALYST_SECRET_DB_PASSWORD": "pw", "CATALYST_SECRET_EMPTY": ""}
    )
    assert isinstance(env, SecretProvider)
    assert env.name == "env"
    assert env.variable("api-token") == "CATALYST_SECRET_API_TOKEN"
    assert env.lookup("api-token") == "t0k"
    assert env.lookup("db.password") == "pw"
    assert env.lookup("missing") is None
    assert env.lookup("empty") is None


def test_env_provider_reads_the_environment_and_a_prefix(monkeypatch):
    monkeypatch.setenv("MY_TOKEN", "abc")
    assert EnvSecretProvider(prefix="MY_").lookup("token") == "abc"
    monkeypatch.setenv("CATALYST_SECRET_LATE", "seen")
    assert EnvSecretProvider().lookup("late") == "seen"


def test_file_provider(tmp_path):
    path = private_file(
        tmp_path / "secrets.env",
        "# comment\n\napi-token = abc=def\n  quoted=' spaced '\nplain=x\r\n",
    )
    provider = FileSecretProvider(path)
    assert isinstance(provider, SecretProvider)
    assert provider.lookup("api-token") == "abc=def"
    assert provider.lookup("quoted") == " spaced "
    assert provider.lookup("plain") == "x"
    assert provider.lookup("missing") is None


def test_file_provider_errors_never_quote_content(tmp_path):
    bad = private_file(tmp_path / "bad.env", "ok=1\nhunter2\n")
    with pytest.raises(SecretFileError) as info:
        FileSecretProvider(bad)
    assert "line 2" in str(info.value) and "hunter2" not in str(info.value)
    twice = private_file(tmp_path / "twice.env", "a=1\na=2\n")
    with pytest.raises(SecretFileError, match="lines 1 and 2"):
        FileSecretProvider(twice)
    with pytest.raises(SecretFileError, match="no such"):
        FileSecretProvider(tmp_path / "nope")


@posix_only
def test_file_provider_refuses_a_shared_file(tmp_path):
    path = private_file(tmp_path / "secrets.env", "a=1\n")
    path.chmod(0o644)
    with pytest.raises(SecretFileError) as info:
        FileSecretProvider(path)
    assert isinstance(info.value, ValueError)
    assert str(path) in str(info.value)
    assert "0644" in str(info.value)
    assert info.value.fix == f"run `chmod 600 {path}`"
    assert FileSecretProvider(path, check_mode=False).lookup("a") == "1"


def test_directory_provider(tmp_path):
    private_file(tmp_path / "api-token", "abc\n")
    private_file(tmp_path / "two-lines", "x\n\n")
    private_file(tmp_path / "crlf", "y\r\n")
    private_file(tmp_path / "bare", "z")
    provider = FileSecretProvider(tmp_path)
    assert provider.lookup("api-token") == "abc"
    assert provider.lookup("two-lines") == "x\n"
    assert provider.lookup("crlf") == "y"
    assert provider.lookup("bare") == "z"
    assert provider.lookup("missing") is None


def test_directory_provider_stays_inside(tmp_path):
    inner = tmp_path / "secrets"
    inner.mkdir()
    private_file(tmp_path / "outside", "nope")
    provider = FileSecretProvider(inner)
    for key in ("../outside", "..", ".", "", "a/b"):
        assert provider.lookup(key) is None


@posix_only
def test_directory_provider_refuses_a_shared_file(tmp_path):
    private_file(tmp_path / "token", "abc").chmod(0o640)
    with pytest.raises(SecretFileError, match="chmod 600"):
        FileSecretProvider(tmp_path).lookup("token")


# -- masker ---------------------------------------------------------------------------------


def masker(*secrets) -> Masker:
    m = Masker()
    for s in secrets:
        m.add(s)
    return m


def test_mask_text():
    m = masker("hunter2")
    assert m.mask_text("pw=hunter2, again hunter2.") == "pw=***, again ***."
    assert m.mask_text("nothing here") == "nothing here"


def test_no_secrets_and_empty_secrets():
    m = masker("", None, True)
    assert len(m) == 0
    assert m.mask_text("abc") == "abc"
    assert m.mask({"a": [1]}) == {"a": [1]}


def test_short_secrets_are_masked_too():
    assert masker("x").mask_text("axb") == "a***b"


def test_deep_mask_returns_new_objects():
    m = masker("s3cr3t")
    value = {"s3cr3t-key": ["a s3cr3t", ("s3cr3t", 1, None, True)], "n": 2.5}
    masked = m.mask(value)
    assert masked == {"***-key": ["a ***", ("***", 1, None, True)], "n": 2.5}
    assert value == {"s3cr3t-key": ["a s3cr3t", ("s3cr3t", 1, None, True)], "n": 2.5}
    assert masked is not value


def test_numbers_holding_a_secret():
    m = masker(1234)
    assert m.mask({"pin": 1234, "other": 99, "flag": True}) == {"pin": "***", "other": 99, "flag": True}
    assert m.mask_text("pin 1234") == "pin ***"


def test_json_escaped_form():
    secret = 'pa"ss\\wörd'
    m = masker(secret)
    for text in (json.dumps({"token": secret}), json.dumps({"token": secret}, ensure_ascii=False)):
        masked = m.mask_text(text)
        assert masked == '{"token": "***"}'


def test_url_encoded_form():
    secret = "a b&c/d"
    m = masker(secret)
    assert m.mask_text(f"https://x/?t={quote(secret, safe='')}") == "https://x/?t=***"
    assert m.mask_text("https://x/?t=a+b%26c%2Fd") == "https://x/?t=***"


def test_overlapping_and_nested_secrets_leave_nothing_showing():
    m = masker("abcd", "cdef", "ab")
    assert m.mask_text("xxabcdefyy") == "xx***yy"
    assert m.mask_text("ab-abcd") == "***-***"
    assert m.mask_text("abcdabcd") == "***"  # touching occurrences become one


def test_adding_a_secret_after_masking():
    m = masker("one")
    assert m.mask_text("one two") == "*** two"
    m.add("two")
    assert m.mask_text("one two") == "*** ***"


def test_a_secret_containing_the_mask_does_not_loop():
    assert masker("***").mask_text("a***b****") == "a***b***"
    assert masker("x***").mask_text("x***x***") == "***"


def test_a_lone_surrogate_secret():
    secret = "ab\udcffc"
    assert masker(secret).mask_text(f"<{secret}>") == "<***>"


@st.composite
def texts_with_secrets(draw):
    no_star = st.text(alphabet=st.characters(exclude_characters="*"), min_size=1, max_size=8)
    secrets = draw(st.lists(no_star, min_size=1, max_size=3))
    pieces = draw(st.lists(st.one_of(st.text(max_size=6), st.sampled_from(secrets)), max_size=8))
    return secrets, "".join(pieces)


@given(texts_with_secrets())
def test_masked_text_never_contains_a_secret(case):
    secrets, text = case
    m = masker(*secrets)
    masked = m.mask_text(text)
    for secret in secrets:
        assert secret not in masked
        assert json.dumps(secret)[1:-1] not in m.mask_text(json.dumps(text))
    assert m.mask({text: [text]}) == {masked: [masked]}


@pytest.mark.parametrize("secret", ["s3cret", "s3cret!", "s3cret!!", "correct-horse-battery"])  # every length mod 3
@pytest.mark.parametrize("newline", ["", "\n"])
@pytest.mark.parametrize("encode", ["b64encode", "urlsafe_b64encode"])
def test_base64_of_a_secret_alone_is_masked_whole(secret: str, newline: str, encode: str) -> None:
    # `printf %s "$TOKEN" | base64` and `echo "$TOKEN" | base64`: the second encodes the
    # newline too, which changes the last characters. Every character of either is masked;
    # the tool's own newline after it stays.
    import base64

    masker = Masker()
    masker.add(secret)
    shown = getattr(base64, encode)((secret + newline).encode()).decode()
    assert masker.mask_text(shown) == "***"
    assert masker.mask_text(f"token: {shown}\n") == "token: ***\n"
