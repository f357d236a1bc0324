"""Pre-flight of who may approve: a playbook's owner and reviewer roles against the settings.

FR-3.13 asks a run to check roles before it starts; `catalyst run` runs the same checks as
`catalyst check`, so this one check serves both. It reports (each only when the setting it
compares with is set): a role the settings' `roles` do not list (C826), a required reviewer
role nobody in `approvers` holds, so the playbook's checkpoints could never be released
(C827), and, with `signed-approvals`, a required role no one could sign for (C828).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from typing import TYPE_CHECKING

from catalyst_dsl.checks.library_view import LibraryView, ProjectFacts
from catalyst_dsl.diagnostics.ids import ROLE_WITHOUT_APPROVER, UNKNOWN_ROLE, UNSIGNABLE_APPROVAL
from catalyst_dsl.diagnostics.model import DiagnosticSink

if TYPE_CHECKING:
    from catalyst_dsl.ir.roles import Approvers


def check_roles(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    config = library.project.config
    if not (config.roles or config.approvers or config.signed_approvals):
        return  # nothing to compare a playbook's roles with, as in most projects
    # Imported past that return: a check of a project without roles imports no more.
    from catalyst_dsl.ir.roles import Approvers, role_key

    approvers = Approvers(config.approvers)
    known = {role_key(r) for r in config.roles}
    for path in files:
        playbook = library.compiled(path).playbook
        if playbook is None:
            continue
        named = [("owner", playbook.owner)] if playbook.owner else []
        named += [("required reviewer", r) for r in playbook.reviewers.required]
        named += [("optional reviewer", r) for r in playbook.reviewers.optional]
        for what, role in named:
            if config.roles and role_key(role) not in known:
                sink.report(
                    UNKNOWN_ROLE,
                    f"the {what} role '{role}' is not one of the project's roles ({', '.join(config.roles)})",
                    playbook.span,
                    help=f"name one of the roles listed under `roles` in the settings, or add '{role}' there",
                )
        required = list(playbook.reviewers.required)
        if not required or not (config.approvers or config.signed_approvals):
            continue
        if approvers.configured:
            for role in required:
                if not approvers.holders(role):
                    sink.report(
                        ROLE_WITHOUT_APPROVER,
                        f"no approver holds the required reviewer role '{role}', so no approval can release "
                        "this playbook's checkpoints",
                        playbook.span,
                        help=f"give '{role}' to someone under `approvers` in the settings",
                    )
        if config.signed_approvals:
            signers = library.project.resolve(config.allowed_signers)
            problem = _unsigned(library.facts, signers, config.allowed_signers, approvers, required)
            if problem is not None:
                sink.report(
                    UNSIGNABLE_APPROVAL, f"signed approvals are on, but {problem[0]}", playbook.span, help=problem[1]
                )


def _unsigned(
    facts: ProjectFacts, signers_file: Path, shown: str, approvers: Approvers, required: list[str]
) -> tuple[str, str] | None:
    """Why no signed approval could release a pause needing one of `required`, or None."""
    if not approvers.configured:
        return (
            "no `approvers` are configured, so a signature names nobody who holds a role",
            "map approvers to roles under `approvers` in the settings",
        )
    try:
        lines = facts.read_bytes(signers_file).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return (
            f"the allowed-signers file {shown} cannot be read",
            f"commit {shown} with a line per approver key (`ana@example.com ssh-ed25519 AAAA…`), or set "
            "`allowed-signers`",
        )
    principals = [
        p for line in lines if line.strip() and not line.lstrip().startswith("#") for p in line.split()[0].split(",")
    ]
    for role in required:
        holders = approvers.holders(role)
        if holders and not any(fnmatch.fnmatchcase(name, p.casefold()) for name in holders for p in principals):
            return (
                f"{shown} holds no key for anyone holding the required reviewer role '{role}' ({', '.join(holders)})",
                f"add the SSH public key of one of them to {shown}",
            )
    return None
