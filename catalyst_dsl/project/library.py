"""The playbook library: every playbook of a project, found by location, and its calls.

Files are compiled on demand and once. A check of one file loads what it calls, and what
those call, so that a cycle through the file is found from it; a check of the playbook
directories loads them all. Calls resolve by location only, never through a registry:

- `playbook: name` finds the playbook whose `name` is that, looking first at files whose
  stem is the name (the file name must equal the name) and only then at every file;
- `playbook: path/to/x.yaml` (anything with a `/` or a playbook suffix) is a path, tried
  relative to the calling file, then to the project root, then to each playbook directory;
- a Markdown `@path` has the longest matching alias prefix rewritten, then is tried
  relative to the project root and to the calling file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.checks.library_view import Edge, ProjectFacts, twins
from catalyst_dsl.compiler import PLAYBOOK_SUFFIXES, Compiled, compile_bytes, compile_path
from catalyst_dsl.diagnostics.ids import UNREADABLE_FILE
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl._internal.lazy_module import lazy_module
from catalyst_dsl.paths import reserved
from catalyst_dsl.paths.protocols import place
from catalyst_dsl.project import observed
from catalyst_dsl.project.config import Project
from catalyst_dsl.project.discovery import discover_folders


#: The dialects, which name a playbook for its callers (imported at the first call looked up).
_registry = lazy_module("catalyst_dsl.dialects.registry")


class Library:
    """The project's playbooks and their calls, as the library's rules read them
    (`checks.library_view.LibraryView`)."""

    def __init__(
        self,
        project: Project,
        extra_files: list[str] = (),
        catalog: Catalog | None = None,
        overlay: dict[str, bytes] | None = None,
        cache=None,
    ) -> None:
        self.project = project
        #: Text to check instead of what is on disk, by absolute path (an editor's unsaved buffers).
        self.overlay = {absolute(p): data for p, data in (overlay or {}).items()}
        self.catalog = catalog or builtin_catalog()
        #: A `cache.store.CheckCache` that files are read through, or None to compile each.
        self.cache = cache
        #: What the library's rules ask of the file system, through the recorder a replay asks again.
        self.facts: ProjectFacts = observed
        dirs = [str(project.resolve(d)) for d in project.config.playbook_dirs]
        found = observed.listed(dirs, discover_folders(dirs))
        self.files: list[str] = _unique([absolute(f) for f in [*found, *extra_files]])
        self._compiled: dict[str, Compiled] = {}
        self._edges: dict[str, list[Edge]] = {}
        self._callers: dict[str, list[Edge]] | None = None
        self._by_stem: dict[str, list[str]] = {}
        for path in self.files:
            self._by_stem.setdefault(Path(path).stem, []).append(path)
        self._indexed = False
        self._real_root: str | None = None
        self._real_folders: dict[str, str] = {}

    # -- files -----------------------------------------------------------------------------------

    def compiled(self, path: str) -> Compiled:
        result = self._compiled.get(path)  # the rules ask with the library's own spelling
        if result is not None:
            return result
        path = absolute(path)
        result = self._compiled.get(path)
        if result is None:
            why_not = self._never_read(path)
            if why_not is not None:
                result = self._compiled[path] = refused(path, why_not)
            elif path in self.overlay:  # an editor's buffer is never cached
                result = self._compiled[path] = compile_bytes(self.overlay[path], path, self.catalog)
            else:
                compiled = (
                    compile_path(path, self.catalog) if self.cache is None else self.cache.compiled(path, self.catalog)
                )
                result = self._compiled[path] = compiled
        return result

    def _never_read(self, path: str) -> str | None:
        """Why a file of the project is never read: a check treats the repository as
        untrusted, and what it reads is shown in its findings (and in a pull request's
        annotations). A link leading out of the project, or a file in a `.git` directory,
        would put the machine's files there. A file outside the project was named by the
        user: it is theirs to read."""
        if self._real_root is None:  # once a library: a realpath costs a system call a folder
            self._real_root = os.path.realpath(self.project.root)
        return never_read(path, str(self.project.root), self._real_root, self._real_folders)

    def loaded(self) -> dict[str, Compiled]:
        return dict(self._compiled)

    def playbook_name(self, path: str) -> str | None:
        pb = self.compiled(path).playbook
        return _registry().address(pb, path) if pb is not None else None

    def named(self, name: str) -> list[str]:
        """Files whose playbook is called `name`, in search order; of a YAML file and a
        Markdown file of the same name side by side (one playbook in two forms), the YAML
        one first, as the original engine resolves a name to `.yaml`/`.yml` only."""
        matches = [p for p in self._by_stem.get(name, []) if self.playbook_name(p) == name]
        if not matches and not self._indexed:  # a file whose stem differs from its name: look at them all
            for path in self.files:
                self.compiled(path)
            self._indexed = True
        if not matches:
            matches = [p for p in self.files if p in self._compiled and self.playbook_name(p) == name]
        return sorted(matches, key=lambda p: p.endswith(".md") and any(twins(p, other) for other in matches))

    def searched_folders(self) -> str:
        """The playbook folders a name is looked up in, as a person at the terminal finds
        them (relative to the working directory): "playbooks/, .xe/playbooks/" in the root."""
        here = os.getcwd()
        shown = []
        for folder in self.project.config.playbook_dirs:
            path = os.path.relpath(self.project.resolve(folder), here)
            shown.append(path.replace(os.sep, "/") + "/")
        return ", ".join(shown)

    def names(self) -> list[str]:
        return sorted({Path(p).stem for p in self.files})

    def shellcheck(self, scripts: list[tuple[str, str]]):
        from catalyst_dsl.project import shellcheck  # only for a library with bash scripts

        # The check cache keeps ShellCheck's comments; an editor's compilations keep none.
        return shellcheck.run(scripts, self.cache if hasattr(self.cache, "read_sealed") else None)

    # -- calls -------------------------------------------------------------------------------------

    def edges(self, path: str) -> list[Edge]:
        path = absolute(path)
        if path not in self._edges:
            self._edges[path] = list(self._find_edges(path))
        return self._edges[path]

    def _find_edges(self, path: str):
        result = self.compiled(path)
        if result.playbook is None:
            return
        for site in result.calls:
            target = site.step.config.get("name")
            span = target.span if target is not None and target.span is not None else site.step.span
            if isinstance(target, ir.Lit) and isinstance(target.value, str) and place(target.value).scratch:
                # Scratch space exists only during a run: the playbook is written there by an
                # earlier step, so there is nothing to check it against yet.
                yield Edge(path, target.value, "playbook", span, None, site.guarded, dynamic=True, site=site)
            elif isinstance(target, ir.Lit) and isinstance(target.value, str):
                callee = self.resolve_call(target.value, path)
                yield Edge(path, target.value, "playbook", span, callee, site.guarded, site=site)
            elif isinstance(target, ir.Tmpl):
                yield Edge(path, target.text, "playbook", span, None, site.guarded, dynamic=True, site=site)
        for ref in result.playbook.calls:
            callee = self.resolve_reference(ref.target, path)
            if callee is not None or self.names_a_playbook(ref.target):
                yield Edge(path, ref.target, "markdown-ref", ref.span, callee)

    def callers(self, path: str) -> list[Edge]:
        """The calls into `path` from the library's other files (the first ask compiles
        every file of the library, to find them)."""
        if self._callers is None:
            self._callers = {}
            for caller in self.files:
                for edge in self.edges(caller):
                    if edge.callee is not None and edge.callee != caller:
                        self._callers.setdefault(edge.callee, []).append(edge)
        return list(self._callers.get(absolute(path), ()))

    def names_a_playbook(self, reference: str) -> bool:
        """Whether an `@` reference claims to be a playbook, not a document (a standard, a template).

        It does when, after the aliases, it points into a playbook directory, or when one of
        its directories is called `playbooks`.
        """
        rewritten = self.unalias(reference).replace("\\", "/")
        dirs = [d.rstrip("/") + "/" for d in self.project.config.playbook_dirs]
        return rewritten.startswith(tuple(dirs)) or "playbooks" in rewritten.split("/")[:-1]

    @staticmethod
    def is_path(target: str) -> bool:
        """A call target written as a path rather than a playbook name."""
        return "/" in target or "\\" in target or target.endswith(PLAYBOOK_SUFFIXES)

    def resolve_call(self, target: str, caller: str) -> str | None:
        target = place(target).path or target
        if self.is_path(target):
            bases = [
                Path(caller).parent,
                self.project.root,
                *(self.project.resolve(d) for d in self.project.config.playbook_dirs),
            ]
            return self._first_file(self.unalias(target), bases, caller)
        named = self.named(target)
        return named[0] if named else None

    def resolve_reference(self, target: str, caller: str) -> str | None:
        return self._first_file(self.unalias(target), [self.project.root, Path(caller).parent], caller)

    def unalias(self, target: str) -> str:
        for prefix in sorted(self.project.config.aliases, key=len, reverse=True):
            if target.startswith(prefix):
                return self.project.config.aliases[prefix] + target[len(prefix) :]
        return target

    def _first_file(self, relative: str, bases, caller: str) -> str | None:
        """The first existing playbook file; never one outside the project (or, for a file
        checked from outside the project, outside its own directory)."""
        if os.path.isabs(relative):
            return None
        names = [relative] if relative.endswith(PLAYBOOK_SUFFIXES) else [relative + s for s in PLAYBOOK_SUFFIXES]
        for base in bases:
            for name in names:
                candidate = absolute(os.path.join(base, name))
                if observed.is_file(candidate) and self._may_call(candidate, caller):
                    return candidate
        return None

    def _may_call(self, candidate: str, caller: str) -> bool:
        fences = [str(self.project.root)]
        if not _inside(caller, fences[0]):
            fences.append(os.path.dirname(caller))  # a file checked from outside the project
        return any(_inside(candidate, fence) for fence in fences)

    def load_closure(self, roots: list[str], checked_elsewhere: frozenset[str] = frozenset()) -> None:
        """Compile the given files and everything they call, transitively; of a file in
        `checked_elsewhere` (another process's share of one check, `project.shards`), only
        the file: what it calls is that process's to load."""
        pending = [absolute(r) for r in roots]
        seen = set(pending)
        while pending:
            path = pending.pop()
            for edge in self.edges(path):
                if edge.callee is not None and edge.callee not in seen:
                    seen.add(edge.callee)
                    if edge.callee not in checked_elsewhere:
                        pending.append(edge.callee)


def never_read(
    path: str, root: str, real_root: str | None = None, real_folders: dict[str, str] | None = None
) -> str | None:
    """Why the file at `path` of the project at `root` is never read (`Library._never_read`),
    or None; `real_root` and `real_folders` (folder -> real path) spare a caller that asks
    about many files their system calls."""
    if not _inside(path, root):
        return None
    real_root = real_root or os.path.realpath(root)
    real_folders = {} if real_folders is None else real_folders
    # A file that is no link is where its folder really is: one system call a file,
    # the folders' real paths worked out once a library (most files share a few).
    try:
        status = os.lstat(path)
    except OSError:
        status = None
    if status is not None and not stat.S_ISLNK(status.st_mode):
        folder, name = os.path.split(path)
        real_folder = real_folders.get(folder)
        if real_folder is None:
            real_folder = real_folders[folder] = os.path.realpath(folder)
        real = os.path.join(real_folder, name)
    else:
        real, status = os.path.realpath(path), None
    if not _inside(real, real_root):
        return "it is a link that leads outside the project, which a check never follows"
    if (".git" in real.casefold() or ".git" in path.casefold()) and (
        # Only a path that holds `.git` when case-folded can have a `.git` segment
        # (reserved.writes_git says why): the relative paths are worked out for those.
        reserved.git_segment(Path(os.path.relpath(real, real_root)).as_posix()) is not None
        or reserved.git_segment(Path(os.path.relpath(path, root)).as_posix()) is not None
    ):
        return "it is inside a .git directory, which a check never reads"
    if status is None:  # a link: what it leads to
        try:
            status = os.stat(path)
        except OSError:
            return None  # gone, or unreadable: reading it says so (C001)
    if not stat.S_ISREG(status.st_mode):
        # A named pipe with no writer would hold the check (and the editor's) forever.
        return NOT_A_FILE
    return None


#: Why a named pipe, a socket or a device among the project's playbooks is not read.
NOT_A_FILE = "it is not a regular file (a named pipe, a socket or a device), which a check never opens"


def refused(path: str, why: str) -> Compiled:
    """C001 for a file a check does not read (`Library._never_read`)."""
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.syntax.source import SourceFile

    sink = DiagnosticSink()
    sink.report(
        UNREADABLE_FILE,
        f"cannot read the file: {why}",
        SourceFile(path, "").span(0),
        help="commit the playbook as a plain file"
        if why == NOT_A_FILE
        else "commit the playbook itself inside the project instead of a link to it",
    )
    return Compiled(path, None, None, sink.sorted())


def absolute(path: str) -> str:
    """The one spelling of a file's path in the library: absolute, not resolved through links."""
    return os.path.abspath(path)


def _inside(path: str, directory: str) -> bool:
    directory = absolute(directory)
    return os.path.commonpath([absolute(path), directory]) == directory


def _unique(paths: list[str]) -> list[str]:
    return list(dict.fromkeys(paths))
