"""Roles: how the roles a playbook names (its owner, its reviewers) compare, and the
`approvers` setting's table of who holds which.

The check of roles (checks/rules/roles.py) and the run's approvals (runtime/approvals/)
read the same table, so a check says no approver holds a role exactly when a run would
refuse every approval as it.
"""

from __future__ import annotations

from typing import Mapping, Sequence


def role_key(role: str) -> str:
    """A role as compared: without case and surrounding spaces."""
    return role.strip().casefold()


class Approvers:
    """The `approvers` setting: names (compared without case) and the roles each holds.

    Without it a role is whatever the approver says; with it an approval counts only when
    its approver holds the role.
    """

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        self._roles = {name.strip().casefold(): tuple(roles) for name, roles in table.items()}

    @property
    def configured(self) -> bool:
        return bool(self._roles)

    def roles_of(self, name: str) -> tuple[str, ...] | None:
        """The roles `name` holds, or None when the table does not name them."""
        return self._roles.get(name.strip().casefold())

    def holds(self, name: str, role: str) -> bool:
        """Whether `name` may approve as `role`; always True when no approvers are configured."""
        if not self.configured:
            return True
        held = self.roles_of(name)
        return held is not None and role_key(role) in {role_key(r) for r in held}

    def holders(self, role: str) -> list[str]:
        """The approvers holding `role`, for messages and checks."""
        return sorted(name for name, roles in self._roles.items() if role_key(role) in {role_key(r) for r in roles})

    def refusal(self, name: str, role: str) -> tuple[str, str]:
        """Why `name` may not approve as `role`, and who may: (message, help)."""
        held = self.roles_of(name)
        who = ", ".join(self.holders(role)) or "nobody"
        if held is None:
            return (
                f"{name} is not an approver (the `approvers` setting does not name them)",
                f"approve with --by NAME as one of the approvers holding {role}: {who}; or add {name} to `approvers`",
            )
        have = ", ".join(held) or "no role"
        return (
            f"{name} does not hold the role {role} (the `approvers` setting gives them: {have})",
            f"{role} is held by: {who}",
        )
