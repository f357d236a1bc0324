"""Confinement of the programs steps run: what each may write, and the kernel enforcing it.

A shell-like step's program (and an AI agent run by the `command` adapter) may read and
execute anything its user can, but write only beneath:

- the fixed directory prefix of each declared `writes:` pattern (`out/**` -> `out/`),
- the run's scratch space (`temp://`) and a temp folder of its own (`temp_folder`,
  its TMPDIR, removed when it ends),
- a few device files every program expects (`DEVICES`).

A declared prefix that passes through a symbolic link refuses the step (`refuse_links`).

`.git/` (a nested repository's too) and the state directory are never writable, even beneath a prefix that holds
them: Landlock rules only add rights, so such a prefix is granted entry by entry around
them (entries made there later are not covered). Linux Landlock enforces this
(`landlock.py`, applied by the program's keeper in `launch.py`); without it the run says
so once and keeps the gateway's checks of declared writes (or fails, with
`require-confinement = true`).
Where Linux allows it, the keeper also gives the program a mount namespace of its own
(`mounts`): the protected paths read-only, so their modes, owners and times cannot change
either, and a private /dev/shm; without one the run says so once and keeps Landlock.
"""

from __future__ import annotations

import functools
import os
import posixpath
import stat
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

from catalyst_dsl.paths.protocols import place
from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.effects.beneath import is_within
from catalyst_dsl.runtime.errors import StepError

#: Writable for every program: the null and zero sinks, the terminal, entropy, and POSIX
#: shared memory (`/dev/shm`, used by semaphores and multiprocessing; the step's own in a
#: namespace).
SHARED_MEMORY = "/dev/shm"
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", SHARED_MEMORY)
#: Never writable to a program, whatever its grants (project-relative).
ALWAYS_PROTECTED = (".git",)
#: How the plan names the program's own temp folder (a real path would differ per step).
TEMP_FOLDER = "$TMPDIR"
#: How a program's own temp folder is named in the system temp folder, before its run id.
TEMP_FOLDER_PREFIX = "catalyst-step-"
SCRATCH = "temp://"


