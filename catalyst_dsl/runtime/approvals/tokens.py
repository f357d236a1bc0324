"""Approvals: who may release a checkpoint, and signed tokens for approvals from outside.

A person at the terminal or `catalyst approve` records an approval directly. An approval
that arrives from outside (a webhook, a pull-request review) comes as a token instead:
signed with HMAC-SHA256 under a key only this machine holds, bound to one run, one step
and a canonical hash of the run's state, valid until it expires, and usable once.

Single use needs memory across processes, so it is the caller's: after `verify_token`
accepts a token, store `claims.nonce` (the session appends it to the ledger of spent
approvals in `approvers.py`, which a rolled-back snapshot cannot undo, and keeps it in the
snapshot) and pass the stored nonces as `used` next time. A nonce may be forgotten once
`claims.expires` has passed: an expired token is refused anyway.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Collection, Mapping, Sequence

from catalyst_dsl.ir.roles import role_key
from catalyst_dsl._internal import records

#: What an outside approval can say (docs/running.md, Checkpoints and approvals): `approve` releases the
#: checkpoint, `request-changes` goes to the step's error policy, `comment` is recorded.
DECISIONS = ("approve", "request-changes", "comment")

KEY_FILE = "approval.key"
KEY_ENV = "CATALYST_APPROVAL_KEY"
KEY_BYTES = 32
#: A key from the environment shorter than this is refused (128 bits).
MIN_ENV_KEY_BYTES = 16

TOKEN_PREFIX = "cat1"
TOKEN_VERSION = 1
#: Longer than any token we issue by far; refusing bigger input early bounds the work.
MAX_TOKEN_CHARS = 8192

_B64URL = re.compile(r"[A-Za-z0-9_-]+")
_NEW_TOKEN = "ask for a new approval token"


def canonical_hash(value: Any) -> str:
    """The sha256 hex digest of `value` as canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def releases(role: str, required: Sequence[str]) -> bool:
    """Whether an approval given as `role` releases a checkpoint requiring `required`.

    No required roles means anyone may approve. Otherwise the role must be one of them,
    compared without case and surrounding spaces; a blank role never matches. An
    approval that does not release is still recorded by the caller.
    """
    if not required:
        return True
    wanted = role_key(role)
    return bool(wanted) and any(role_key(r) == wanted for r in required)


