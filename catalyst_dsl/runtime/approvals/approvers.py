"""Approvals' proof: the text an approver signs, SSH-signed approvals, and the ledger of spent ones.

`approvers` in the settings maps a person to the roles they hold (`ir.roles.Approvers`).
Without it a role is whatever the approver says (the old behaviour, documented as
unverified); with it an approval releases a pause only when its approver holds the role.
A name alone is still only a claim of whoever types it, so `signed-approvals = true` asks
for proof: the approver signs a canonical text with their SSH key (`ssh-keygen -Y sign`),
verified against the project's allowed-signers file (`ssh-keygen -Y verify`), the way git
verifies SSH-signed commits. The signed text names the run, the step, the role, the
approver, the decision, the state the approval binds to and a nonce, so a signature
releases that one pause once and nothing else.

Single use must survive a snapshot put back from a backup, so spent nonces (of tokens and
of signatures) are appended to a ledger beside the snapshots, never inside them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from catalyst_dsl._internal.lazy_pattern import LazyPattern

if TYPE_CHECKING:
    import subprocess

#: The SSH signature namespace: a signature made for git or for another tool is not an approval.
NAMESPACE = "catalyst-approval"
TEXT_HEADER = "catalyst approval v1"
LEDGER_FILE = "spent-approvals"

_SSH_TIMEOUT = 60


# Compiled when an approval is first read or written, not by every run that imports this.
_one_word = LazyPattern(r"[^\s\x00-\x1f\x7f]+")
_one_line = LazyPattern(r"[^\s\x00-\x1f\x7f]([^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f])?")


class ApprovalRefused(ValueError):
    """An approval that cannot count; `help` says what to do."""

    def __init__(self, message: str, help: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.help = help


def one_line(name: str, value: str) -> str:
    """`value` when it is one line of text; ApprovalRefused when it is empty, padded with
    spaces or holds a control character. A value holding a newline could forge the line
    after it, in the signed text or in the audit trail `runs show` prints."""
    if not _one_line.fullmatch(value):
        raise ApprovalRefused(
            f"the approval's {name} {value!r} is empty, padded with spaces or holds control characters",
            f"give the {name} as one line of text",
        )
    return value


def approval_text(
    *, run_id: str, path: str, role: str, approver: str, decision: str, state_hash: str, nonce: str
) -> str:
    """The exact text an approver signs: one `name: value` line each, in this order."""
    fields = (
        ("run", run_id),
        ("step", path),
        ("role", role),
        ("approver", approver),
        ("decision", decision),
        ("state", state_hash),
        ("nonce", nonce),
    )
    for name, value in fields:
        one_line(name, value)
    return TEXT_HEADER + "\n" + "".join(f"{name}: {value}\n" for name, value in fields)


def _ssh_keygen() -> str:
    program = shutil.which("ssh-keygen")
    if program is None:
        raise ApprovalRefused(
            "signed approvals need `ssh-keygen` (OpenSSH 8.2 or later), which is not on PATH",
            "install OpenSSH's client tools",
        )
    return program


def sign(text: str, key_file: str | os.PathLike[str]) -> str:
    """`text` signed with the private key in `key_file` by `ssh-keygen -Y sign`: the armored signature."""
    if not Path(key_file).is_file():
        raise ApprovalRefused(
            f"there is no key file {key_file}", "pass your SSH private key, e.g. --sign-with ~/.ssh/id_ed25519"
        )
    # ssh-keygen reads the message on stdin and writes the signature to stdout; a passphrase
    # is asked on the terminal, not on stdin.
    done = _run([_ssh_keygen(), "-Y", "sign", "-f", str(key_file), "-n", NAMESPACE], text)
    if done.returncode != 0 or "BEGIN SSH SIGNATURE" not in done.stdout:
        raise ApprovalRefused(
            f"ssh-keygen could not sign with {key_file}: {_first_line(done.stderr)}",
            "check that the file is your SSH private key and its passphrase is right",
        )
    return done.stdout


def verify(text: str, signature: str, approver: str, allowed_signers: Path) -> None:
    """Nothing when `signature` is `approver`'s, by a key allowed-signers lists for them, over
    `text` in our namespace; ApprovalRefused otherwise."""
    if not allowed_signers.is_file():
        raise ApprovalRefused(
            f"the allowed-signers file {allowed_signers} does not exist, so no signature can be verified",
            "commit one line per approver key (`ana@example.com ssh-ed25519 AAAA…`), or set `allowed-signers`",
        )
    if "BEGIN SSH SIGNATURE" not in signature:
        raise ApprovalRefused(
            "the approval signature is not an SSH signature", "pass the file `ssh-keygen -Y sign` wrote (*.sig)"
        )
    with tempfile.TemporaryDirectory(prefix="catalyst-sig-") as scratch:
        sig_file = Path(scratch) / "approval.sig"
        sig_file.write_text(signature, encoding="utf-8")
        done = _run(
            [
                _ssh_keygen(),
                "-Y",
                "verify",
                "-f",
                str(allowed_signers),
                "-I",
                approver,
                "-n",
                NAMESPACE,
                "-s",
                str(sig_file),
            ],
            text,
        )
    if done.returncode != 0:
        reason = _first_line(done.stderr) or _first_line(done.stdout)
        raise ApprovalRefused(
            f"the approval signature is not valid for {approver}: {reason}",
            "sign the exact text of this approval (`catalyst runs approval-text`) "
            f"with a key that {allowed_signers} lists for {approver}",
        )


def _run(argv: list[str], stdin: str) -> subprocess.CompletedProcess:
    import subprocess  # only signed approvals run a program (ssh-keygen)

    try:
        return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=_SSH_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise ApprovalRefused(f"ssh-keygen did not finish within {_SSH_TIMEOUT} seconds", "run it again") from None
    except OSError as exc:
        raise ApprovalRefused(
            f"cannot start ssh-keygen: {exc.strerror or exc}", "install OpenSSH's client tools"
        ) from None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


class SpentLedger:
    """Nonces of approvals already used (tokens, signatures): one line each in
    `state_dir/spent-approvals`, only ever appended to and fsynced before the approval counts.

    It lives outside every snapshot, so putting an old snapshot back does not make a spent
    token or signature usable again. Callers check and spend under the state guard.
    """

    def __init__(self, state_dir: str | os.PathLike[str]) -> None:
        self.path = Path(state_dir) / LEDGER_FILE

    def spent(self) -> set[str]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return set()
        except (OSError, UnicodeDecodeError) as exc:
            # Unreadable means unknown: refusing every approval is the safe side.
            raise ApprovalRefused(
                f"cannot read the ledger of spent approvals {self.path}: {getattr(exc, 'strerror', None) or exc}",
                "give this user access to it; it must not be deleted or edited",
            ) from None
        return {line.split(" ", 1)[0] for line in text.splitlines() if line}

    def spend(self, nonce: str, run_id: str) -> None:
        if not _one_word.fullmatch(nonce):
            raise ValueError(f"not a nonce: {nonce!r}")
        created = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o600)
            try:
                os.write(fd, f"{nonce} {run_id}\n".encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            if created:
                from catalyst_dsl.runtime.state.durable import sync_directory

                sync_directory(self.path.parent)
        except OSError as exc:
            raise ApprovalRefused(
                f"cannot record the approval as spent in {self.path}: {exc.strerror or exc}",
                f"free space in or give write access to {self.path.parent}; nothing was approved",
            ) from None
