"""Write permissions, checked before anything runs.

What a step writes comes from the action catalog (the config keys an action declares as
written paths) and from the `writes:` of shell-like steps. Each statically known path is
checked against the playbook's grants (`allowedWritePaths` plus `artifacts`); a path
with templates stands for every value they could take, so it is an error only when no
value could land inside the grants (the rest is checked in the pre-flight before the
step runs). Calls pass permissions down only with `inheritPermissions: true`, and the
steps of one `parallel` group may not write where another of its steps writes.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Iterator

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.diagnostics.ids import (
    AI_WRITE_TOOLS_UNBOUNDED,
    BAD_PATH,
    CHILD_WRITES_BEYOND_PARENT,
    CHILD_WRITES_READ_ONLY,
    PARALLEL_WRITE_OVERLAP,
    PROGRAM_WRITES_PROTECTED,
    UNCHECKED_SHELL_WRITES,
    WRITES_ANYWHERE,
    WRITE_NOT_ALLOWED,
)
from catalyst_dsl.diagnostics.model import DiagnosticSink, Label
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.paths import reserved
from catalyst_dsl.paths.protocols import literal_leaving_base, place
from catalyst_dsl.checks.library_view import Edge, LibraryView
from catalyst_dsl._internal.lazy_module import lazy_module
from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.source import Span

if TYPE_CHECKING:
    from catalyst_dsl.paths.globs import Glob

# The glob automata are imported when a playbook writes something, not at start-up.
_globs = lazy_module("catalyst_dsl.paths.globs")


@record
class Write:
    """One place a step may write: a pattern, or None for an opaque shell-like step.

    The pattern is kept as text and compiled when a question needs more than its text:
    most writes are placed by their text alone (under a plain `dir/**` grant), and a
    library's thousands of compiled patterns were most of a check's peak memory.
    """

    step: ir.Step
    pattern: str | None
    text: str
    span: Span | None

    @property
    def glob(self) -> Glob:
        """The compiled pattern (valid: it was checked when the write was found)."""
        from catalyst_dsl.paths.globs import Glob

        return Glob.from_template(self.pattern)


def path_text(value: ir.Value) -> str | None:
    """The path a value names, with templates kept as written; None when not text."""
    if isinstance(value, ir.Lit) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ir.Tmpl):
        return value.text
    return None


class PermissionChecker:
    def __init__(self, library: LibraryView, sink: DiagnosticSink) -> None:
        self.library = library
        self.catalog: Catalog = library.catalog
        self.sink = sink
        self._writes: dict[str, list[Write]] = {}
        #: What was wrong with each playbook's writes, reported when that file is checked.
        self._write_problems: dict[str, list] = {}
        self._placements: dict[tuple[tuple[str, ...], str], str] = {}
        #: The last grants placed against (kept, so its identity stays its own) and their
        #: plain prefixes: one playbook's writes, then each child's, are placed against them.
        self._prefixes_of: list[Glob] | None = None
        self._prefixes: tuple[str, ...] = ()

    def placement(self, grants: list[Glob], write: Write) -> str:
        """classify(), remembered: a child's writes are placed again for every caller."""
        if grants is not self._prefixes_of:
            self._prefixes_of = grants
            self._prefixes = _plain_prefixes(grants)
        if _under_plain_grant(self._prefixes, write.pattern):
            return "inside"  # decided by the text: nothing to compile or remember
        key = (tuple(g.text for g in grants), write.pattern)
        found = self._placements.get(key)
        if found is None:
            from catalyst_dsl.paths.globs import classify

            found = self._placements[key] = classify(grants, write.glob)
        return found

    # -- what a playbook writes -----------------------------------------------------------------

    def writes(self, path: str, report: bool = False) -> list[Write]:
        """Every write of the playbook in `path`, worked out once however many playbooks
        call it; bad paths are reported when `report` (the file's own check)."""
        found = self._writes.get(path)
        if found is None:
            pb = self.library.compiled(path).playbook
            problems = DiagnosticSink()
            found = [] if pb is None else [w for step in ir.all_steps(pb) for w in self._step_writes(step, problems)]
            self._writes[path] = found
            self._write_problems[path] = problems.items
        if report:
            self.sink.extend(self._write_problems[path])
        return found

    def _step_writes(self, step: ir.Step, report: DiagnosticSink | None) -> Iterator[Write]:
        spec = self.catalog.get(step.action)
        if spec is None or not step.known:
            return
        if spec.shell_like:
            if not step.writes_declared:
                if report is not None:
                    report.report(
                        UNCHECKED_SHELL_WRITES,
                        (
                            f"this {step.action} step declares no `writes:`: its program may write "
                            "only the run's scratch space and the temp folder "
                            "(confined by the kernel where Landlock is available)"
                        ),
                        step.action_span or step.span,
                        help=(
                            "list the paths it writes under `writes:` (glob patterns), "
                            "or `writes: []` when it writes nothing"
                        ),
                    )
                yield Write(step, None, "", step.action_span or step.span)
            for value in step.writes:
                for write in self._paths(step, value, report):
                    if report is not None:
                        self._never_writable(write, report)
                    yield write
            return
        for decl in spec.writes:
            if decl.kind == "branch":
                continue  # branches are locked at run time; they are not paths
            value = step.config.get(decl.key)
            if value is None:
                continue
            items = value.items if isinstance(value, ir.ListV) else (value,)
            for item in items:
                yield from self._paths(step, item, report)

    def _paths(self, step: ir.Step, value: ir.Value, report: DiagnosticSink | None) -> Iterator[Write]:
        text = path_text(value)
        if text is None:
            return
        placed = place(text)
        if placed.problem is not None:
            if report is not None:
                report.report(
                    BAD_PATH,
                    f"cannot write to '{text}': {placed.problem}",
                    value.span,
                    help="write into the project or to temp://",
                )
            return
        pattern = placed.path
        if pattern is None:
            return
        globs = _globs()
        try:
            globs.check_template(pattern)  # kept as text, compiled when needed (Write.glob)
        except globs.GlobError as exc:
            # A plain protocol path leaving its base is C106 already (see literal_path there).
            if report is not None and not (isinstance(value, ir.Lit) and literal_leaving_base(text)):
                report.report(
                    BAD_PATH,
                    f"cannot write to '{text}': {exc.message}",
                    value.span,
                    help="write paths are relative to the project root and stay inside it",
                )
            return
        yield Write(step, pattern, text, value.span)

    def _never_writable(self, write: Write, sink: DiagnosticSink) -> None:
        """C824: a program's declared write inside `.git/` or the state directory, which its
        confinement never grants (docs/running.md, "Programs are confined")."""
        prefix = _globs().template_prefix(write.pattern)
        state_dir = self.library.project.config.state_dir.strip("/")
        for protected, what in ((".git", "git's own files"), (state_dir, "catalyst's run state")):
            if prefix == protected or prefix.startswith(protected + "/"):
                sink.report(
                    PROGRAM_WRITES_PROTECTED,
                    (
                        f"this step declares it writes '{write.text}', but {protected}/ holds {what}, "
                        "which programs are never allowed to write"
                    ),
                    write.span,
                    help="write somewhere else, or use the built-in action made for it (git-commit, file-write)",
                )
                return

    # -- grants ----------------------------------------------------------------------------------

    def grants(self, path: str, report: bool = False) -> list[Glob] | None:
        """The patterns the playbook may write, or None for anywhere in the project."""
        pb = self.library.compiled(path).playbook
        if pb is None or pb.allowed_write_paths is None:
            return None
        found: list[Glob] = []
        for value in (*pb.allowed_write_paths, *pb.artifacts):
            text = path_text(value)
            if text is None:
                continue
            pattern = place(text).path
            if pattern is None:
                continue
            globs = _globs()
            try:
                found.append(globs.Glob.from_template(pattern))
            except globs.GlobError as exc:
                if report:
                    self.sink.report(
                        BAD_PATH,
                        f"'{text}' is not a valid path pattern: {exc.message}",
                        value.span,
                        help=(
                            "patterns are relative to the project root: "
                            "`*` is one name, `**` any depth (`catalyst explain C812`)"
                        ),
                    )
        return found

    # -- the checks ----------------------------------------------------------------------------

    def check(self, path: str) -> None:
        pb = self.library.compiled(path).playbook
        if pb is None:
            return
        grants = self.grants(path, report=True)
        writes = self.writes(path, report=True)
        known = [w for w in writes if w.pattern is not None]
        if grants is None:
            if known:
                self.sink.report(
                    WRITES_ANYWHERE,
                    (
                        f"'{pb.name}' writes files but declares no allowedWritePaths, "
                        "so it may write anywhere in the project"
                    ),
                    pb.span,
                    help="list where it writes under allowedWritePaths to have every write checked",
                )
        else:
            for write in known:
                if self.placement(grants, write) == "outside":
                    allowed = ", ".join(g.text for g in grants) or "nothing"
                    self.sink.report(
                        WRITE_NOT_ALLOWED,
                        f"'{write.text}' is outside what this playbook may write ({allowed})",
                        write.span,
                        help="add a pattern for it to allowedWritePaths, or write somewhere allowed",
                    )
        self._git_writes(grants, known)
        for step in ir.all_steps(pb):
            if step.action == "parallel":
                self._parallel(step)
            if grants is None:
                self._ai_write_tools(pb, step)
        for edge in self.library.edges(path):
            if edge.kind == "playbook" and edge.callee is not None and edge.site is not None:
                self._call(path, edge, grants)

    def _git_writes(self, grants: list[Glob] | None, known: list[Write]) -> None:
        """A write into a `.git` directory needs a grant that names it (paths/reserved.py):
        `**`, or no allowedWritePaths at all, lets a run write anywhere but there."""
        for write in known:
            if grants is not None and self.placement(grants, write) == "outside":
                continue  # reported as outside the grants already
            if self._unnamed_git(write, grants):
                self.sink.report(
                    WRITE_NOT_ALLOWED,
                    f"'{write.text}' is inside a .git directory, which no grant of this playbook names",
                    write.span,
                    help=(
                        "git's own files are written only under a grant that names them in plain text "
                        "(such as `.git/hooks/**`); `**` does not"
                    ),
                )

    def _unnamed_git(self, write: Write, grants: list[Glob] | None) -> bool:
        """Whether `write` reaches into a `.git` directory that no grant names in plain text.
        A program's write is never one: programs never write `.git`, grant or not (C824)."""
        if not reserved.writes_git(write.pattern):
            return False  # the common case, decided by the text alone
        spec = self.catalog.get(write.step.action)
        if spec is not None and spec.shell_like:
            return False
        naming = [g for g in grants or () if reserved.names_git(g.text)]
        return self.placement(naming, write) == "outside"

    def _ai_write_tools(self, pb: ir.Playbook, step: ir.Step) -> None:
        """An AI given tools that change things needs bounds: allowedWritePaths (LANGUAGE 4)."""
        spec = self.catalog.get(step.action)
        if spec is None or spec.group != "ai":
            return  # most steps: asked of every step, so decided before anything else
        tools = step.config.get("tools")
        if not isinstance(tools, ir.ListV):
            return
        from catalyst_dsl.actions.builtin import READ_ONLY_TOOLS, writing_tools

        granted = writing_tools([item.value for item in tools.items if isinstance(item, ir.Lit)])
        if granted:
            self.sink.report(
                AI_WRITE_TOOLS_UNBOUNDED,
                (
                    f"this step gives the AI tools that change things ({', '.join(granted)}), "
                    f"but '{pb.name}' declares no allowedWritePaths"
                ),
                tools.span or step.span,
                help=(
                    "list where the AI may write under allowedWritePaths, "
                    f"or grant only read-only tools ({', '.join(sorted(READ_ONLY_TOOLS))})"
                ),
            )

    def _parallel(self, group: ir.Step) -> None:
        body = group.config.get("steps")
        if not isinstance(body, ir.StepsV):
            return
        tagged: list[tuple[int, Write]] = []
        for index, branch in enumerate(body.steps):
            for step in ir.steps_within(branch):
                tagged += [(index, w) for w in self._step_writes(step, None) if w.pattern is not None]
        from catalyst_dsl.checks.rules.parallel_writes import branch_overlaps
        from catalyst_dsl.paths.globs import overlap_groups

        found = branch_overlaps([index for index, _ in tagged], overlap_groups([w.glob for _, w in tagged]))
        for i, j, witness in found.shown:
            first, second = tagged[i][1], tagged[j][1]  # i < j: the first is in the earlier branch
            self.sink.report(
                PARALLEL_WRITE_OVERLAP,
                (
                    f"steps {_step_label(first.step)} and {_step_label(second.step)} of one parallel group "
                    f"may both write '{witness}' ('{first.text}' and '{second.text}')"
                ),
                second.span,
                labels=[Label(first.span, "the other write")] if first.span else (),
                help="run them one after the other, or make their paths disjoint",
            )
        if found.more:
            self.sink.report(
                PARALLEL_WRITE_OVERLAP,
                (
                    f"{found.more:,} more pairs of writes in different branches of this parallel group may write "
                    f"one path; only the first {len(found.shown)} pairs of steps are reported"
                ),
                group.action_span or group.span,
                help="run the branches one after the other, or give each branch a path of its own",
            )

    def _call(self, parent: str, edge: Edge, grants: list[Glob] | None) -> None:
        child = self.library.compiled(edge.callee).playbook
        if child is None:
            return
        # A shell-like step without `writes:` counts as writing nothing here: the language
        # asks every writing step to declare it, and the step itself is noted (C817).
        child_writes = [w for w in self.writes(edge.callee) if w.pattern is not None]
        if not child_writes:
            return
        inherit = edge.site.step.config.get("inheritPermissions")
        if not (isinstance(inherit, ir.Lit) and inherit.value is True):
            shown = _describe_writes(child_writes)
            self.sink.report(
                CHILD_WRITES_READ_ONLY,
                (
                    f"'{child.name}' writes ({shown}), "
                    "but it is called without inheritPermissions: true, so it runs read-only"
                ),
                edge.span,
                labels=[Label(w.span, "it writes here") for w in child_writes[:3] if w.span is not None],
                help=(
                    "add `inheritPermissions: true` to this step "
                    "if the child should write with this playbook's permissions"
                ),
            )
            return
        self._child_git_writes(child, edge, grants, child_writes)
        if grants is None:
            return
        for write in child_writes:
            if self.placement(grants, write) == "outside":
                self.sink.report(
                    CHILD_WRITES_BEYOND_PARENT,
                    f"'{child.name}' writes '{write.text}', which this playbook may not write",
                    edge.span,
                    labels=[Label(write.span, "the child writes here")] if write.span else (),
                    help=(
                        "allow the path in this playbook's allowedWritePaths, or call a playbook that writes elsewhere"
                    ),
                )

    def _child_git_writes(
        self, child: ir.Playbook, edge: Edge, grants: list[Glob] | None, child_writes: list[Write]
    ) -> None:
        """A child's write into `.git` needs a grant naming it in the caller as well: the
        run allows a write only where every playbook on the call stack allows it."""
        for write in child_writes:
            if grants is not None and self.placement(grants, write) == "outside":
                continue  # C816 below says so
            if self._unnamed_git(write, grants):
                self.sink.report(
                    CHILD_WRITES_BEYOND_PARENT,
                    (
                        f"'{child.name}' writes '{write.text}', inside a .git directory, "
                        "which no grant of this playbook names"
                    ),
                    edge.span,
                    labels=[Label(write.span, "the child writes here")] if write.span else (),
                    help=(
                        "name it in this playbook's allowedWritePaths (such as `.git/hooks/**`), "
                        "or call a playbook that writes elsewhere"
                    ),
                )


