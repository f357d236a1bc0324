"""Files changed outside the editor, noticed by the server itself when the editor cannot
watch them for it.

An editor that offers dynamic registration of `workspace/didChangeWatchedFiles` is asked
to watch the playbooks and settings (`PATTERNS`), and tells the server of each change.
Some cannot: Neovim, on Linux, turns that capability off by default. Without it, a
playbook renamed or deleted by a checkout, a pull or a shell would change nothing the
editor shows until the next edit. The server then watches for itself: a thread looks at
the library's files every `INTERVAL` seconds (their names, sizes and modification times,
no content; about 10 ms of CPU for 2,000 playbooks) and asks for a library check when any
of that changed. Polling needs no dependency and behaves alike on every system; the check
it starts finds what changed by itself (each file's bytes against those it compiled).
"""

from __future__ import annotations

import os
import threading
from typing import Callable

from lsprotocol import types as lsp

#: Seconds between two looks at the files.
INTERVAL = 1.0
#: What the editor is asked to watch: every file a playbook, a dialect's file or the
#: settings may be in (a pattern the editor does not watch costs it nothing).
PATTERNS = [
    "**/*.{yaml,yml,md,cantbook}",
    "**/.playbooks/**",
    "**/catalyst.toml",
    "**/pyproject.toml",
]
SETTINGS_FILES = ("catalyst.toml", "pyproject.toml")


def registration() -> lsp.RegistrationParams:
    options = lsp.DidChangeWatchedFilesRegistrationOptions(
        watchers=[lsp.FileSystemWatcher(glob_pattern=p) for p in PATTERNS]
    )
    return lsp.RegistrationParams(
        registrations=[
            lsp.Registration(
                id="catalyst-watched-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
            )
        ]
    )


def can_register(capabilities: lsp.ClientCapabilities) -> bool:
    workspace = capabilities.workspace
    watched = workspace.did_change_watched_files if workspace is not None else None
    return bool(watched is not None and watched.dynamic_registration)


def signature(project) -> tuple:
    """What a change on disk alters: each playbook's path, size and modification time,
    and the settings files'."""
    from catalyst_dsl.project.discovery import discover_folders

    folders = [str(project.resolve(d)) for d in project.config.playbook_dirs]
    paths = [*discover_folders(folders), *(os.path.join(project.root, name) for name in SETTINGS_FILES)]
    seen = []
    for path in paths:
        try:
            status = os.stat(path)
        except OSError:
            continue  # gone between the listing and the look: the next look sees it
        seen.append((path, status.st_size, status.st_mtime_ns))
    return tuple(seen)


class Poller:
    """Looks at the files of the project last checked every `interval` seconds, and calls
    `changed()` when they differ from what they were when it was checked."""

    def __init__(self, changed: Callable[[], None], interval: float = INTERVAL) -> None:
        self._changed = changed
        self._interval = interval
        self._lock = threading.Lock()
        #: The project last checked, and the signature of its files when the check began.
        self._seen: tuple[object, tuple] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="catalyst-file-poller", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def checking(self, project) -> None:
        """A library check of `project` begins: what it reads is what the files are now
        (taken before it reads them, so that a change while it runs is seen afterwards)."""
        seen = signature(project)
        with self._lock:
            self._seen = (project, seen)

    def _run(self) -> None:
        import logging

        while not self._stop.wait(self._interval):
            try:
                with self._lock:
                    seen = self._seen
                if seen is None:
                    continue
                project, before = seen
                now = signature(project)
                if now != before:
                    with self._lock:
                        if self._seen is seen:  # else a check began meanwhile, which saw these files
                            self._seen = (project, now)
                    self._changed()
            except Exception:  # a look that fails (a folder gone mid-scan) is tried again
                logging.getLogger("catalyst.lsp").exception("looking for changed files failed")