class TokenError(ValueError):
    """An approval token (or the key behind it) cannot be accepted; `help` says what to do."""

    def __init__(self, message: str, help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.help = help


class ApprovalKeyError(TokenError):
    """The signing key is missing, damaged or exposed: a setup problem, not a bad token."""


@records.record
class TokenClaims:
    """What a verified token says. `nonce` is what the caller stores to spend it."""

    run_id: str
    path: str
    state_hash: str
    decision: str
    role: str
    actor: str
    issued: int  # seconds since the epoch, UTC
    expires: int  # seconds since the epoch, UTC
    nonce: str


class ApprovalKeys:
    """The HMAC key: `CATALYST_APPROVAL_KEY` (hex) when set; else derived from the run key
    when that is kept outside the state directory (`run_secret`); else `state_dir/approval.key`.

    Programs of a run may read any file their user can (confinement limits writes only),
    the state directory included, so a key kept there would let one mint tokens; the run
    key of the user's config directory is never handed to programs by the environment.
    The key file is made on first use (32 random bytes, mode 0600, never overwritten)
    and refused when other users may read or write it. The key is read once.
    """

    def __init__(
        self,
        state_dir: str | os.PathLike[str],
        *,
        environ: Mapping[str, str] | None = None,
        run_secret: bytes | None = None,
    ) -> None:
        self.path = Path(state_dir) / KEY_FILE
        self._environ = os.environ if environ is None else environ
        self._run_secret = run_secret
        self._key: bytes | None = None

    @property
    def source(self) -> str:
        """Where the key comes from, for messages."""
        if self._environ.get(KEY_ENV):
            return KEY_ENV
        return "the run key" if self._run_secret is not None else str(self.path)

    def key(self) -> bytes:
        if self._key is None:
            text = self._environ.get(KEY_ENV)
            if text:
                self._key = _env_key(text)
            elif self._run_secret is not None:
                self._key = hmac.new(self._run_secret, b"catalyst approval tokens v1", hashlib.sha256).digest()
            else:
                self._key = self._file_key()
        return self._key

    def _file_key(self) -> bytes:
        try:
            return self._read()
        except FileNotFoundError:
            pass
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        except FileExistsError:
            # Another process made it between our read and our create: use theirs.
            return self._read()
        except OSError as exc:
            raise ApprovalKeyError(
                f"cannot create the approval key {self.path}: {exc.strerror or exc}",
                f"make {self.path.parent} writable, or set {KEY_ENV}",
            ) from None
        key = secrets.token_bytes(KEY_BYTES)
        try:
            try:
                os.write(fd, key)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            self.path.unlink(missing_ok=True)  # a half-written key would be refused forever
            raise ApprovalKeyError(
                f"cannot write the approval key {self.path}: {exc.strerror or exc}",
                f"free space in {self.path.parent}, or set {KEY_ENV}",
            ) from None
        return key

    def _read(self) -> bytes:
        """The key in the file; FileNotFoundError when there is none yet."""
        # A creator writes the key in one call right after making the file; a reader
        # that meets the empty file in between waits for it briefly.
        for _ in range(20):
            data = self._read_once()
            if data:
                break
            time.sleep(0.01)
        if len(data) != KEY_BYTES:
            raise ApprovalKeyError(
                f"the approval key {self.path} is damaged: it holds {len(data)} bytes, not {KEY_BYTES}",
                "delete it to make a new key (tokens issued with the old key stop working)",
            )
        return data

    def _read_once(self) -> bytes:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                self._check_private(os.fstat(fd).st_mode)
                return os.read(fd, KEY_BYTES + 1)
            finally:
                os.close(fd)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise ApprovalKeyError(
                f"cannot read the approval key {self.path}: {exc.strerror or exc}",
                f"give this user access to it, or set {KEY_ENV}",
            ) from None

    def _check_private(self, mode: int) -> None:
        if os.name == "nt":  # POSIX permission bits mean nothing there
            return
        if mode & 0o077:
            raise ApprovalKeyError(
                f"the approval key {self.path} is open to other users (mode {mode & 0o777:04o}); it is not used",
                f"run `chmod 600 {self.path}`, or delete it to make a new key",
            )


def _env_key(text: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        raise ApprovalKeyError(
            f"{KEY_ENV} is not a hexadecimal string",
            "set it to random hex, e.g. the output of `python -c \"import secrets; print(secrets.token_hex(32))\"`",
        ) from None
    if len(key) < MIN_ENV_KEY_BYTES:
        raise ApprovalKeyError(
            f"{KEY_ENV} holds {len(key)} bytes; at least {MIN_ENV_KEY_BYTES} are needed",
            "use 32 random bytes (64 hex digits)",
        )
    return key


def _epoch(now: float | datetime | None) -> float:
    if now is None:
        return time.time()
    if isinstance(now, datetime):
        return now.timestamp()
    return float(now)


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if not _B64URL.fullmatch(text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, signed: str) -> bytes:
    return hmac.new(key, signed.encode("ascii"), hashlib.sha256).digest()


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def issue_token(
    keys: ApprovalKeys,
    *,
    run_id: str,
    path: str,
    state_hash: str,
    decision: str,
    role: str,
    actor: str,
    ttl_seconds: int = 86400,
    now: float | datetime | None = None,
) -> str:
    """A signed token saying `actor`, as `role`, made `decision` on step `path` of `run_id`."""
    if decision not in DECISIONS:
        raise TokenError(f"unknown decision {decision!r}", f"use one of: {', '.join(DECISIONS)}")
    for name, value in (
        ("run_id", run_id),
        ("path", path),
        ("state_hash", state_hash),
        ("role", role),
        ("actor", actor),
    ):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if ttl_seconds <= 0:
        raise TokenError(f"a token must live some time; ttl_seconds is {ttl_seconds}")
    issued = int(_epoch(now))
    claims = TokenClaims(
        run_id=run_id,
        path=path,
        state_hash=state_hash,
        decision=decision,
        role=role,
        actor=actor,
        issued=issued,
        expires=issued + int(ttl_seconds),
        nonce=secrets.token_urlsafe(16),
    )
    payload = {"v": TOKEN_VERSION, **records.asdict(claims)}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    signed = f"{TOKEN_PREFIX}.{_b64encode(text.encode('utf-8'))}"
    return f"{signed}.{_b64encode(_mac(keys.key(), signed))}"


def verify_token(
    keys: ApprovalKeys,
    token: str,
    *,
    run_id: str,
    path: str,
    state_hash: str,
    used: Collection[str],
    now: float | datetime | None = None,
) -> TokenClaims:
    """The claims of `token` if it is genuine, unspent, unexpired and meant for this step now.

    Raises `TokenError` saying why not. The caller spends the token by storing
    `claims.nonce` where the next call's `used` comes from.
    """
    signed, mac = _split(token)
    # The signature is checked before anything in the payload is believed or even parsed.
    if not hmac.compare_digest(mac, _mac(keys.key(), signed)):
        raise TokenError(
            "the approval token's signature does not match",
            f"the token was altered or signed with another key than {keys.source}; {_NEW_TOKEN}",
        )
    claims = _claims(signed)
    if claims.run_id != run_id:
        raise TokenError(
            f"the approval token is for run {claims.run_id}, not {run_id}", "use the token issued for this run"
        )
    if claims.path != path:
        raise TokenError(
            f"the approval token is for step {claims.path}, not {path}", "use the token issued for this step"
        )
    if claims.nonce in used:
        raise TokenError("the approval token was already used", f"each token approves once; {_NEW_TOKEN}")
    moment = _epoch(now)
    if moment >= claims.expires:
        raise TokenError(f"the approval token expired at {_when(claims.expires)}", _NEW_TOKEN)
    if claims.state_hash != state_hash:
        raise TokenError(
            "the run changed since the approval token was issued",
            f"the approval was given for another state of the run; review it again and {_NEW_TOKEN}",
        )
    return claims


def _split(token: object) -> tuple[str, bytes]:
    malformed = TokenError(
        "the approval token is malformed",
        f"pass the whole token, {TOKEN_PREFIX}.<payload>.<signature>, as it was issued",
    )
    if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
        raise malformed
    parts = token.strip().split(".")
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX:
        raise malformed
    try:
        mac = _b64decode(parts[2])
    except (ValueError, binascii.Error):
        raise malformed from None
    if len(mac) != hashlib.sha256().digest_size:
        raise malformed
    return f"{parts[0]}.{parts[1]}", mac


_CLAIM_TYPES = {f.name: (int if f.name in ("issued", "expires") else str) for f in records.fields(TokenClaims)}


def _claims(signed: str) -> TokenClaims:
    # Signed by our key, so this only fails for a token of another format version or a bug.
    malformed = TokenError(
        "the approval token's content is not understood", f"it may come from another version of catalyst; {_NEW_TOKEN}"
    )
    try:
        payload = json.loads(_b64decode(signed.split(".")[1]).decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise malformed from None
    if not isinstance(payload, dict) or payload.pop("v", None) != TOKEN_VERSION or set(payload) != set(_CLAIM_TYPES):
        raise malformed
    for name, kind in _CLAIM_TYPES.items():
        if type(payload[name]) is not kind:
            raise malformed
    if payload["decision"] not in DECISIONS:
        raise malformed
    return TokenClaims(**payload)