_WILDCARDS = ("*", "?", "[", "\\", "{")


def _under_plain_grant(prefixes: tuple[str, ...], text: str) -> bool:
    """The common case without automata: a grant `dir/**` whose `dir/` is plain text (one
    of `prefixes`, see `_plain_prefixes`).

    Any path starting with that text lies under it (a template inside the rest stands for
    one segment's text, so it cannot climb out: `..` values are refused at run time).
    """
    return "/../" not in text and text.startswith(prefixes)


def _plain_prefixes(grants: list[Glob]) -> tuple[str, ...]:
    """The `dir/` of each grant `dir/**` whose `dir/` is plain text."""
    return tuple(prefix for grant in grants if (prefix := _plain_grant_prefix(grant.text)) is not None)


@functools.lru_cache(maxsize=1024)
def _plain_grant_prefix(grant: str) -> str | None:
    """The `dir/` of a grant `dir/**` whose `dir/` is plain text, else None. Remembered: a
    library's playbooks share a few grants, and every write is placed against them."""
    if grant.endswith("/**"):
        prefix = grant[:-2]
        if not any(w in prefix for w in _WILDCARDS):
            return prefix
    return None


def _describe_writes(writes: list[Write]) -> str:
    shown = list(dict.fromkeys(w.text for w in writes))
    return ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")


def _step_label(step: ir.Step) -> str:
    return f"'{step.name}'" if step.name else f"{step.action} (line {step.span.line})" if step.span else step.action


def check_permissions(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    checker = PermissionChecker(library, sink)
    for path in files:
        checker.check(path)
