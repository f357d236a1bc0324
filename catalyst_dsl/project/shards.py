"""One check of a whole library, split across processes: each checks a share of the files.

A cold check costs about 1.5 ms a playbook, nearly all of it compiling each file and
running the rules on it, and the rules read a file and the playbooks it calls directly:
its calls' inputs, the writes it passes down. So a check of every playbook of a project
is split in runs of files, one per processor: each process compiles its share and what
the share calls directly (a file another share checks is compiled for its inputs and
writes, not followed further) and runs the rules on its share. What only the whole
library can say is said once, by the process that split the check:

- two playbooks of one name (C802): each share sends its files' names (`NameCard`);
- cycles of calls: each share sends its files' calls, and the cycles are found in the
  whole graph;
- the calls into the files checked from files not checked (`check_callers`) are none:
  a check is split only when every playbook of the library is checked.

A share runs in a fresh `python -I -c` of this build, its request on standard input and
its answer on standard output as pickles (its own process: nothing else speaks on those
pipes; what else it prints goes with its errors, and the answer is read as catalyst's
records only, `_Reader`). It writes its files' entries of the check cache after it has answered. The
process that split the check checks one share itself meanwhile. A share whose process
fails (killed, out of memory) is checked again in this process: a split check can be
slower than planned, never poorer in findings.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import sys
import threading
import time
from typing import Callable

from catalyst_dsl._internal.records import factory, record
from catalyst_dsl.diagnostics.model import Diagnostic, DiagnosticSink
from catalyst_dsl.project import observed
from catalyst_dsl.project.check import CheckedFiles
from catalyst_dsl.project.config import Project
from catalyst_dsl.syntax.source import SourceFile

log = logging.getLogger(__name__)

#: Files a share must hold for the split to pay: a process of its own costs about 0.2 s
#: (Python's start and catalyst's imports), the time to check about 150 playbooks.
MIN_SHARE = 300
#: A playbook a share's process compiles while it waits for its request, so that what a
#: compile loads the first time (the expression parser, the shell's grammar) is loaded.
_WARM_UP = b"""name: warm-up
description: what a share's process compiles first
owner: Engineer
inputs:
  - string: topic
allowedWritePaths: ["out/**"]
steps:
  - name: notes
    file-read: "notes/{{ topic }}.md"
  - bash: echo {{ topic }} | wc -c
    writes: ["out/count.txt"]
  - file-write: "out/{{ topic }}.md"
    content: "{{ notes }}"
  - if: "${{ topic == 'x' }}"
    then:
      - display: "x"
