"""Secrets: where a run finds them (providers) and how it keeps them out of everything it prints (the masker).

A secret reaches a run as the value of an input declared `secret: true`, given on the
command line or found by a provider. From then on the `Masker` holds it, and every log
line, state snapshot and report passes through `Masker.mask` before it is written.
Snapshots and reports that must name a secret without showing it use
`secret_placeholder(name)`.
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from pathlib import Path
from typing import Mapping, Protocol, runtime_checkable
from urllib.parse import quote, quote_plus

from catalyst_dsl.runtime.values.quoting import escaped_forms

#: What a secret becomes in masked text.
MASK = "***"

#: Secrets at least this long are also masked in the forms a program turns them into:
#: base64 (`printf %s "$TOKEN" | base64`, with or without a newline after, or of longer
#: text holding it, as `user:secret`) and reversed (`rev`). Shorter ones would make masks
#: of ordinary text.
MIN_PROGRAM_FORM_LENGTH = 6


def secret_placeholder(name: str) -> str:
    """The stable stand-in for the secret input `name` in snapshots and reports."""
    return f"<secret:{name}>"


@runtime_checkable
class SecretProvider(Protocol):
    """A place secrets are looked up by key; None when it does not hold the key."""

    name: str

    def lookup(self, key: str) -> str | None: ...


class SecretFileError(ValueError):
    """A secrets file or directory that cannot be used, with what to do about it.

    The message never quotes the file's content: a malformed line may hold a secret.
    """

    def __init__(self, path: str | os.PathLike[str], problem: str, fix: str) -> None:
        super().__init__(f"{os.fspath(path)}: {problem}; {fix}")
        self.path = os.fspath(path)
        self.problem = problem
        self.fix = fix


class EnvSecretProvider:
    """Secrets in environment variables: the key `api-token` is `CATALYST_SECRET_API_TOKEN`.

    An empty variable counts as unset (`CATALYST_SECRET_X= catalyst run ...` clears it).
    """

    name = "env"

    def __init__(self, prefix: str = "CATALYST_SECRET_", environ: Mapping[str, str] | None = None) -> None:
        self.prefix = prefix
        # None: read os.environ at each lookup, so changes after start-up are seen.
        self._environ = environ

    def variable(self, key: str) -> str:
        """The environment variable that holds `key`."""
        return self.prefix + key.upper().replace("-", "_").replace(".", "_")

    def lookup(self, key: str) -> str | None:
        environ = os.environ if self._environ is None else self._environ
        return environ.get(self.variable(key)) or None


class FileSecretProvider:
    """Secrets in a `key=value` file or in a directory holding one file per key.

    The file form: one `key=value` per line; blank lines and lines starting with `#` are
    skipped; spaces around key and value are dropped, and one pair of matching quotes
    around the value is removed (to keep spaces at its ends). A duplicate key or a line
    without `=` is an error. The directory form (Docker and Kubernetes secrets): the file
    named after the key, its content without one trailing newline.

    Like ssh with its keys, a secret file readable by group or others is refused on POSIX
    systems (`check_mode=False` turns that off, for mounts whose modes cannot be changed).
    The file form is read once, here, so a bad file stops the run before it starts.
    """

    name = "file"

    def __init__(self, path: str | os.PathLike[str], *, check_mode: bool = True) -> None:
        self.path = Path(path)
        self.check_mode = check_mode
        self._values: dict[str, str] | None = None
        if not self.path.exists():
            raise SecretFileError(self.path, "no such secrets file or directory", "create it or pass the right path")
        if not self.path.is_dir():
            self._values = self._read_pairs(self.path)

    def lookup(self, key: str) -> str | None:
        if self._values is not None:
            return self._values.get(key)
        if not _is_plain_file_name(key):
            return None  # never let a key reach outside the directory
        path = self.path / key
        if not path.is_file():
            return None
        text = self._read(path)
        if text.endswith("\r\n"):
            return text[:-2]
        return text[:-1] if text.endswith("\n") else text

    def _read(self, path: Path) -> str:
        if self.check_mode:
            _refuse_shared(path)
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise SecretFileError(path, "is not UTF-8 text", "save the secret as UTF-8") from None
        except OSError as exc:
            raise SecretFileError(
                path, f"cannot be read ({exc.strerror})", "check the path and its permissions"
            ) from None

    def _read_pairs(self, path: Path) -> dict[str, str]:
        values: dict[str, str] = {}
        where: dict[str, int] = {}
        for number, line in enumerate(self._read(path).split("\n"), start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            key, sep, value = stripped.partition("=")
            key = key.strip()
            if not sep or not key:
                raise SecretFileError(
                    path, f"line {number} is not `key=value`", "write one `key=value` per line; comments start with #"
                )
            if key in values:
                raise SecretFileError(
                    path, f"the key '{key}' is set twice (lines {where[key]} and {number})", "keep one of them"
                )
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            values[key] = value
            where[key] = number
        return values


#: The service under which the OS keychain holds catalyst's secrets: `keyring set catalyst
#: github-token` stores the secret `github-token`. It is fixed, not a setting: a
#: repository may turn the keychain on, but cannot make a run read the user's other
#: services' passwords.
KEYRING_SERVICE = "catalyst"
#: How errors name the keychain (in the place of a secrets file's path).
KEYCHAIN = "the OS keychain"


class KeyringSecretProvider:
    """Secrets in the operating system's keychain (macOS Keychain, Windows Credential
    Locker, the Secret Service of GNOME or KDE), through the `keyring` library: the key is
    the entry's user name under the service `catalyst`.

    A keychain that cannot be used (the library not installed, no backend on this
    machine, a locked keychain the user would not unlock) is a SecretFileError with the
    fix, never a silent "not found": a secret the user keeps there must not turn into a
    missing input.
    """

    name = "keyring"

    def __init__(self, service: str = KEYRING_SERVICE) -> None:
        self.service = service
        try:
            import keyring
            import keyring.errors
        except ImportError:
            raise SecretFileError(
                KEYCHAIN,
                "the keyring library is not installed (secrets-keyring is on)",
                "install it with `python3 -m pip install 'catalyst-dsl[keyring]'`, or set secrets-keyring = false",
            ) from None
        self._keyring = keyring
        self._errors = keyring.errors

    def lookup(self, key: str) -> str | None:
        try:
            value = self._keyring.get_password(self.service, key)
        except self._errors.NoKeyringError:
            raise SecretFileError(
                KEYCHAIN,
                "this machine has none that the keyring library can use",
                "install a keychain service (or the keyrings.alt package), or set secrets-keyring = false",
            ) from None
        except self._errors.KeyringError as error:
            # The error's text comes from the backend and never holds the secret.
            raise SecretFileError(
                KEYCHAIN,
                f"it refused ({type(error).__name__}: {error})",
                "unlock the keychain, or give the secret with CATALYST_SECRET_<NAME>",
            ) from None
        return value or None


def _is_plain_file_name(key: str) -> bool:
    return bool(key) and key not in (".", "..") and "/" not in key and "\\" not in key and "\0" not in key


def _refuse_shared(path: Path) -> None:
    """Raise when `path` is readable (or writable) by group or others, on POSIX only."""
    if os.name != "posix":
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise SecretFileError(
            path,
            f"is accessible by group or others (mode {mode:04o}); secrets must be private",
            f"run `chmod 600 {path}`",
        )


class Masker:
    """Replaces every known secret, its JSON-escaped, URL-encoded and shell-escaped forms
    (runtime/values/quoting.py), and (for secrets of `MIN_PROGRAM_FORM_LENGTH` characters or more)
    its base64 forms (alone or inside longer encoded text, such as an HTTP Basic
    `user:secret`) and reversed form, with `***`.

    Where secrets overlap or touch in a text, their union becomes one `***`, so no part of
    either is left showing. Any non-empty string is a secret (also a short one: a short
    secret is still a secret, and masking too much beats leaking). One pass, never
    repeated, so a secret that contains `***` cannot make masking loop.
    """

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()
        # (search pattern, overlapping-match pattern), built when first needed after a change.
        self._patterns: tuple[re.Pattern[str], re.Pattern[str]] | None = None

    def __len__(self) -> int:
        return len(self._secrets)

    def add(self, value: object, *, as_text: bool = True) -> None:
        """Mask `value` from now on. Numbers are masked as their text; empty strings, None and booleans are ignored.

        `as_text=False`: only the forms a program makes of it (base64, reversed), for text
        whose secret parts are masked already where it is shown as it is (a template).
        """
        if value is None or isinstance(value, bool):
            return
        text = value if isinstance(value, str) else str(value)
        if not text:
            return
        forms: set[str] = set()
        if as_text:
            forms = {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1], *escaped_forms(text)}
            try:
                forms |= {quote(text, safe=""), quote_plus(text, safe="")}
            except UnicodeEncodeError:
                pass  # a lone surrogate (an undecodable environment byte) has no URL form
        if len(text) >= MIN_PROGRAM_FORM_LENGTH:
            forms |= _program_forms(text)
        if not forms:
            return
        with self._lock:
            if not forms <= self._secrets:
                self._secrets |= forms
                self._patterns = None

    def _compiled(self) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
        if not self._secrets:
            # None known yet (most runs, and every plan without a secret input): no lock to
            # take for each log line. A secret added meanwhile is one this call did not see
            # under the lock either.
            return None
        with self._lock:
            if self._patterns is None and self._secrets:
                # Longest first: at any position the alternation then takes the longest secret there.
                alternation = "|".join(re.escape(s) for s in sorted(self._secrets, key=lambda s: (-len(s), s)))
                self._patterns = (re.compile(alternation), re.compile(f"(?=({alternation}))"))
            return self._patterns

    def mask_text(self, text: str) -> str:
        patterns = self._compiled()
        return text if patterns is None else _masked_text(text, patterns)

    def mask(self, value: object, *, own: bool = False) -> object:
        """`value` with every secret masked: strings in dicts (keys too), lists and tuples, as new objects.

        A number whose text holds a secret becomes the masked text. `own`: the caller's
        own new containers, which no one else holds: with no secret to mask they are
        given back as they are rather than copied (a plan's steps, its shown configs).
        """
        # The patterns are taken once for the whole value (a plan's steps are thousands of
        # strings): one lock, and one set of secrets for all of it.
        patterns = self._compiled()
        if patterns is None:
            return value if own or type(value) in _SCALARS else _copied(value)
        return _masked(value, patterns)


#: Values `_copied` gives back as they are (exact types: a marked secret text is a str subclass).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _copied(value: object) -> object:
    """`value` with new containers, as `mask` gives them when there is nothing to mask."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copied(v) for v in value)
    return value


def _masked(value: object, patterns: tuple[re.Pattern[str], re.Pattern[str]]) -> object:
    if isinstance(value, str):
        return _masked_text(value, patterns)
    if isinstance(value, dict):
        return {_masked(k, patterns): _masked(v, patterns) for k, v in value.items()}
    if isinstance(value, list):
        masked = [_masked(v, patterns) for v in value]
        # Pieces too short to mask alone (a secret split into characters) are masked
        # together when their text, as a template shows a list, holds a secret.
        if masked == value and value and all(isinstance(v, str) for v in value):
            joined = ",".join(value)
            if _masked_text(joined, patterns) != joined:
                return [MASK]
        return masked
    if isinstance(value, tuple):
        return tuple(_masked(v, patterns) for v in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(value)
        masked = _masked_text(text, patterns)
        return value if masked == text else masked
    return value


def _masked_text(text: str, patterns: tuple[re.Pattern[str], re.Pattern[str]]) -> str:
    first = patterns[0].search(text)
    if first is None:
        return text
    # Every position where a secret starts, not only the non-overlapping matches, so
    # that overlapping secrets are covered entirely; the covered spans are merged.
    out: list[str] = []
    shown = 0  # text[:shown] is already handled
    start = end = -1
    for match in patterns[1].finditer(text, first.start()):
        s, e = match.start(1), match.end(1)
        if s <= end:
            end = max(end, e)
            continue
        if end >= 0:
            out.append(text[shown:start])
            out.append(MASK)
            shown = end
        start, end = s, e
    out.append(text[shown:start])
    out.append(MASK)
    out.append(text[end:])
    return "".join(out)


def _program_forms(text: str) -> set[str]:
    """The base64 (standard and URL-safe) and reversed forms of a secret (see MIN_PROGRAM_FORM_LENGTH)."""
    import base64  # when a secret is masked, not by every command that reads inputs

    data = text.encode("utf-8", "surrogatepass")
    encoded = {base64.b64encode(data), base64.b64encode(data + b"\n")}
    # Inside longer text (`user:secret` of HTTP Basic, `key=secret`) the secret starts at
    # any of the three offsets of a 3-byte group. For each, the whole groups it covers
    # encode the same whatever surrounds it; the one or two characters at either end
    # depend on the neighbours too, so they are not part of the form (and stay shown).
    for offset in range(3):
        whole = data[offset:]
        whole = whole[: len(whole) // 3 * 3]
        if whole:
            encoded.add(base64.b64encode(whole))
    forms = {text[::-1]}
    for form in encoded:
        forms |= {form.decode("ascii"), form.translate(_URL_SAFE).decode("ascii")}
    return forms


#: Standard base64 to its URL-safe alphabet (`-` and `_` for `+` and `/`).
_URL_SAFE = bytes.maketrans(b"+/", b"-_")
