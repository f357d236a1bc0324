"""The effects gateway: the one place a run's side effects pass through.

Every file write, delete and program run asks the gateway, which checks the path
against the project, symlinks and the write grants of every playbook on the call
stack before anything happens (docs/running.md, Permissions at run time). The gateway then performs the
effect through its `Performer`; `--what-if` gives it one that records instead, so the
checks a plan shows are the checks a run makes.

Paths are resolved beneath a directory handle (`beneath.py`), at the check and again at
the effect, which proceeds only when both found the same path: a symbolic link swapped
in between cannot carry a write out of the project. `.git` and the state directory are
refused unless a grant names them (`paths/reserved.py`; the state directory never).
"""

from __future__ import annotations

import os
import posixpath
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator, Mapping, Protocol, Sequence

from catalyst_dsl.paths import reserved
from catalyst_dsl.paths.protocols import place
from catalyst_dsl.runtime.effects import beneath
from catalyst_dsl.runtime.effects.beneath import FileTooLarge  # noqa: F401  (readers catch it from here)
from catalyst_dsl.runtime.effects.beneath import is_within
from catalyst_dsl.runtime.effects.grants import (
    Grants,
    check_declared_write,
    denied,
    granted_patterns,
    refuse_control_characters,
)
from catalyst_dsl.runtime.effects.performing import ProcessOutcome, Target
from catalyst_dsl.runtime.errors import StepError

if TYPE_CHECKING:
    from catalyst_dsl.runtime.effects.confinement import Confiner, Confinement
    from catalyst_dsl.runtime.effects.process_groups import ProcessGroups
    from catalyst_dsl.runtime.effects.network import HttpRequest, HttpResponse


class Performer(Protocol):
    """Carries out effects the gateway has allowed. A what-if performer records them.

    Reads go through it too, so a what-if reads the files as its earlier steps would
    have left them.
    """

    def read_file(self, target: Target, limit: int) -> bytes | None: ...
    def listing(self, directory: Path) -> tuple[set[Path], set[Path]]: ...

    def write_file(self, target: Target, data: bytes, *, sync: bool = True) -> None: ...
    def delete_file(self, target: Target) -> bool: ...
    def script(self, target: Target, data: bytes) -> ContextManager[None]: ...
    def run_process(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float | None,
        on_output: Callable[[str, str], None],
        stdin: str | None,
        confinement: "Confinement | None" = None,
    ) -> ProcessOutcome: ...
    def send(self, request: "HttpRequest") -> "HttpResponse": ...


