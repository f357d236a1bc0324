"""The effects gateway: the one place a run's side effects pass through.

Every file write, delete and program run asks the gateway, which checks the path
against the project, symlinks and the write grants of every playbook on the call
stack before anything happens (LANGUAGE.md section 7). The gateway then performs the
effect through its `Performer`; `--what-if` gives it one that records instead, so the
checks a plan shows are the checks a run makes.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Sequence

import attrs

from catalyst_dsl.paths.globs import Glob, GlobError, classify
from catalyst_dsl.paths.protocols import place
from catalyst_dsl.runtime import durable
from catalyst_dsl.runtime.errors import StepError

if TYPE_CHECKING:
    from catalyst_dsl.runtime.confinement import Confiner, Confinement
    from catalyst_dsl.runtime.process_groups import ProcessGroups
    from catalyst_dsl.runtime.network import HttpRequest, HttpResponse


@attrs.frozen
class Grants:
    """What one playbook on the call stack lets its steps write.

    `patterns` None means anywhere in the project (a playbook without
    `allowedWritePaths`); an empty tuple means nothing (a child called without
    `inheritPermissions`).
    """

    owner: str
    patterns: tuple[Glob, ...] | None

    @classmethod
    def of(cls, owner: str, texts: Sequence[str] | None) -> "Grants":
        if texts is None:
            return cls(owner, None)
        globs = []
        for text in texts:
            try:
                globs.append(Glob.compile(place(text).path or text))
            except GlobError:
                continue  # reported by `catalyst check` (C812); a bad grant grants nothing
        return cls(owner, tuple(globs))

    def allows(self, relative: str) -> bool:
        return self.patterns is None or any(g.matches(relative) for g in self.patterns)

    def allows_pattern(self, pattern: Glob) -> bool:
        return self.patterns is None or (bool(self.patterns) and classify(self.patterns, pattern) == "inside")

    def describe(self) -> str:
        if self.patterns is None:
            return f"{self.owner} may write anywhere in the project"
        if not self.patterns:
            return f"{self.owner} may write nothing (called without inheritPermissions: true)"
        return f"{self.owner} may write {', '.join(g.text for g in self.patterns)}"


@attrs.frozen
class Target:
    """A checked write target: where it is on disk and how the playbook named it."""

    written: str
    path: Path
    #: Project-relative POSIX path, or None for the run's scratch space.
    relative: str | None


@attrs.frozen
class ProcessOutcome:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False


class FileTooLarge(OSError):
    """A file larger than a reader accepts."""


class Performer(Protocol):
    """Carries out effects the gateway has allowed. A what-if performer records them.

    Reads go through it too, so a what-if reads the files as its earlier steps would
    have left them.
    """

    def read_file(self, path: Path, limit: int) -> bytes | None: ...
    def listing(self, directory: Path) -> tuple[set[Path], set[Path]]: ...

    def write_file(self, target: Target, data: bytes) -> None: ...
    def delete_file(self, target: Target) -> bool: ...
    def run_process(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float | None,
                    on_output: Callable[[str, str], None], stdin: str | None,
                    confinement: "Confinement | None" = None) -> ProcessOutcome: ...
    def send(self, request: "HttpRequest") -> "HttpResponse": ...


def denied(message: str, help: str, written: str | None = None) -> StepError:
    """PermissionDenied; `metadata.path` names the path as the playbook wrote it."""
    return StepError("PermissionDenied", message, guidance=help, metadata={"path": written} if written is not None else None)


class EffectsGateway:
    """Checks and performs the effects of one playbook frame.

    `layers` are the grants of this playbook and, when it inherited permissions, of each
    caller: a write must be allowed by all of them (the intersection of section 7).
    """

    def __init__(self, root: Path, scratch: Path, layers: tuple[Grants, ...], performer: Performer, protected: tuple[str, ...] = (),
                 resources: Path | None = None) -> None:
        self.root = root
        self.real_root = Path(os.path.realpath(root))
        self.scratch = scratch
        self.layers = layers
        self.performer = performer
        #: Project-relative directories no step may write (the state directory).
        self.protected = protected
        #: The directory `catalyst://` paths are read from (never written), or None.
        self.resources = resources
        # Resolved once, like the root: containment is decided on real paths.
        self.real_scratch = Path(os.path.realpath(scratch))
        self.real_resources = Path(os.path.realpath(resources)) if resources is not None else None

    def child(self, grants: Grants, inherit: bool) -> "EffectsGateway":
        """The gateway of a called playbook: read-only unless it inherits (then intersected)."""
        layers = (*self.layers, grants) if inherit else (Grants(grants.owner, ()),)
        return EffectsGateway(self.root, self.scratch, layers, self.performer, self.protected, self.resources)

    # -- checks ------------------------------------------------------------------------------------

    def scratch_path(self, written: str) -> Path:
        """Where `temp://x` is: always inside the run's scratch space (`..` cannot leave it)."""
        return _under(self.scratch, written[len("temp://"):])

    def resource_path(self, written: str) -> Path:
        """Where `catalyst://x` is: inside the resources directory, which nothing leaves."""
        if self.resources is None:
            raise StepError("FileNotFound", f"cannot read '{written}': this project has no catalyst:// resources",
                            guidance="set `resources-dir` in catalyst.toml to the directory that holds them "
                                     "(they are found without it in node_modules/@xerilium/catalyst)")
        if "\0" in written:
            raise StepError("FileNotFound", f"cannot read {written!r}: the path holds a NUL character")
        base = self.real_resources
        if not base.is_dir():
            raise StepError("FileNotFound", f"cannot read '{written}': the resources directory {base} is not a directory",
                            guidance="point `resources-dir` in catalyst.toml at the directory that holds the resources")
        path = _under(base, written[len("catalyst://"):])
        if not is_within(Path(os.path.realpath(path)), base):
            raise StepError("PermissionDenied", f"cannot read '{written}': a symbolic link leads it outside the resources directory",
                            guidance="catalyst:// reads only inside `resources-dir`")
        return path

    def target(self, written: str) -> Target:
        """Where a written path lands, or PermissionDenied: checked before any write."""
        if "\0" in written:
            raise denied(f"cannot write {written!r}: the path holds a NUL character", "check how the path is built", written)
        placed = place(written)
        if placed.problem:
            raise denied(f"cannot write '{written}': {placed.problem}", "write inside the project, or to temp:// for scratch files", written)
        if placed.scratch:
            path = self.scratch_path(written)
            if path == self.scratch:
                raise denied(f"'{written}' names the scratch space itself, not a file in it", "add a file name after temp://", written)
            return Target(written, path, None)
        text = placed.path or written
        if os.path.isabs(text) or text.startswith(("/", "\\")) or (len(text) > 1 and text[1] == ":"):
            raise denied(f"cannot write '{written}': absolute paths are refused", "write a path relative to the project root", written)
        clean = posixpath.normpath(text.replace("\\", "/"))
        if clean == ".." or clean.startswith("../"):
            raise denied(f"cannot write '{written}': it leads outside the project", "remove the `..` segments; paths are relative to the project root", written)
        if clean == ".":
            raise denied(f"cannot write '{written}': it names the project root", "name a file inside the project", written)
        path = self.root / clean
        real = Path(os.path.realpath(path))
        if not is_within(real, self.real_root):
            raise denied(f"cannot write '{written}': a symbolic link leads it outside the project, to {real}", "write to a real path inside the project", written)
        if self.real_resources is not None and is_within(real, self.real_resources):
            raise denied(f"cannot write '{written}': it is in the catalyst:// resources directory, which is read-only",
                         "write somewhere else in the project", written)
        real_relative = real.relative_to(self.real_root).as_posix()
        for protected in self.protected:
            if real_relative == protected or real_relative.startswith(protected + "/"):
                raise denied(f"cannot write '{written}': {protected}/ holds catalyst's run state, which steps never write",
                             "write somewhere else in the project", written)
        for layer in self.layers:
            for candidate in {clean, real_relative}:
                if not layer.allows(candidate):
                    raise denied(f"cannot write '{written}': {layer.describe()}", "add the path to allowedWritePaths (or artifacts), or write elsewhere", written)
        return Target(written, path, clean)

    def check_pattern(self, written: str) -> None:
        """A shell-like step's declared `writes:` pattern: every path it names must be allowed."""
        placed = place(written)
        if placed.problem:
            raise denied(f"this step declares it writes '{written}': {placed.problem}", "declare paths inside the project", written)
        if placed.scratch:
            return
        try:
            glob = Glob.compile(placed.path or written)
        except GlobError as error:
            raise denied(f"this step declares it writes '{written}': {error.message}", "declare paths relative to the project root, without `..`", written) from None
        for layer in self.layers:
            if not layer.allows_pattern(glob):
                raise denied(f"this step declares it writes '{written}', but {layer.describe()}", "narrow the step's writes: or widen allowedWritePaths", written)

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
            raise denied(f"the working directory '{written}' cannot be used: {placed.problem}", "start the program in the project or temp://", written)
        text = placed.path or written
        if os.path.isabs(text):
            path = Path(text)
        else:
            clean = posixpath.normpath(text.replace("\\", "/"))
            if clean == ".." or clean.startswith("../"):
                raise denied(f"the working directory '{written}' climbs out of the project", "remove the `..` segments, or write the absolute directory you mean", written)
            path = self.root / clean
        if not path.is_dir():
            raise StepError("FileNotFound", f"the working directory '{written}' does not exist or is not a directory",
                            guidance="create it in an earlier step, or correct `cwd`")
        return path

    # -- effects ------------------------------------------------------------------------------------

    def write_file(self, written: str, data: bytes) -> Target:
        target = self.target(written)
        self.performer.write_file(target, data)
        return target

    def delete_file(self, written: str) -> bool:
        return self.performer.delete_file(self.target(written))

    def run_process(self, argv: Sequence[str], *, declared_writes: Sequence[str], cwd: str | None, env: Mapping[str, str],
                    timeout: float | None, on_output: Callable[[str, str], None], stdin: str | None = None,
                    confined: bool = True) -> ProcessOutcome:
        """Run a program once its declared writes pass the grants. `confined` programs (every
        step's program; not catalyst's own git calls, which must write `.git/`) may write
        only beneath those writes, scratch and temp (`confinement/`)."""
        for pattern in declared_writes:
            self.check_pattern(pattern)
        confinement = self.confinement(declared_writes) if confined else None
        return self.performer.run_process(argv, cwd=self.working_directory(cwd), env=env, timeout=timeout, on_output=on_output, stdin=stdin,
                                          confinement=confinement)

    def confinement(self, declared_writes: Sequence[str]) -> "Confinement":
        """Where a program with these declared writes may write (`.git/`, the state directory
        and the resources directory never)."""
        from catalyst_dsl.runtime.confinement import Confinement

        protected = list(self.protected)
        if self.real_resources is not None and is_within(self.real_resources, self.real_root) and self.real_resources != self.real_root:
            protected.append(self.real_resources.relative_to(self.real_root).as_posix())
        return Confinement.of(self.root, self.scratch, declared_writes, protected)

    def granted_patterns(self) -> list[str]:
        """The write patterns of this frame's grants that every layer allows (`**` for a
        playbook without allowedWritePaths): what an AI agent granted writing tools may write."""
        patterns = []
        for layer in self.layers:
            for text in ("**",) if layer.patterns is None else (g.text for g in layer.patterns):
                try:
                    self.check_pattern(text)
                except StepError:
                    continue
                if text not in patterns:
                    patterns.append(text)
        return patterns


    def send(self, request: "HttpRequest") -> "HttpResponse":
        """An HTTP request (the network effect): the performer sends it, or a what-if records it."""
        return self.performer.send(request)


