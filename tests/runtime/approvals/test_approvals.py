"""Approvals: role checks, the state hash, signed single-use tokens and their key."""

import base64
import hashlib
import hmac
import json
import os
import stat

import pytest

from catalyst_dsl.runtime.approvals.tokens import (
    KEY_ENV,
    ApprovalKeyError,
    ApprovalKeys,
    TokenClaims,
    TokenError,
    canonical_hash,
    issue_token,
    releases,
    verify_token,
)

NOW = 1_700_000_000
STATE = canonical_hash({"steps": {"spec": "done"}})
HEX_KEY = "ab" * 32
posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")


@pytest.fixture
def keys(tmp_path):
    return ApprovalKeys(tmp_path / "runs", environ={})


def _token(keys, **overrides):
    fields = dict(
        run_id="run-1", path="steps[2]", state_hash=STATE, decision="approve", role="lead", actor="ana", now=NOW
    )
    fields.update(overrides)
    return issue_token(keys, **fields)


def _verify(keys, token, **overrides):
    fields = dict(run_id="run-1", path="steps[2]", state_hash=STATE, used=set(), now=NOW + 60)
    fields.update(overrides)
    return verify_token(keys, token, **fields)


# --- canonical hash and roles -----------------------------------------------------------


def test_hash_ignores_key_order_and_is_sha256_hex():
    a = canonical_hash({"b": [1, {"y": 2, "x": "é"}], "a": None})
    b = canonical_hash({"a": None, "b": [1, {"x": "é", "y": 2}]})
    assert a == b
    assert len(a) == 64 and int(a, 16) >= 0
    assert canonical_hash({"a": 1}) != canonical_hash({"a": "1"})


def test_hash_is_pinned():
    # The exact bytes hashed are '{"a":[1,2],"b":"é"}' in UTF-8; tokens issued before an
    # upgrade must still match, so this value never changes.
    assert canonical_hash({"b": "é", "a": [1, 2]}) == hashlib.sha256('{"a":[1,2],"b":"é"}'.encode("utf-8")).hexdigest()
    assert canonical_hash({"b": "é", "a": [1, 2]}) == "d902c5ef87c42c33059e8d7b7aa30485809a5c0ff84b8d0d285616d5b03f23ea"


@pytest.mark.parametrize(
    "role, required, expected",
    [
        ("anyone", [], True),
        ("Lead", ["lead", "security"], True),
        ("  SECURITY ", ["lead", "security"], True),
        ("lead", [" Lead "], True),
        ("dev", ["lead", "security"], False),
        ("", ["lead"], False),
        ("   ", ["  "], False),
    ],
)
def test_releases(role, required, expected):
    assert releases(role, required) is expected


# --- tokens -----------------------------------------------------------------------------


def test_token_round_trip(keys):
    token = _token(keys, decision="request-changes", role="security", actor="Zoë")
    assert token.startswith("cat1.") and token.count(".") == 2
    claims = _verify(keys, token)
    assert isinstance(claims, TokenClaims)
    assert (claims.run_id, claims.path, claims.state_hash) == ("run-1", "steps[2]", STATE)
    assert (claims.decision, claims.role, claims.actor) == ("request-changes", "security", "Zoë")
    assert claims.issued == NOW and claims.expires == NOW + 86400
    assert len(claims.nonce) >= 16


def test_each_token_has_its_own_nonce(keys):
    first, second = _verify(keys, _token(keys)), _verify(keys, _token(keys))
    assert first.nonce != second.nonce


def test_spent_token_is_refused(keys):
    token = _token(keys)
    used = {_verify(keys, token).nonce}  # what the caller stores in the snapshot
    with pytest.raises(TokenError, match="already used"):
        _verify(keys, token, used=used)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "cat1",
        "cat1.abc",
        "cat2.e30.AAAA",
        "cat1.e30.AAAA",
        "cat1.e30.!!!!",
        "cat1.e30." + "A" * 43 + ".x",
        "x" * 10_000,
    ],
)
def test_malformed_token(keys, token):
    with pytest.raises(TokenError, match="malformed") as caught:
        _verify(keys, token)
    assert caught.value.help


def test_tampered_payload_is_refused(keys):
    prefix, payload, mac = _token(keys).split(".")
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data["role"] = "admin"
    forged = base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()
    with pytest.raises(TokenError, match="signature"):
        _verify(keys, f"{prefix}.{forged}.{mac}")