@record
class Confinement:
    """Where one program may write: directory prefixes in the project, and never `protected`."""

    root: Path
    scratch: Path
    #: Project-relative directory prefixes, "" for the whole project.
    prefixes: tuple[str, ...]
    #: Project-relative directories (and `files`) no prefix reaches into (`.git`, the state directory).
    protected: tuple[str, ...]
    #: Those of `protected` that are files (the ones deciding who may approve), shown without a slash.
    files: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, root: Path, scratch: Path, patterns: Sequence[str], protected: Sequence[str], files: Sequence[str] = ()
    ) -> "Confinement":
        prefixes = []
        for written in patterns:
            placed = place(written)
            if placed.scratch or placed.problem:
                continue  # scratch is always writable; a bad pattern the gateway refused already
            # Imported here: a program with no declared `writes:` needs no glob machinery.
            from catalyst_dsl.paths.globs import Glob, GlobError, fixed_prefix

            try:
                prefix = fixed_prefix(Glob.compile(placed.path or written))
            except GlobError:
                continue
            if prefix not in prefixes:
                prefixes.append(prefix)
        return cls(
            root, scratch, tuple(prefixes), tuple(dict.fromkeys((*ALWAYS_PROTECTED, *protected, *files))), tuple(files)
        )

    def shown(self) -> dict:
        """The confinement in a plan: what the program may write, and what it never may."""
        may = [f"{p}/" if p else "./" for p in self.prefixes if not self._inside_protected(p)]
        return {
            "mayWrite": [*may, SCRATCH, TEMP_FOLDER],
            "neverWrites": [p if p in self.files else f"{p}/" for p in self.protected],
        }

    def refuse_links(self) -> None:
        """PermissionDenied when a declared prefix passes through a symbolic link: the kernel
        grants the directory the link leads to, which is not what the writes name (a committed
        `out -> .` would open the whole project to `out/**`). Links *inside* a prefix need no
        check: a rule follows the real path of every write, so they lead nowhere granted."""
        if not self.prefixes:
            return  # nothing declared (most steps): no real root to look up, a stat per name of its path
        real_root = Path(os.path.realpath(self.root))
        for prefix in self.prefixes:
            walked = real_root
            for name in prefix.split("/") if prefix else ():
                walked = walked / name
                if not walked.is_symlink():
                    continue
                link = walked.relative_to(real_root).as_posix()
                leads = Path(os.path.realpath(walked))
                where = (
                    f"'{leads.relative_to(real_root).as_posix() or '.'}'"
                    if _holds(real_root, leads)
                    else f"'{leads}', outside the project"
                )
                where = "the project root" if leads == real_root else where
                raise StepError(
                    "PermissionDenied",
                    f"this step declares it writes beneath '{prefix}/', but '{link}' is a symbolic "
                    f"link to {where}: its program would be granted where the link leads, not what "
                    f"its writes name",
                    guidance=f"remove the link '{link}' (or declare the real path it "
                    f"leads to, where the grants allow it)",
                    metadata={"path": link},
                )

    def writable_paths(self, step_temp: Path | None = None, private_shm: bool = False) -> list[Path]:
        """The real paths to allow writes beneath, for the kernel. Missing prefix directories
        are made first (a rule needs something to open); a prefix that passes through a
        symbolic link is left out, so writes there are refused. `step_temp` is the step's
        own temp folder; `private_shm`: /dev/shm is a tmpfs of the step's own, granted by
        the keeper once mounted (a rule here would name the machine's)."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        real_root = Path(os.path.realpath(self.root)) if self.prefixes else self.root  # only the prefixes need it
        paths = [Path(os.path.realpath(self.scratch))]
        if step_temp is not None:
            paths.append(Path(os.path.realpath(step_temp)))
        paths += [real for device, real in _devices() if not (private_shm and device == SHARED_MEMORY)]
        for prefix in self.prefixes:
            path = self.root / prefix if prefix else self.root
            real = Path(os.path.realpath(path))
            if real != (real_root / prefix if prefix else real_root):
                continue  # through a link (refuse_links said so at the step's start)
            relative = real.relative_to(real_root).as_posix() if real != real_root else ""
            if self._inside_protected(relative):
                continue
            if not real.exists():
                real.mkdir(parents=True, exist_ok=True)
            paths += _around(
                real_root, [*self.protected, *_git_directories(real_root, relative, self.protected)], relative
            )
        return paths

    def read_only_paths(self) -> list[Path]:
        """What the keeper mounts read-only for the program (real paths that exist): `.git`
        with the git directory a worktree's `.git` file points to, the state and resources
        directories, the settings and key files, and every nested `.git` beneath a prefix.
        Landlock refuses writes there; the mount refuses chmod, chown and utime too."""
        real_root = Path(os.path.realpath(self.root))
        found = [*self.protected]
        for prefix in self.prefixes:
            lexical = real_root / prefix if prefix else real_root
            if not self._inside_protected(prefix) and os.path.realpath(lexical) == str(lexical):
                found += _git_directories(real_root, prefix, self.protected)
        paths = [Path(real) for real in (_real_below(str(real_root), p) for p in dict.fromkeys(found)) if real]
        for git_file in [real_root / p for p in dict.fromkeys(found) if posixpath.basename(p).lower() == ".git"]:
            paths += _linked_git_directories(git_file)
        paths += _user_key_files()
        return list(dict.fromkeys(paths))

    def mounts(self, writable: list[Path], shm_rights: int | None) -> dict:
        """The keeper's private mounts (`launch.py`): read-only paths, the writable paths
        beneath them made writable again (the scratch space lies in the state directory),
        and /dev/shm with the Landlock rights to grant it (None: no ruleset)."""
        read_only = self.read_only_paths()
        # As text, each read-only path once: a step compares every writable path with each.
        beneath = tuple(str(r) if str(r).endswith("/") else f"{r}/" for r in read_only)
        writable = [p for p in writable if str(p).startswith(beneath) and p not in read_only]
        return {
            "readOnly": [str(p) for p in read_only],
            "writable": [str(p) for p in writable],
            "shm": True,
            "shmRights": shm_rights,
        }

    def environment(self, step_temp: Path | None) -> dict[str, str]:
        """Variables a confined program needs: TMPDIR, its own temp folder."""
        return {"TMPDIR": str(step_temp)} if step_temp is not None else {}

    @contextmanager
    def temp_folder(self) -> Iterator[Path]:
        """A new, empty temp folder for one program (its TMPDIR), removed when it ends: in the
        system temp folder, else (not writable) in the run's scratch space."""
        import shutil
        import tempfile  # where a program is confined: with `random`, about 1 ms of every what-if

        try:
            # Named after the run (its scratch space's name): `remove_temp_folders` finds those
            # a killed catalyst left behind.
            path = Path(tempfile.mkdtemp(prefix=f"{TEMP_FOLDER_PREFIX}{self.scratch.name}-"))
        except OSError:
            self.scratch.mkdir(parents=True, exist_ok=True)
            path = Path(tempfile.mkdtemp(prefix="step-temp-", dir=self.scratch))
        try:
            yield path
        finally:
            try:
                os.rmdir(path)  # most programs leave it empty: one call, not rmtree's walk
            except OSError:
                shutil.rmtree(path, ignore_errors=True)

    def closed_to_new_entries(self, relative: str) -> bool:
        """Whether a program may not add an entry to the project directory `relative` ("" the
        root) though its writes declare it: it holds a protected path, so only its entries
        are granted, one by one (`_around`), as they were when the program started."""
        declared = any(p == "" or relative == p or relative.startswith(p + "/") for p in self.prefixes)
        return declared and _holds_any(relative, self.protected)

    def _inside_protected(self, relative: str) -> bool:
        return any(relative == p or relative.startswith(p + "/") for p in self.protected)