def is_within(path: Path, directory: Path) -> bool:
    """Whether `path` is `directory` or below it (compare resolved paths for real containment)."""
    return path == directory or directory in path.parents


def _under(base: Path, inner: str) -> Path:
    """`inner` (a protocol path's rest) as a path below `base`: `..` and leading slashes stay inside."""
    clean = posixpath.normpath("/" + inner.replace("\\", "/")).lstrip("/")
    return base if not clean or clean == "." else base / clean


class RealPerformer:
    """Performs effects for real: atomic file writes and processes with timeouts.

    `confiner` confines programs to their `Confinement` (none: programs run unconfined,
    as in a what-if's reads); `groups` records the process groups a run has in flight.
    """

    def __init__(self, confiner: "Confiner | None" = None, groups: "ProcessGroups | None" = None) -> None:
        self.confiner = confiner
        self.groups = groups

    def read_file(self, path: Path, limit: int) -> bytes | None:
        """The file's bytes; None when it does not exist; FileTooLarge beyond `limit`."""
        try:
            if path.stat().st_size > limit:
                raise FileTooLarge(str(path))
            return path.read_bytes()
        except FileNotFoundError:
            return None

    def listing(self, directory: Path) -> tuple[set[Path], set[Path]]:
        """Files added and removed under `directory` beyond what the disk shows: none here."""
        return set(), set()

    def write_file(self, target: Target, data: bytes) -> None:
        target.path.parent.mkdir(parents=True, exist_ok=True)
        durable.replace(target.path, data)

    def delete_file(self, target: Target) -> bool:
        try:
            target.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def run_process(self, argv, *, cwd, env, timeout, on_output, stdin, confinement=None) -> ProcessOutcome:
        from catalyst_dsl.runtime.confinement.refusals import explain_refusal
        from catalyst_dsl.runtime.process import run_streaming

        ruleset = None
        if confinement is not None and self.confiner is not None:
            ruleset = self.confiner.ruleset(confinement)
        try:
            if ruleset is not None:
                env = {**env, **confinement.environment()}
            outcome = run_streaming(argv, cwd=cwd, env=env, timeout=timeout, on_output=on_output, stdin=stdin,
                                    ruleset=ruleset, groups=self.groups)
        finally:
            if ruleset is not None:
                os.close(ruleset)
        if ruleset is not None and outcome.exit_code != 0 and not outcome.timed_out:
            explain_refusal(outcome, confinement, cwd)
        return outcome

    def send(self, request):
        from catalyst_dsl.runtime.network import send

        return send(request)

