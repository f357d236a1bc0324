"""Errors a run can meet, as values error policies, `catch` blocks and the snapshot use.

`StepError` is a failure of the playbook's own making (a command failed, a file is
missing, a `throw`): it carries a PascalCase code that error policies and `catch`
clauses match. `RunAbort` ends the whole run with one of the documented exit codes; it
is never caught by a playbook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Protocol

    class LockHolder(Protocol):
        """Who holds a lock, as a conflict tells it (`state.locks.LockInfo`). A protocol, so
        that this module, which everything imports, imports nothing of the lock module."""

        resource: str

        def describe(self) -> str: ...


#: Exit codes, as docs/running.md lists them.
EXIT_OK = 0
EXIT_INVALID = 1  # the playbook or its inputs are invalid
EXIT_FAILED = 2  # a step failed
EXIT_STATE = 3  # a snapshot is corrupted or no longer fits the playbook
EXIT_PAUSED = 4  # waiting for approval
EXIT_CANCELLED = 5  # a person ended the run: `abort` at a checkpoint, or `catalyst cancel` of a live run
#: Ctrl-C, Ctrl-D at a prompt, or SIGTERM (128 + SIGINT, as a shell reports Ctrl-C).
EXIT_INTERRUPTED = 130
#: A mistake on the command line; 2 as click says it (the number a failed step also has).
EXIT_USAGE = 2


class StepError(Exception):
    """A step failed with a code a playbook can match (`catch`, `errorPolicy`)."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        guidance: str | None = None,
        metadata: Any = None,
        aliases: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        #: Other codes it also answers to in `catch` and `errorPolicy`: the names the original
        #: Catalyst engine gives the same failure, so real playbooks' handlers still match.
        self.aliases = aliases
        self.message = message
        self.guidance = guidance
        self.metadata = metadata
        #: Filled in by the interpreter: the step id it happened in, and that step's path.
        self.step: str | None = None
        self.path: str | None = None
        #: Failures of other parallel branches that ended with this one.
        self.also: tuple["StepError", ...] = ()
        #: The failing step's fingerprint, so a resume can tell the step changed.
        self.fingerprint: str | None = None

    def matches(self, code: str) -> bool:
        """Whether a `catch` or `errorPolicy` entry for `code` handles this error."""
        return code == self.code or code in self.aliases

    def as_value(self) -> dict[str, Any]:
        """What `$error` holds inside a catch block."""
        return {
            "code": self.code,
            "message": self.message,
            "guidance": self.guidance,
            "metadata": self.metadata,
            "step": self.step,
        }

    def as_record(self) -> dict[str, Any]:
        """Everything to raise it again on resume (`from_record`)."""
        return {**self.as_value(), "aliases": list(self.aliases), "path": self.path, "fingerprint": self.fingerprint}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "StepError":
        error = cls(
            str(record.get("code")),
            str(record.get("message")),
            guidance=record.get("guidance"),
            metadata=record.get("metadata"),
            aliases=tuple(record.get("aliases") or ()),
        )
        error.step, error.path, error.fingerprint = record.get("step"), record.get("path"), record.get("fingerprint")
        return error


class RunAbort(Exception):
    """The run cannot go on: exit with `exit_code`, printing `message` and `help`."""

    def __init__(self, exit_code: int, message: str, help: str | None = None, details: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.message = message
        self.help = help
        self.details = details


class LockConflict(Exception):
    """`resource` cannot be locked: `owner` holds it, or holds `owner.resource`, which
    overlaps it (runtime/state/locks.py). Here with the other errors, so that the command line
    can tell it without loading the lock module."""

    def __init__(
        self, resource: str, owner: LockHolder, example: str | None = None, message: str | None = None
    ) -> None:
        self.resource = resource
        self.owner = owner
        #: A path both globs match, when the conflict is an overlap of two path locks.
        self.example = example
        if message is None and owner.resource == resource:
            message = f"{resource} is locked by {owner.describe()}"
        elif message is None:
            also = f" (both match {example})" if example else ""
            message = f"{resource} overlaps {owner.resource}{also}, locked by {owner.describe()}"
        super().__init__(message)