@functools.cache
def _devices() -> tuple[tuple[str, Path], ...]:
    """Each of `DEVICES` this machine has, with its real path: looked up once a process, as
    the machine's devices do not move (a rule is still refused if one led elsewhere when
    opened, `landlock.PathMoved`)."""
    return tuple((device, Path(os.path.realpath(device))) for device in DEVICES if os.path.exists(device))


def _real_below(real_base: str, relative: str) -> str | None:
    """`os.path.realpath` of `real_base/relative` where that exists (None: it does not), for
    a `real_base` that is a real path: only the names of `relative` are looked at, an lstat
    each, and realpath resolves the whole path as soon as one of them is a link (or `..`)."""
    path = real_base
    for name in relative.split("/"):
        if name in ("", "."):
            continue
        path = os.path.join(path, name)
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return None if name != ".." else _real_or_none(os.path.join(real_base, relative))
        if name == ".." or stat.S_ISLNK(mode):
            return _real_or_none(os.path.join(real_base, relative))
    return path


def _real_or_none(lexical: str) -> str | None:
    return os.path.realpath(lexical) if os.path.lexists(lexical) else None


def _git_directories(root: Path, relative: str, protected: Sequence[str]) -> list[str]:
    """Every `.git` (any case, directory or file) beneath `root/relative`, project-relative:
    a nested repository's config and hooks run code as git, as the project's own do."""
    found = []
    for directory, names, files in os.walk(root / relative if relative else root):
        inside = Path(directory).relative_to(root).as_posix()
        inside = "" if inside == "." else inside
        for name in [*names, *files]:
            if name.lower() == ".git":
                found.append(posixpath.join(inside, name) if inside else name)
        names[:] = [n for n in names if n.lower() != ".git" and posixpath.join(inside, n) not in protected]
    return found


def remove_temp_folders(run_id: str) -> None:
    """Remove the temp folders programs of run `run_id` had when catalyst was killed before
    it could (the run ends: nothing of it runs any more)."""
    import glob
    import shutil
    import tempfile

    for path in glob.glob(
        os.path.join(glob.escape(tempfile.gettempdir()), f"{TEMP_FOLDER_PREFIX}{glob.escape(run_id)}-*")
    ):
        shutil.rmtree(path, ignore_errors=True)


def _linked_git_directories(git_file: Path) -> list[Path]:
    """The git directory a `.git` file names (`gitdir: …`, a worktree's or a submodule's),
    and the common directory that one shares: outside the project, still git's config."""
    try:
        if not git_file.is_file() or git_file.is_symlink():
            return []
        text = git_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if not text.startswith("gitdir:"):
        return []
    directory = Path(os.path.realpath(git_file.parent / text[len("gitdir:") :].strip()))
    found = [directory] if directory.is_dir() else []
    try:
        common = (directory / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return found
    shared = Path(os.path.realpath(directory / common))
    return [*found, shared] if shared.is_dir() else found


def _holds(directory: Path, path: Path) -> bool:
    return is_within(path, directory)


def _holds_any(relative: str, paths: Sequence[str]) -> bool:
    """Whether one of `paths` (project-relative) lies beneath the directory `relative` ("" the root)."""
    return any(relative == "" or p.startswith(relative + "/") for p in paths)


def _around(base: Path, excluded: list[str], relative: str) -> list[Path]:
    """`base/relative` itself, or, when an excluded path (relative to `base`) lies beneath
    it, each of its entries but the excluded ones (symbolic links are skipped: a rule
    would follow them)."""
    path = base / relative if relative else base
    if not _holds_any(relative, excluded):
        return [path]
    if "." in excluded and relative == "":
        return []
    granted: list[Path] = []
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        inner = posixpath.join(relative, entry.name) if relative else entry.name
        if entry.is_symlink() or any(inner == x or inner.startswith(x + "/") for x in excluded):
            continue
        if entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False):
            granted += _around(base, excluded, inner)
    return granted