"""
#: How long the shares' processes are waited for once this process has checked its own
#: share: this many times what that took, and never less than `WAIT_LEAST` seconds. One
#: that has not answered by then (hung, or starved of a processor) is stopped and its
#: share checked here.
WAIT_TIMES = 10
WAIT_LEAST = 30.0
#: Changes with the layout of a request or an answer.
PROTOCOL = 1
#: A share's process: isolated (`-I`: neither the working directory, a repository's, nor
#: PYTHON* variables decide what is imported), with this process's import path.
_START = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); from catalyst_dsl.project.shards import serve; serve()"
)


def processors() -> int:
    """The processors this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def split(files: list[str], jobs: int, min_share: int = MIN_SHARE) -> list[list[str]]:
    """`files` in contiguous runs, at most `jobs` of them and none under `min_share` files:
    runs, not every n-th file, as neighbours in a folder tend to call each other."""
    count = max(1, min(jobs, len(files) // max(1, min_share)))
    size, extra = divmod(len(files), count)
    shares, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        shares.append(files[start:end])
        start = end
    return shares


@record(frozen=False)
class SplitCheck(CheckedFiles):
    """A library check put together from its shares; read as `project.check.LibraryCheck` is."""

    project: Project
    catalog: object
    files: list[str]
    diagnostics: list[Diagnostic]
    #: Every file a share compiled that has a source, by path.
    compiled_sources: dict[str, SourceFile]
    other_sources: dict[str, SourceFile] = factory(dict)
    #: The shares' processes (`finish` waits for them to write their cache entries).
    children: list = factory(list)


@record(frozen=False)
class Answer:
    """What one share sends back."""

    files: list[str]
    diagnostics: list[Diagnostic]
    sources: dict[str, SourceFile]
    other_sources: dict[str, SourceFile]
    #: The names of the share's files (`names.NameCard`), for C802.
    cards: list
    #: The calls of the files whose calls this share followed, and their playbooks' names.
    calls: dict[str, list]
    names: dict[str, str]
    facts: dict | None


class Plan:
    """How a check of `files` is split, or why it is not (`shares` None)."""

    def __init__(self, project: Project, files: list[str], jobs: int | None, min_share: int) -> None:
        from catalyst_dsl.project.library import Library, absolute

        self.files = [absolute(f) for f in files]
        self.shares: list[list[str]] | None = None
        runs = split(self.files, processors() if jobs is None else jobs, min_share)
        if len(runs) < 2:
            return
        self.library = Library(project, self.files)  # finds the library's files; compiles nothing
        if set(self.library.files) <= set(self.files):
            self.shares = runs

    def elsewhere(self, share: list[str]) -> frozenset[str]:
        return frozenset(self.files) - frozenset(share)


def check_split(
    project: Project,
    files: list[str],
    *,
    settings: list[Diagnostic] = (),
    scanned: frozenset[str] = frozenset(),
    overlay: dict[str, bytes] | None = None,
    use_cache: bool = True,
    advice: bool = True,
    jobs: int | None = None,
    min_share: int = MIN_SHARE,
    own_share: Callable[[list[str], frozenset[str]], object] | None = None,
    ready: list[Share] = (),
) -> SplitCheck | None:
    """The check of `files` split across processes, or None when it would not pay (fewer
    than two shares' worth of files, one processor) or does not apply (a playbook of the
    library is not among `files`). `use_cache`: the shares read and write the project's
    check cache. `own_share(files, elsewhere)`: how this process checks its share (the
    language server's, with its own library), returning a `LibraryCheck`. `ready`: shares'
    processes started already, used first. While
    `observed.recording()` is on, the facts the shares looked at are noted in it too."""
    plan = Plan(project, files, jobs, min_share)
    if plan.shares is None:
        return None
    request = {
        "protocol": PROTOCOL,
        "project": project,
        "scanned": frozenset(scanned),
        "overlay": overlay or {},
        "use_cache": use_cache,
        "advice": advice,
        "record": observed.is_recording(),
    }
    mine, *theirs = plan.shares
    children = list(ready[: len(theirs)])
    children += [Share() for _ in range(len(theirs) - len(children))]
    for child, share in zip(children, theirs):
        child.send({**request, "files": share, "elsewhere": plan.elsewhere(share)})
    started = time.monotonic()
    if own_share is not None:
        answers = [_answer(own_share(mine, plan.elsewhere(mine)), plan.elsewhere(mine), None)]
    else:
        answers = [check_share({**request, "files": mine, "elsewhere": plan.elsewhere(mine)})]
    now = time.monotonic()
    deadline = now + max(WAIT_LEAST, WAIT_TIMES * (now - started))
    for child, share in zip(children, theirs):
        answer = child.answer(deadline)
        if answer is None:  # its process failed: its files are checked here
            answer = check_share({**request, "files": share, "elsewhere": plan.elsewhere(share)})
        answers.append(answer)
    result = _together(project, plan, answers, list(settings))
    result.children = children
    return result


def _together(project: Project, plan: Plan, answers: list[Answer], settings: list[Diagnostic]) -> SplitCheck:
    from catalyst_dsl.checks.rules.cycles import check_cycles
    from catalyst_dsl.checks.rules.names import report_duplicates

    sink = DiagnosticSink()
    seen: set = set()
    sources: dict[str, SourceFile] = {}
    others: dict[str, SourceFile] = {}
    cards, checked, calls, names = [], [], {}, {}
    for answer in answers:
        checked += answer.files
        own = set(answer.files)
        for path, source in answer.sources.items():  # a file's text as the share checking it read it
            if path not in sources or path in own:
                sources[path] = source
        others.update(answer.other_sources)
        cards += answer.cards
        for path, edges in answer.calls.items():
            calls.setdefault(path, edges)
        for path, name in answer.names.items():
            names.setdefault(path, name)
        for diagnostic in answer.diagnostics:
            if diagnostic not in seen:  # a finding on a file two shares read (kai's index)
                seen.add(diagnostic)
                sink.items.append(diagnostic)
        if answer.facts:
            observed.merge(answer.facts)
    order = {path: i for i, path in enumerate(plan.library.files)}
    report_duplicates(sorted(cards, key=lambda card: order.get(card.path, len(order))), checked, sink)
    check_cycles(calls, names, set(checked), sink, project.config.max_depth)
    return SplitCheck(project, plan.library.catalog, checked, [*settings, *sink.sorted()], sources, others)


def check_share(request: dict) -> Answer:
    """Check one share in this process, with a library of its own."""
    from catalyst_dsl.project.cache.store import CheckCache
    from catalyst_dsl.project.check import check_project

    project = request["project"]
    cache = CheckCache.for_project(project) if request["use_cache"] else None
    if cache is not None and request.get("defer_entries"):
        cache.deferred = []  # written once the answer is out (`serve`)
    request["cache"] = cache
    with observed.recording() if request["record"] else contextlib.nullcontext() as facts:
        result = check_project(
            project,
            request["files"],
            scanned=request["scanned"],
            overlay=request["overlay"],
            cache=cache,
            rules=share_rules(request["advice"]),
            checked_elsewhere=request["elsewhere"],
        )
    return _answer(result, request["elsewhere"], dict(facts) if facts is not None else None)


def share_rules(advice: bool) -> tuple:
    from catalyst_dsl.checks.rules.library_rules import ADVICE_RULES, SHARE_RULES

    return (*SHARE_RULES, *ADVICE_RULES) if advice else SHARE_RULES


def _answer(result, elsewhere: frozenset[str], facts: dict | None) -> Answer:
    """A share's `LibraryCheck` as its answer: the calls of every file it followed (its own
    and those outside the library), without the steps they are made at."""
    from pathlib import Path

    from catalyst_dsl.checks.library_view import Edge
    from catalyst_dsl.checks.rules.names import name_cards

    library = result.library
    loaded = library.loaded()
    followed = [path for path in loaded if path not in elsewhere]
    calls = {
        path: [Edge(e.caller, e.target, e.kind, e.span, e.callee, e.guarded, e.dynamic) for e in library.edges(path)]
        for path in followed
    }
    names = {path: c.playbook.name if c.playbook else Path(path).stem for path, c in loaded.items()}
    return Answer(
        result.files,
        result.diagnostics,
        result.compiled_sources,
        result.other_sources,
        name_cards(library, result.files),
        calls,
        names,
        facts,
    )


class Share:
    """A process that checks one share: started first, then sent its request (a language
    server starts one as it starts, so the process's own start and imports are done by the
    time its first check is split). Its answer is read on a thread, so that a large answer
    never waits on a full pipe while this process checks its own share."""

    def __init__(self) -> None:
        import json
        import subprocess
        import tempfile

        self._answer: Answer | None = None
        self._thread: threading.Thread | None = None
        try:
            # Its errors in a file, read if it fails: a pipe nobody reads while it writes
            # its cache entries could fill and hold it.
            self._errors = tempfile.TemporaryFile()
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-c", _START, json.dumps([p for p in sys.path if p])],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
            )
        except OSError as error:
            log.warning("no process for a share of the check: %s", error)
            self._process = None

    def send(self, request: dict) -> None:
        if self._process is None:
            return
        try:
            payload = pickle.dumps({**request, "defer_entries": True}, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, ValueError, RecursionError) as error:
            log.warning("a share of %d files is checked here: %s", len(request["files"]), error)
            return
        self._thread = threading.Thread(target=self._talk, args=(payload,), daemon=True)
        self._thread.start()

    def _talk(self, payload: bytes) -> None:
        import io

        process = self._process
        try:
            process.stdin.write(payload)
            process.stdin.close()
            out = process.stdout.read()  # to its end: the answer is out, its entries are being written
            answer = _Reader(io.BytesIO(out)).load()
        except Exception as error:  # noqa: BLE001 - whatever the pipe or a broken answer raises, it is checked here
            log.warning("a share's process gave no answer: %s", error)
            return
        if isinstance(answer, Answer):
            self._answer = answer

    def answer(self, deadline: float | None = None) -> Answer | None:
        """Its answer, or None when it has none by `deadline` (`time.monotonic()`): its
        process is then stopped."""
        if self._thread is None:
            return None
        self._thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():
            log.warning("a share's process did not answer in time: its files are checked here")
            self._process.kill()
            self._thread.join()
        return self._answer

    def finish(self) -> None:
        """Wait for the process to end (it writes its entries of the check cache after
        answering); one never sent a request is stopped."""
        import subprocess

        if self._process is None:
            return
        if self._thread is None:
            self._process.kill()
        try:
            self._process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._thread is not None and self._process.returncode != 0:
            self._errors.seek(0)
            log.warning("a share's process failed: %s", self._errors.read().decode(errors="replace")[-2000:])
        self._errors.close()


class _Reader(pickle.Unpickler):
    """Reads an answer: catalyst's own classes and the few others an answer holds, never a
    function to call, whatever the bytes say."""

    _OTHERS = frozenset(
        {("array", "array"), ("array", "_array_reconstructor"), ("pathlib", "PosixPath"), ("pathlib", "WindowsPath")}
    )

    def find_class(self, module: str, name: str):
        if (module, name) in self._OTHERS:
            return super().find_class(module, name)
        if module.startswith("catalyst_dsl."):
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__ == module and found is not Share:
                return found
        raise pickle.UnpicklingError(f"an answer holds {module}.{name}")


def finish(result) -> None:
    """Wait for the shares' processes of a split check to end (nothing for another check)."""
    for child in getattr(result, "children", ()):
        child.finish()


def serve() -> None:
    """A share's process: one request on standard input, its answer on standard output,
    then its entries of the check cache. What a check needs is imported before the request
    is read: a process started ahead has it ready."""
    import gc

    from catalyst_dsl.compiler import compile_bytes

    # The answer goes out on a descriptor of its own; whatever else writes to standard
    # output (a library, a program the check runs) writes with the errors, never into it.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # A process for one check, gone at its end: the cyclic collector would only scan its
    # IR again and again (each file's is alive until the answer is sent).
    gc.disable()

    share_rules(True)
    compile_bytes(_WARM_UP, "warm-up.yaml")  # what a compile loads on first use (parsers, tables)
    try:
        request = pickle.load(sys.stdin.buffer)
    except EOFError:
        return  # started ahead and not needed: its parent closed the pipe
    if not isinstance(request, dict):
        raise SystemExit("a share's request is a dict")
    if request.get("protocol") != PROTOCOL:
        raise SystemExit(f"a share's request of protocol {request.get('protocol')}, not {PROTOCOL}")
    answer = check_share(request)
    answers.write(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
    answers.close()  # the end of the answer
    cache = request.get("cache")
    if cache is not None:
        cache.write_deferred()