class EffectsGateway:
    """Checks and performs the effects of one playbook frame.

    `layers` are the grants of this playbook and, when it inherited permissions, of each
    caller: a write must be allowed by all of them (the intersection of section 7).
    """

    def __init__(
        self,
        root: Path,
        scratch: Path,
        layers: tuple[Grants, ...],
        performer: Performer,
        protected: tuple[str, ...] = (),
        resources: Path | None = None,
        guarded: tuple[str, ...] = (),
    ) -> None:
        self.root = root
        self.real_root = Path(os.path.realpath(root))
        self.scratch = scratch
        self.layers = layers
        self.performer = performer
        #: Project-relative directories no step may write (the state directory).
        self.protected = protected
        #: The directory `catalyst://` paths are read from (never written), or None.
        self.resources = resources
        #: Project-relative files that decide who may approve (the settings, the allowed
        #: signers): a value written there would choose approvers, so they are written only
        #: where every grant names them in plain text, like `.git`.
        self.guarded = guarded
        # Resolved once, like the root: containment is decided on real paths.
        self.real_scratch = Path(os.path.realpath(scratch))
        self.real_resources = Path(os.path.realpath(resources)) if resources is not None else None
        #: A what-if's files to read, by the path written: a simulated performer changes
        #: nothing on disk (its writes are an overlay, keyed by the placed path), so where a
        #: path leads stays where it led, and a plan places a path it reads again (a
        #: protocol path probed with each extension, then read) once. None in a run.
        self._sources: dict[str, Target] | None = {} if getattr(performer, "simulated", False) else None

    def child(self, grants: Grants, inherit: bool) -> "EffectsGateway":
        """The gateway of a called playbook: read-only unless it inherits (then intersected)."""
        layers = (*self.layers, grants) if inherit else (Grants(grants.owner, ()),)
        return EffectsGateway(
            self.root, self.scratch, layers, self.performer, self.protected, self.resources, self.guarded
        )

    # -- checks ------------------------------------------------------------------------------------

    def scratch_path(self, written: str) -> Path:
        """Where `temp://x` is: always inside the run's scratch space (`..` cannot leave it)."""
        return _under(self.scratch, written[len("temp://") :])

    def resource_path(self, written: str) -> Path:
        """Where `catalyst://x` is: inside the resources directory, which nothing leaves."""
        return self.resource(written).path

    def resource(self, written: str) -> Target:
        """`catalyst://x` to read: inside the resources directory, which nothing leaves."""
        if self.resources is None:
            raise StepError(
                "FileNotFound",
                f"cannot read '{written}': this project has no catalyst:// resources",
                guidance="set `resources-dir` in catalyst.toml to the project directory that holds them, or in "
                "~/.config/catalyst/config.toml for one outside the project "
                "(they are found without it in node_modules/@xerilium/catalyst)",
            )
        if "\0" in written:
            raise StepError("FileNotFound", f"cannot read {written!r}: the path holds a NUL character")
        base = self.real_resources
        if not base.is_dir():
            raise StepError(
                "FileNotFound",
                f"cannot read '{written}': the resources directory {base} is not a directory",
                guidance="point `resources-dir` in catalyst.toml at the directory that holds the resources",
            )
        inner = self._beneath(
            base,
            _clean_inner(written[len("catalyst://") :]),
            lambda reason: StepError(
                "PermissionDenied",
                f"cannot read '{written}': {_leads(reason, 'the resources directory')}",
                guidance="catalyst:// reads only inside `resources-dir`",
                metadata={"path": written},
            ),
        )
        return Target(written, base / inner, None, base=base, inner=inner)

    def source(self, written: str) -> Target:
        """A file to read: in the project, the run's scratch space or the resources, never
        elsewhere, and never in the state directory."""
        known = self._sources.get(written) if self._sources is not None else None
        if known is not None:
            return known
        target = self._source(written)
        if self._sources is not None:
            self._sources[written] = target
        return target

    def _source(self, written: str) -> Target:
        if "\0" in written:
            raise StepError("FileNotFound", f"cannot read {written!r}: the path holds a NUL character")
        if written.startswith("catalyst://"):
            return self.resource(written)
        placed = place(written)
        if placed.problem:
            raise StepError("FileNotFound", f"cannot read '{written}': {placed.problem}")
        if placed.scratch:
            return self._scratch_target(
                written,
                lambda reason: StepError(
                    "PermissionDenied",
                    f"cannot read '{written}': {_leads(reason, 'the scratch space')}",
                    metadata={"path": written},
                ),
                whole=True,
            )
        text = placed.path or written
        refuse = lambda reason: StepError(
            "PermissionDenied",
            f"cannot read '{written}': {_leads(reason, 'the project')}",  # noqa: E731
            guidance="playbooks read files inside the project root",
            metadata={"path": written},
        )
        if os.path.isabs(text):
            raise refuse("it is outside the project")
        inner = self._beneath(self.real_root, text, refuse)
        protected = self._protected(inner)
        if protected is not None:
            raise StepError(
                "PermissionDenied",
                f"cannot read '{written}': {protected}/ holds catalyst's run state, which steps never read",
                guidance="read the run's state with `catalyst runs show`",
                metadata={"path": written},
            )
        return Target(written, self.real_root / inner, placed.path or written, base=self.real_root, inner=inner)

    def target(self, written: str, *, follow_last: bool = True) -> Target:
        """Where a written path lands, or PermissionDenied: checked before any write.

        `follow_last`: a link at the end of the path is resolved (a write goes through it
        to its target) or taken as itself (a delete removes the link).
        """
        if "\0" in written:
            raise denied(
                f"cannot write {written!r}: the path holds a NUL character", "check how the path is built", written
            )
        if follow_last:  # a delete (follow_last=False) may remove such a name, left by a program
            refuse_control_characters(written, "cannot write")
        placed = place(written)
        if placed.problem:
            raise denied(
                f"cannot write '{written}': {placed.problem}",
                "write inside the project, or to temp:// for scratch files",
                written,
            )
        if placed.scratch:
            return self._scratch_target(
                written,
                lambda reason: denied(
                    f"cannot write '{written}': {_leads(reason, 'the scratch space')}",
                    "write a path inside temp://",
                    written,
                ),
                follow_last=follow_last,
            )
        text = placed.path or written
        if os.path.isabs(text) or text.startswith(("/", "\\")) or (len(text) > 1 and text[1] == ":"):
            raise denied(
                f"cannot write '{written}': absolute paths are refused",
                "write a path relative to the project root",
                written,
            )
        clean = posixpath.normpath(text.replace("\\", "/"))
        if clean == ".." or clean.startswith("../"):
            raise denied(
                f"cannot write '{written}': it leads outside the project",
                "remove the `..` segments; paths are relative to the project root",
                written,
            )
        if clean == ".":
            raise denied(
                f"cannot write '{written}': it names the project root", "name a file inside the project", written
            )
        inner = self._beneath(
            self.real_root,
            clean,
            lambda reason: denied(
                f"cannot write '{written}': {_leads(reason, 'the project')}",
                "write to a real path inside the project",
                written,
            ),
            follow_last=follow_last,
        )
        real = self.real_root / inner
        if self.real_resources is not None and is_within(real, self.real_resources):
            raise denied(
                f"cannot write '{written}': it is in the catalyst:// resources directory, which is read-only",
                "write somewhere else in the project",
                written,
            )
        protected = self._protected(inner)
        if protected is not None:
            raise denied(
                f"cannot write '{written}': {protected}/ holds catalyst's run state, which steps never write",
                "write somewhere else in the project",
                written,
            )
        for layer in self.layers:
            for candidate in {clean, inner}:
                if candidate in self.guarded and not layer.names_file(candidate):
                    raise denied(
                        f"cannot write '{written}': it decides who may approve,"
                        f" and {layer.owner} does not name it in allowedWritePaths",
                        f"a grant that names it in plain text (`{candidate}`) allows it; `**` does not",
                        written,
                    )
                if reserved.git_segment(candidate) is not None and not layer.names_git(candidate):
                    raise denied(
                        f"cannot write '{written}': it is inside a .git directory,"
                        f" which {layer.owner} does not name in allowedWritePaths",
                        "a grant that names it in plain text (such as `.git/hooks/**`) allows it; `**` does not",
                        written,
                    )
                if not layer.allows(candidate):
                    raise denied(
                        f"cannot write '{written}': {layer.describe()}",
                        "add the path to allowedWritePaths (or artifacts), or write elsewhere",
                        written,
                    )
        return Target(written, real, clean, base=self.real_root, inner=inner)

    def _scratch_target(
        self, written: str, refuse: Callable[[str], StepError], follow_last: bool = True, whole: bool = False
    ) -> Target:
        """A `temp://` path in the run's scratch space (`..` never leaves it). `whole`: the
        scratch space itself may be named (a read or a listing of `temp://`, never a write)."""
        inner = _clean_inner(written[len("temp://") :])
        if not inner and whole:
            return Target(written, self.real_scratch, None, base=self.real_scratch, inner="")
        if not inner:
            raise refuse("it names the scratch space itself, not a file in it; add a file name after temp://")
        inner = self._beneath(self.real_scratch, inner, refuse, follow_last=follow_last)
        return Target(written, self.real_scratch / inner, None, base=self.real_scratch, inner=inner)

    @staticmethod
    def _beneath(base: Path, inner: str, refuse: Callable[[str], StepError], follow_last: bool = True) -> str:
        try:
            return beneath.resolve(base, inner, follow_last=follow_last)
        except beneath.Escape as escape:
            raise refuse(escape.reason) from None

    def _named(self, base: Path) -> str:
        """How messages name a base directory."""
        if base == self.real_scratch:
            return "the scratch space"
        return "the resources directory" if base == self.real_resources else "the project"

    def _protected(self, inner: str) -> str | None:
        """The state directory `inner` lies in, or None. Names are compared without case:
        on a case-folding file system `.XE/RUNS` is the same directory."""
        folded = inner.casefold()
        for protected in self.protected:
            mark = protected.casefold()
            if folded == mark or folded.startswith(mark + "/"):
                return protected
        return None

    def check_pattern(self, written: str) -> None:
        """A shell-like step's declared `writes:` pattern: every path it names must be allowed."""
        check_declared_write(self.layers, written)

    def working_directory(self, written: str | None) -> Path:
        """Where a program starts. Not a grant: a program can reach any path its user can,
        and what the step may write is its `writes:`, checked against the project either
        way. So an absolute directory (`cwd: /tmp`) is taken as meant; a relative one is in
        the project (`..` may not climb out of it). Either must be an existing directory."""
        if not written:
            return self.root
        if "\0" in written:
            raise StepError("FileNotFound", f"the working directory {written!r} holds a NUL character")
        placed = place(written)
        if placed.scratch:
            path = self.scratch_path(written)
            path.mkdir(parents=True, exist_ok=True)
            return path
        if placed.problem:
            raise denied(
                f"the working directory '{written}' cannot be used: {placed.problem}",
                "start the program in the project or temp://",
                written,
            )
        text = placed.path or written
        if os.path.isabs(text):
            path = Path(text)
        else:
            clean = posixpath.normpath(text.replace("\\", "/"))
            if clean == ".." or clean.startswith("../"):
                raise denied(
                    f"the working directory '{written}' climbs out of the project",
                    "remove the `..` segments, or write the absolute directory you mean",
                    written,
                )
            path = self.root / clean
        if not path.is_dir():
            raise StepError(
                "FileNotFound",
                f"the working directory '{written}' does not exist or is not a directory",
                guidance="create it in an earlier step, or correct `cwd`",
            )
        return path

    # -- effects ------------------------------------------------------------------------------------

    def write_file(self, written: str, data: bytes, *, sync: bool = True) -> Target:
        """Write a file the grants allow. `sync=False` for one nothing reads after a power cut
        (a step's script, which only its own program reads and a resume writes anew)."""
        target = self.target(written)
        try:
            self.performer.write_file(target, data, sync=sync)
        except beneath.Escape as escape:
            raise denied(
                f"cannot write '{written}': {_leads(escape.reason, self._named(target.base))}",
                "write to a real path inside the project",
                written,
            ) from None
        return target

    def delete_file(self, written: str) -> bool:
        target = self.target(written, follow_last=False)
        try:
            return self.performer.delete_file(target)
        except beneath.Escape as escape:
            raise denied(
                f"cannot delete '{written}': {_leads(escape.reason, self._named(target.base))}",
                "delete a real path inside the project",
                written,
            ) from None

    @contextmanager
    def script(self, written: str, data: bytes) -> Iterator[Target]:
        """A step's script at `written` (a new name in the scratch space) for the length of
        the block, for its program to run; removed after. One write and one removal in the
        directory the check's path leads to, where `write_file` and `delete_file` walk the
        path twice each and write through a temporary file."""
        target = self.target(written)
        try:
            with self.performer.script(target, data):
                yield target
        except beneath.Escape as escape:
            raise denied(
                f"cannot write '{written}': {_leads(escape.reason, self._named(target.base))}",
                "write to a real path inside the project",
                written,
            ) from None

    def list_files(self, target: Target) -> list[str]:
        """The files below a directory `source` placed, relative to it (on disk: a what-if
        adds its own through `Performer.listing`)."""
        try:
            return beneath.files(target.base, target.inner)
        except beneath.Escape as escape:
            raise StepError(
                "PermissionDenied",
                f"cannot list '{target.written}': {_leads(escape.reason, self._named(target.base))}",
                guidance="list a real directory inside the project",
                metadata={"path": target.written},
            ) from None

    def read_file(self, target: Target, limit: int) -> bytes | None:
        """The bytes of a file `source` placed; None when it does not exist."""
        try:
            return self.performer.read_file(target, limit)
        except beneath.Escape as escape:
            raise StepError(
                "PermissionDenied",
                f"cannot read '{target.written}': {_leads(escape.reason, self._named(target.base))}",
                guidance="read a real path inside the project",
                metadata={"path": target.written},
            ) from None

    def run_process(
        self,
        argv: Sequence[str],
        *,
        declared_writes: Sequence[str],
        cwd: str | None,
        env: Mapping[str, str],
        timeout: float | None,
        on_output: Callable[[str, str], None],
        stdin: str | None = None,
        confined: bool = True,
    ) -> ProcessOutcome:
        """Run a program once its declared writes pass the grants. `confined` programs (every
        step's program; not catalyst's own git calls, which must write `.git/`) may write
        only beneath those writes, scratch and temp (`confinement/`)."""
        for pattern in declared_writes:
            self.check_pattern(pattern)
        confinement = self.confinement(declared_writes) if confined else None
        if confinement is not None:
            confinement.refuse_links()
        return self.performer.run_process(
            argv,
            cwd=self.working_directory(cwd),
            env=env,
            timeout=timeout,
            on_output=on_output,
            stdin=stdin,
            confinement=confinement,
        )

    def confinement(self, declared_writes: Sequence[str]) -> "Confinement":
        """Where a program with these declared writes may write (`.git/`, the state directory
        and the resources directory never)."""
        from catalyst_dsl.runtime.effects.confinement import Confinement

        protected = list(self.protected)
        named = {posixpath.normpath(place(p).path or p) for p in declared_writes}
        files = [f for f in self.guarded if not (f in named and all(layer.names_file(f) for layer in self.layers))]
        if (
            self.real_resources is not None
            and is_within(self.real_resources, self.real_root)
            and self.real_resources != self.real_root
        ):
            protected.append(self.real_resources.relative_to(self.real_root).as_posix())
        return Confinement.of(self.root, self.scratch, declared_writes, protected, files)

    def granted_patterns(self) -> list[str]:
        """The write patterns of this frame's grants that every layer allows (`**` for a
        playbook without allowedWritePaths): what an AI agent granted writing tools may write."""
        return granted_patterns(self.layers)

    def send(self, request: "HttpRequest") -> "HttpResponse":
        """An HTTP request (the network effect): the performer sends it, or a what-if records it."""
        return self.performer.send(request)