def test_token_from_another_key_is_refused(keys, tmp_path):
    other = ApprovalKeys(tmp_path / "elsewhere", environ={})
    with pytest.raises(TokenError, match="signature"):
        _verify(keys, _token(other))


def test_expired_token(keys):
    token = _token(keys, ttl_seconds=600)
    _verify(keys, token, now=NOW + 599)
    with pytest.raises(TokenError, match="expired at 2023-11-14 22:23:20 UTC"):
        _verify(keys, token, now=NOW + 600)


@pytest.mark.parametrize(
    "where, message",
    [
        ({"run_id": "run-2"}, "for run run-1, not run-2"),
        ({"path": "steps[3]"}, "for step steps\\[2\\], not steps\\[3\\]"),
    ],
)
def test_token_bound_to_run_and_step(keys, where, message):
    with pytest.raises(TokenError, match=message):
        _verify(keys, _token(keys), **where)


def test_state_changed_since_issue(keys):
    with pytest.raises(TokenError, match="the run changed"):
        _verify(keys, _token(keys), state_hash=canonical_hash({"steps": {"spec": "edited"}}))


def test_unknown_decision_cannot_be_issued(keys):
    with pytest.raises(TokenError, match="unknown decision"):
        _token(keys, decision="merge")


# --- the key ----------------------------------------------------------------------------


@posix_only
def test_key_file_created_private_and_reused(tmp_path):
    first = ApprovalKeys(tmp_path / "runs", environ={})
    token = _token(first)
    path = tmp_path / "runs" / "approval.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(path.read_bytes()) == 32
    again = ApprovalKeys(tmp_path / "runs", environ={})
    assert again.key() == first.key()
    assert _verify(again, token).actor == "ana"


@posix_only
def test_key_file_readable_by_others_is_refused(tmp_path):
    ApprovalKeys(tmp_path, environ={}).key()
    (tmp_path / "approval.key").chmod(0o644)
    with pytest.raises(ApprovalKeyError, match="open to other users \\(mode 0644\\)") as caught:
        ApprovalKeys(tmp_path, environ={}).key()
    assert "chmod 600" in caught.value.help


def test_damaged_key_file_is_refused(tmp_path):
    (tmp_path / "approval.key").write_bytes(b"short")
    if os.name != "nt":
        (tmp_path / "approval.key").chmod(0o600)
    with pytest.raises(ApprovalKeyError, match="damaged"):
        ApprovalKeys(tmp_path, environ={}).key()


def test_env_key_wins_and_writes_no_file(tmp_path):
    keys = ApprovalKeys(tmp_path, environ={KEY_ENV: HEX_KEY})
    assert keys.key() == bytes.fromhex(HEX_KEY)
    assert keys.source == KEY_ENV
    assert not (tmp_path / "approval.key").exists()
    # Another process with the same key accepts the token.
    token = _token(keys)
    assert _verify(ApprovalKeys(tmp_path / "other", environ={KEY_ENV: HEX_KEY}), token).role == "lead"


def test_a_run_key_kept_outside_the_state_directory_gives_the_key_and_writes_no_file(tmp_path):
    # A key file in the state directory could be read by any program a step runs.
    keys = ApprovalKeys(tmp_path, environ={}, run_secret=b"r" * 32)
    token = _token(keys)
    assert not (tmp_path / "approval.key").exists() and keys.source == "the run key"
    assert _verify(ApprovalKeys(tmp_path / "other", environ={}, run_secret=b"r" * 32), token).role == "lead"
    with pytest.raises(TokenError):
        _verify(ApprovalKeys(tmp_path, environ={}, run_secret=b"s" * 32), token)


def test_env_key_from_the_process_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, HEX_KEY)
    assert ApprovalKeys(tmp_path).key() == bytes.fromhex(HEX_KEY)


@pytest.mark.parametrize("value, message", [("not hex", "not a hexadecimal"), ("abcd", "at least 16")])
def test_bad_env_key(tmp_path, value, message):
    with pytest.raises(ApprovalKeyError, match=message):
        ApprovalKeys(tmp_path, environ={KEY_ENV: value}).key()


def test_genuine_token_of_another_format_is_refused(keys):
    payload = base64.urlsafe_b64encode(json.dumps({"v": 2, "run_id": "run-1"}).encode()).rstrip(b"=").decode()
    signed = f"cat1.{payload}"
    mac = hmac.new(keys.key(), signed.encode(), hashlib.sha256).digest()
    token = f"{signed}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
    with pytest.raises(TokenError, match="not understood"):
        _verify(keys, token)