class Confiner:
    """Turns a confinement into a Landlock ruleset for one run, or says once why it cannot."""

    def __init__(self, *, required: bool, notice: Callable[[str], None] | None = None) -> None:
        self.required = required
        self.notice = notice
        self._abi: int | None = None
        self._told = False
        self._lock = threading.Lock()
        #: Why programs get no private mounts here ("" when they do), probed once per run.
        self._namespaces: str | None = None

    @property
    def abi(self) -> int:
        if self._abi is None:
            # Imported when a program is about to run: ctypes costs a what-if 2 ms for nothing.
            from catalyst_dsl.runtime.effects.confinement import landlock

            self._abi = landlock.abi_version()
        return self._abi

    def private_mounts(self) -> bool:
        """Whether programs get private mounts (`launch.py`); the first time it is not so,
        the run says why once. `CATALYST_NAMESPACES=off` tries that fallback."""
        with self._lock:
            first = self._namespaces is None
            if first:
                if os.environ.get("CATALYST_NAMESPACES", "").lower() == "off":
                    self._namespaces = "CATALYST_NAMESPACES=off is set"
                else:
                    from catalyst_dsl.runtime.effects.confinement.launcher import namespaces_problem

                    self._namespaces = namespaces_problem() or ""
        if first and self._namespaces and self.notice is not None:
            self.notice(
                f"programs get no private mounts: {self._namespaces}; modes, owners and times under .git/, the state "
                f"directory and the settings can be changed by them, and /dev/shm is the machine's"
            )
        return not self._namespaces

    def ruleset(self, confinement: Confinement, writable: list[Path] | None = None) -> int | None:
        """An open ruleset fd for the keeper allowing writes beneath `writable` (else the
        confinement's `writable_paths()`), or None when this machine cannot confine (told
        once) and confinement is not required; ConfinementUnavailable when it is."""
        if self.abi > 0:
            try:
                from catalyst_dsl.runtime.effects.confinement import landlock

                return landlock.build_ruleset(self.abi, confinement.writable_paths() if writable is None else writable)
            except landlock.PathMoved as moved:
                raise StepError(
                    "PermissionDenied",
                    f"the program's writes could not be granted: {moved.strerror}",
                    guidance="a symbolic link changed while the step started; remove links from the paths it writes",
                ) from None
            except OSError as error:
                reason = str(error)
        elif os.environ.get("CATALYST_LANDLOCK", "").lower() == "off":
            reason = "CATALYST_LANDLOCK=off is set"
        else:
            reason = "this kernel has no Landlock (Linux 5.13 or later, enabled at boot and not blocked by seccomp)"
        if self.required:
            raise StepError(
                "ConfinementUnavailable",
                f"the program cannot be confined to its writes: {reason}",
                guidance="run on a Linux kernel with Landlock enabled, or set require-confinement = false in "
                "catalyst.toml to run programs with only the checks of their declared writes",
            )
        with self._lock:
            first, self._told = not self._told, True
        if first and self.notice is not None:
            self.notice(f"programs run unconfined: {reason}; only their declared writes are checked")
        return None


def _user_key_files() -> list[Path]:
    """The user's own files a program must not change the modes or times of: the run key,
    the check cache's key and the user's configuration (outside the project, so no grant
    reaches them, but Landlock does not cover chmod or utime)."""
    from catalyst_dsl.project.cache.keys import KEY_FILE, user_cache_dir
    from catalyst_dsl.project.config import user_config_dir

    found = []
    for directory, name in ((user_config_dir(), None), (user_cache_dir(), KEY_FILE)):
        if directory is None:
            continue
        path = directory / name if name else directory
        if os.path.lexists(path):
            found.append(Path(os.path.realpath(path)))
    return found
