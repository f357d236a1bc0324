"""The dialect registry: which dialect reads a file, and where scans look for them.

Every playbook format catalyst reads lowers to the one IR; this table is the only place
that knows which formats exist. A file's dialect is decided in this order:

1. by place: a file one level inside a dialect's folder (kai's `.playbooks/playbooks/`),
   or with a dialect's own suffix anywhere (cleo's `.cantbook`);
2. Markdown (`.md`) is the Markdown form of the native language;
3. by content: each dialect that sniffs looks at the YAML root, in table order; the first
   that claims it reads it;
4. otherwise the native YAML language.

A foreign dialect is a package under `catalyst_dsl/dialects/` whose reader module (named
in the table below) is imported only when a file of its own is read (so checking native
playbooks costs nothing for it), providing:

    compile_document(source, root, sink, catalog) -> ir.Playbook | None
        lower the YAML root node (None for an empty document) into the IR, reporting
        every mistake into `sink`;
    sniff(root, sink) -> bool                        (only when `sniffs` is set)
        whether a YAML file found elsewhere is this dialect's; a file that could be read
        either way is reported here (the dialect's own code) and left to the native
        language by returning False.
"""

from __future__ import annotations

import importlib
import os
from typing import Optional

from catalyst_dsl._internal.records import record


@record
class Dialect:
    name: str
    #: The module that reads it, imported on first use.
    module: str
    #: Suffixes that make a file this dialect's wherever it is.
    suffixes: tuple[str, ...] = ()
    #: Folders, as path components from the project root, whose files (one level deep, with
    #: one of `folder_suffixes`) are this dialect's.
    folders: tuple[tuple[str, ...], ...] = ()
    folder_suffixes: tuple[str, ...] = (".yaml",)
    #: File names in those folders that are not playbooks (a template, an index).
    not_playbooks: tuple[str, ...] = ()
    #: Whether `sniff` is asked about YAML files found elsewhere.
    sniffs: bool = False
    #: Top-level keys a document must have before `sniff` is asked, so that reading an
    #: ordinary native playbook never imports this dialect's module.
    sniff_needs: tuple[str, ...] = ()
    #: Whether calls and listings address its playbooks by file stem rather than by `name`.
    by_stem: bool = False
    #: `module:function` keeping the dialect's own record of a run (kai's session files),
    #: derived from the snapshot after each save: function(project_root, state_dir, playbook)
    #: returns a callable taking the run state. It lives in catalyst_dsl/integrations/ (it
    #: writes files as the run-time does), named here by text: a dialect never imports it.
    run_view: Optional[str] = None

    def reader(self):
        return importlib.import_module(self.module)

    def owns_place(self, path: str) -> bool:
        if path.endswith(self.suffixes) and self.suffixes:
            return True
        parts = _components(path)
        folder = tuple(parts[:-1])
        return (
            any(folder[-len(f) :] == f for f in self.folders)
            and parts[-1].endswith(self.folder_suffixes)
            and parts[-1] not in self.not_playbooks
        )


#: The foreign dialects, in the order their sniffing is tried. The native language (YAML and
#: Markdown) is not listed: it is what every file is when no dialect claims it.
DIALECTS: tuple[Dialect, ...] = (
    Dialect(
        "cleo",
        "catalyst_dsl.dialects.cleo.reader",
        suffixes=(".cantbook",),
        folders=((".cleo", "playbooks"),),
        folder_suffixes=(".cantbook",),
        sniffs=True,
        sniff_needs=("nodes", "version"),
        by_stem=True,
    ),
    Dialect(
        "kai",
        "catalyst_dsl.dialects.kai.reader",
        folders=((".playbooks", "playbooks"),),
        not_playbooks=("playbook.tpl.yaml",),
        sniffs=True,
        sniff_needs=("version", "steps"),
        run_view="catalyst_dsl.integrations.kai_view:run_view",
    ),
)


def by_place(path: str) -> Optional[Dialect]:
    """The dialect whose folder or suffix `path` is in, if any."""
    return next((d for d in DIALECTS if d.owns_place(path)), None)


def named(name: str) -> Optional[Dialect]:
    """The foreign dialect called `name` (a playbook's `dialect`), if it is one."""
    return next((d for d in DIALECTS if d.name == name), None)


def run_view(playbook, project_root, state_dir):
    """What keeps the dialect's own record of a run of `playbook` after each save, or None."""
    dialect = named(playbook.dialect)
    if dialect is None or dialect.run_view is None:
        return None
    module, _, function = dialect.run_view.partition(":")
    return getattr(importlib.import_module(module), function)(project_root, state_dir, playbook)


def address(playbook, path: str) -> str:
    """What calls and listings name a playbook by: its `name`, or its file stem where its
    dialect looks playbooks up that way (cleo)."""
    dialect = named(playbook.dialect)
    return os.path.splitext(os.path.basename(path))[0] if dialect is not None and dialect.by_stem else playbook.name


def by_content(root, sink) -> Optional[Dialect]:
    """The first sniffing dialect that claims the YAML `root`, if any."""
    keys = {k.value for k, _ in getattr(root, "pairs", ()) if isinstance(getattr(k, "value", None), str)}
    return next(
        (d for d in DIALECTS if d.sniffs and keys.issuperset(d.sniff_needs) and d.reader().sniff(root, sink)), None
    )


def scanned_suffixes() -> tuple[str, ...]:
    """Suffixes a directory scan takes besides the native ones."""
    return tuple(s for d in DIALECTS for s in d.suffixes)


def hidden_folders() -> tuple[tuple[str, ...], ...]:
    """Dot-folders (as path components) a directory scan enters for a dialect."""
    return tuple(f for d in DIALECTS for f in d.folders if any(part.startswith(".") for part in f))


def not_playbook(path: str) -> bool:
    """Whether `path` is a dialect's own file that is not a playbook: one of its named
    non-playbooks in its folder, or any file elsewhere under the hidden folder it keeps
    playbooks in (kai's index and session files under `.playbooks/`), which a scan of
    that hidden folder itself would otherwise take."""
    parts = _components(path)
    folder = tuple(parts[:-1])
    for d in DIALECTS:
        for f in d.folders:
            if folder[-len(f) :] == f:
                if parts[-1] in d.not_playbooks:
                    return True
            elif f[0].startswith(".") and f[0] in folder:
                return True
    return False


def _components(path: str) -> list[str]:
    return [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")] or [os.path.basename(path)]