def _leads(reason: str, where: str) -> str:
    """An Escape's reason with its base named."""
    return reason.replace("its base", where)


def _clean_inner(inner: str) -> str:
    """A protocol path's rest as a path below its base: `..` and leading slashes stay inside."""
    clean = posixpath.normpath("/" + inner.replace("\\", "/")).lstrip("/")
    return "" if clean == "." else clean


def _under(base: Path, inner: str) -> Path:
    """`inner` (a protocol path's rest) as a path below `base`: `..` and leading slashes stay inside."""
    clean = _clean_inner(inner)
    return base / clean if clean else base


class RealPerformer:
    """Performs effects for real: files beneath their base's handle (`beneath.py`),
    written atomically, and processes with timeouts. Raises beneath.Escape when a path
    no longer leads where the gateway checked.

    `confiner` confines programs to their `Confinement` (none: programs run unconfined,
    as in a what-if's reads); `groups` records the process groups a run has in flight.
    """

    def __init__(self, confiner: "Confiner | None" = None, groups: "ProcessGroups | None" = None) -> None:
        self.confiner = confiner
        self.groups = groups

    def read_file(self, target: Target, limit: int) -> bytes | None:
        """The file's bytes; None when it does not exist; FileTooLarge beyond `limit`."""
        return beneath.read(target.base, target.inner, limit)

    def listing(self, directory: Path) -> tuple[set[Path], set[Path]]:
        """Files added and removed under `directory` beyond what the disk shows: none here."""
        return set(), set()

    def write_file(self, target: Target, data: bytes, *, sync: bool = True) -> None:
        beneath.write(target.base, target.inner, data, sync=sync)

    def delete_file(self, target: Target) -> bool:
        return beneath.delete(target.base, target.inner)

    def script(self, target: Target, data: bytes) -> ContextManager[None]:
        return beneath.fresh(target.base, target.inner, data)

    def run_process(self, argv, *, cwd, env, timeout, on_output, stdin, confinement=None) -> ProcessOutcome:
        from contextlib import nullcontext

        from catalyst_dsl.runtime.effects.process import run_streaming

        # Its own temp folder (TMPDIR) and, in a namespace, its own /dev/shm: nothing a
        # program leaves there reaches the next step or outlives it.
        with confinement.temp_folder() if confinement is not None else nullcontext() as step_temp:
            ruleset = mounts = None
            if confinement is not None:
                env = {**env, **confinement.environment(step_temp)}
            try:
                if confinement is not None and self.confiner is not None:
                    private = sys.platform.startswith("linux") and self.confiner.private_mounts()
                    writable = confinement.writable_paths(step_temp, private_shm=private)
                    ruleset = self.confiner.ruleset(confinement, writable)
                    if private:
                        from catalyst_dsl.runtime.effects.confinement import landlock

                        mounts = confinement.mounts(
                            writable, landlock.handled_rights(self.confiner.abi) if ruleset is not None else None
                        )
                outcome = run_streaming(
                    argv,
                    cwd=cwd,
                    env=env,
                    timeout=timeout,
                    on_output=on_output,
                    stdin=stdin,
                    ruleset=ruleset,
                    groups=self.groups,
                    mounts=mounts,
                )
            finally:
                if ruleset is not None:
                    os.close(ruleset)
        if ruleset is not None and outcome.exit_code != 0 and not outcome.timed_out:
            # Imported for a failed program only: its patterns cost a run of programs that pass.
            from catalyst_dsl.runtime.effects.confinement.refusals import explain_refusal

            explain_refusal(outcome, confinement, cwd)
        return outcome

    def send(self, request):
        from catalyst_dsl.runtime.effects.network import send

        return send(request)
