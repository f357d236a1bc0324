"""What-if: the performer that records effects instead of performing them.

The engine runs a what-if exactly as a real run, through the same gateway and the
same action code; only the performer differs. Writes land in an overlay of the project
(later steps of the same plan read what earlier ones would have written), each becoming
a unified diff against the file as it is; processes are never started: they are
`unknown`, with the reason.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from catalyst_dsl.runtime.effects.performing import ProcessOutcome, Target

from catalyst_dsl.runtime.effects.gateway import RealPerformer

if TYPE_CHECKING:
    from catalyst_dsl.runtime.effects.tracked import TrackedFiles

#: The effects recorded for the step being simulated (a list per step; per thread of a
#: `parallel` group through the context it copies).
EFFECTS: contextvars.ContextVar[list | None] = contextvars.ContextVar("catalyst_effects", default=None)

#: Diffs of files larger than this are summarised, not shown line by line.
MAX_DIFF_BYTES = 256 * 1024


class Unknowable(Exception):
    """An effect a what-if cannot simulate; its step's result is unknown downstream."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ContentNotShown(Unknowable):
    """A file that exists but whose content a what-if does not show (runtime/effects/tracked.py):
    its reader's result is unknown, while the file's existence is not a secret."""


def record(effect: dict[str, Any]) -> None:
    effects = EFFECTS.get()
    if effects is not None:
        effects.append(effect)


class RecordingPerformer:
    """Keeps the files as the run would leave them, and records every change as a diff.

    A what-if never waits and contacts no host unless asked: a read of the network (GET,
    HEAD) is shown with its result unknown, or sent once with `refresh` (`--refresh`, like
    Terraform's plan refresh); actions make one attempt (`simulated`), never retries.
    """

    #: Effects are simulated: actions do not retry or wait.
    simulated = True

    def __init__(self, refresh: bool = False, files: "TrackedFiles | None" = None) -> None:
        #: path -> the content the run would leave (None: deleted).
        self.overlay: dict[Path, bytes | None] = {}
        self._disk = RealPerformer()
        self.refresh = refresh
        #: What the plan may read and show of the files on disk (None: anything the gateway allows).
        self.files = files

    def read_file(self, target: Target, limit: int = 50 * 1024 * 1024) -> bytes | None:
        """The file as the run would find it. What the plan wrote itself is shown; on disk,
        `.git/` and anything outside the project are never read, and an untracked file's
        content is unknown (ContentNotShown)."""
        if target.path in self.overlay:
            return self.overlay[target.path]
        if self.files is not None:
            refused = self.files.refusal(target.path)
            if refused is not None:
                raise Unknowable(f"'{target.written}' {refused}")
        data = self._disk.read_file(target, limit)
        if data is not None and self.files is not None:
            hidden = self.files.hidden(target.path)
            if hidden is not None:
                raise ContentNotShown(f"'{target.written}': {hidden}")
        return data

    def _before(self, target: Target) -> bytes | None | ContentNotShown:
        """The file before a change, or why its content is not shown."""
        try:
            return self.read_file(target, 1 << 62)
        except ContentNotShown as hidden:
            return hidden

    def listing(self, directory: Path) -> tuple[set[Path], set[Path]]:
        """Files the run would add under `directory`, and files it would delete there."""
        refused = self.files.refusal(directory) if self.files is not None else None
        if refused is not None:
            raise Unknowable(f"the directory {refused}")
        added = {p for p, data in self.overlay.items() if data is not None and directory in p.parents}
        removed = {p for p, data in self.overlay.items() if data is None and directory in p.parents}
        return added, removed

    def write_file(self, target: Target, data: bytes, *, sync: bool = True) -> None:
        before = self._before(target)
        self.overlay[target.path] = data
        name = target.relative or target.written
        if isinstance(before, ContentNotShown):
            record(
                {"change": "modify", "path": name, "diff": f"{before.reason}; the new content is {len(data)} bytes\n"}
            )
        elif before is None:
            record({"change": "create", "path": name, "diff": unified_diff(name, None, data)})
        elif before == data:
            record({"change": "no-op", "path": name})
        else:
            record({"change": "modify", "path": name, "diff": unified_diff(name, before, data)})

    def delete_file(self, target: Target) -> bool:
        before = self._before(target)
        name = target.relative or target.written
        if before is None:
            record({"change": "no-op", "path": name, "reason": "the file does not exist"})
            return False
        self.overlay[target.path] = None
        shown = f"{before.reason}\n" if isinstance(before, ContentNotShown) else unified_diff(name, before, None)
        record({"change": "delete", "path": name, "diff": shown})
        return True

    @contextmanager
    def script(self, target: Target, data: bytes) -> Iterator[None]:
        """A step's script: written, and deleted after, as any file."""
        self.write_file(target, data, sync=False)
        try:
            yield
        finally:
            self.delete_file(target)

    def run_process(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float | None,
        on_output: Callable[[str, str], None],
        stdin: str | None,
        confinement=None,
    ) -> ProcessOutcome:
        raise Unknowable(f"`{Path(argv[0]).name}` would run a program, which a what-if never starts")

    def send(self, request):
        """Reads (GET, HEAD) are sent for real with `refresh`, else their result is unknown;
        anything else is recorded."""
        if request.method.upper() in ("GET", "HEAD"):
            if self.refresh:
                return _send_for_real(request)
            raise Unknowable(
                f"{request.method.upper()} {request.url} would read from the network, "
                "which a what-if does only with --refresh"
            )
        raise Unknowable(
            f"{request.method.upper()} {request.url} would change a remote system, which a what-if never does"
        )


def unified_diff(name: str, before: bytes | None, after: bytes | None) -> str:
    """A unified diff of one file, LF only; binary or huge files are described instead."""
    old, new = _text(before), _text(after)
    if old is None or new is None:
        sizes = f"{len(before or b'')} -> {len(after or b'')} bytes"
        return f"binary or large file changed ({sizes})\n"
    from catalyst_dsl._internal.line_diff import unified_text  # only when a file changes

    return unified_text(
        old,
        new,
        "/dev/null" if before is None else f"a/{name}",
        "/dev/null" if after is None else f"b/{name}",
    )


def _text(data: bytes | None) -> str | None:
    if data is None:
        return ""
    if len(data) > MAX_DIFF_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None


def _send_for_real(request):
    from catalyst_dsl.runtime.effects.network import send

    return send(request)
