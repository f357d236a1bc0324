"""The check cache itself: compiled results by content, one sealed entry per file.

An entry's name is a hash of everything the result depends on: the file's path and
bytes, the build that checked it (`keys.code_fingerprint`), and the format. Action names
the file uses that are not built in are recorded with a digest of what the plugin
catalog says about them now (`facts`), and compared on every read, so installing or
upgrading a plugin recomputes the files that use it (and only those: a library of
built-in actions never scans the installed plugins).

Entries are JSON written by `codec` (never pickle) and sealed with keyed BLAKE2b (a MAC,
`digests.seal`) under the user's key. An entry whose seal, name, version, shape or plugin
digests do not check out is ignored and recomputed: it can never stand in for a file's
real findings, even when someone who may write the project (and so could as well edit
the playbooks) plants one.

Entries are written to a temporary file and renamed into place, so concurrent checks
never read half an entry; the last writer of identical content wins.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from catalyst_dsl._internal import digests
from catalyst_dsl.project.cache.codec import CacheEntryError, _Decoder, _Encoder, _pair, _registry
from catalyst_dsl.project.cache.facts import _missing, _plugin_digest, _recording, _text, _text_form
from catalyst_dsl.project.cache.keys import cache_key, code_fingerprint
from catalyst_dsl.syntax.source import SourceFile

if TYPE_CHECKING:
    from catalyst_dsl.actions.catalog import Catalog
    from catalyst_dsl.compiler import Compiled

# The compiler is imported when a file has to be compiled or read: a check that the
# cache answers whole (`replay`) loads none of it.

MAGIC = b"catalyst-check-cache 1\n"
#: The `.gitignore` the cache puts in its folder (when the folder is its own).
IGNORE_TEXT = "# catalyst's check cache: local, rebuilt when missing.\n*\n"
#: An entry larger than this is not a playbook's result: it is ignored, never parsed.
MAX_ENTRY_BYTES = 64 * 1024 * 1024
#: How an entry is opened: never through a link, and without waiting (a named pipe).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


#: Not looked for yet (a CheckCache's kept plugin names).
_UNREAD = object()


class CheckCache:
    """Compiled results by content in `directory`, sealed with `key`."""

    def __init__(self, directory: Path, key: bytes, fingerprint: str | None = None, *, read_only: bool = False) -> None:
        self.directory = Path(directory)
        #: Read entries, never write any (a what-if, which changes nothing).
        self.read_only = read_only
        self._key = key
        self._fingerprint = fingerprint or code_fingerprint()
        #: How many results were read from entries and how many were compiled (tests, benchmarks).
        self.hits = 0
        self.misses = 0
        self._ready = False
        self._shards: set[str] = set()
        self._plugin_names: frozenset[str] | None | object = _UNREAD
        #: The last catalog asked about and whether it declares just the built-in actions.
        self._catalog_seen: tuple[object, bool] = (None, False)
        self._plugins_kept = False
        #: When a list, the entries of files compiled are kept here, not written, until
        #: `write_deferred`.
        self.deferred: list | None = None

    @classmethod
    def for_project(cls, project, *, read_only: bool = False) -> CheckCache | None:
        """The project's cache, or None when the settings turn it off or no key can be made
        (or, `read_only`, when the user has no key yet: then no entry can be read either)."""
        if not project.config.check_cache:
            return None
        directory = project.resolve(project.config.cache_dir)
        try:
            resolved, root = directory.resolve(), Path(project.root).resolve()
        except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13)
            return None
        if not resolved.is_relative_to(root):
            return None  # a link out of the project: entries are written only inside it
        from catalyst_dsl.paths.reserved import is_git

        if any(is_git(part) for part in resolved.relative_to(root).parts):
            # git's own folder (as file systems that fold case name it): entries named
            # like its loose objects would spoil it.
            return None
        key = cache_key(make=not read_only)
        return None if key is None else cls(directory, key, read_only=read_only)

    def compiled(self, path: str, catalog: Catalog) -> Compiled:
        from catalyst_dsl.compiler import Compiled, read_playbook

        data = read_playbook(path)
        if isinstance(data, Compiled):
            return data  # unreadable or too large: nothing worth keeping
        return self.compiled_bytes(path, data, catalog)

    def compiled_bytes(self, path: str, data: bytes, catalog: Catalog) -> Compiled:
        """The result of `data`, read from `path` by the caller (the language server,
        which keeps the bytes it compiled), from its entry or compiled and kept."""
        from catalyst_dsl.compiler import compile_bytes

        if not self._holds_builtins(catalog):
            # A catalog with actions of the caller's own (a program that adds some): what
            # an entry holds was made with the built-in actions, and the names a file asks
            # beyond them are recorded (plugins); actions declared here would not be.
            return compile_bytes(data, path, catalog)
        name = digests.hexdigest(
            b"%s\0%s\0%s\0" % (self._fingerprint.encode(), os.fsencode(path), digests.hexdigest(data).encode())
        )
        found = self._read(name, path, data, catalog)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        if self.read_only:
            return compile_bytes(data, path, catalog)  # nothing is kept: no entry to encode
        asked: list[str] = []
        result = compile_bytes(data, path, _recording(catalog, asked))
        if self.deferred is not None:
            self.deferred.append((name, path, data, result, catalog, asked))
        else:
            self._write(name, path, data, result, catalog, asked)
        return result

    def write_deferred(self) -> None:
        """Write the entries kept back while `deferred` was a list (the language server
        publishes its first findings before it spends time encoding them)."""
        pending, self.deferred = self.deferred or [], None
        for entry in pending:
            self._write(*entry)

    def _holds_builtins(self, catalog: Catalog) -> bool:
        """Whether `catalog` declares the built-in actions and no others (asked once per catalog)."""
        if self._catalog_seen[0] is not catalog:
            from catalyst_dsl.actions.installed import builtin_catalog

            self._catalog_seen = (catalog, catalog.specs() == builtin_catalog().specs())
        return self._catalog_seen[1]

    # -- what the installed plugins declare ------------------------------------------------

    def plugin_digest(self, catalog: Catalog, action: str) -> str:
        """`_plugin_digest(catalog, action)`; for a name no entry point declares, answered
        from the names this environment's entry points declared when a check last listed
        them (kept as an entry, see `remember_plugins`), without importing
        importlib.metadata and reading every installed distribution (about 15 ms)."""
        if type(action) is str and not catalog.declares(action) and self._no_plugin_declares(catalog, action):
            from catalyst_dsl.project import observed

            observed.note("plugin", action, True)  # as `catalog.get` notes it
            return _missing(None)  # what `_plugin_digest` says of it, without the listing
        digest = _plugin_digest(catalog, action)
        if self._plugin_names is None and not self._plugins_kept:
            self.remember_plugins()  # listed just now, none kept: the next check reads them
        return digest

    def _no_plugin_declares(self, catalog: Catalog, action: str) -> bool:
        if not catalog.asks_installed_plugins:
            return False  # a catalog of its own (tests, the language server's): asked as it is
        if self._plugin_names is _UNREAD:
            self._plugin_names = self._read_plugin_names()
            if self._plugin_names is not None:
                from catalyst_dsl.actions.plugins import ACTIONS, installed

                installed().known(ACTIONS, self._plugin_names)  # the other checks ask the catalog
        return self._plugin_names is not None and action not in self._plugin_names

    def _plugins_entry(self, environment: str) -> str:
        from catalyst_dsl.actions.plugins import ACTIONS

        return self.entry_name(b"plugin names", ACTIONS.encode(), environment.encode())

    def _read_plugin_names(self) -> frozenset[str] | None:
        from catalyst_dsl.actions.plugins import environment

        body = self.read_sealed(self._plugins_entry(environment()))
        try:
            names = json.loads(body) if body is not None else None
        except ValueError:
            return None
        if type(names) is not list or any(type(name) is not str for name in names):
            return None
        return frozenset(names)

    def remember_plugins(self) -> None:
        """Keep the names the installed plugins declare, when this process listed them."""
        from catalyst_dsl.actions.plugins import ACTIONS, installed

        declared = installed().declared(ACTIONS)
        if self.read_only or declared is None:
            return
        names, environment = declared
        self.write_sealed(
            self._plugins_entry(environment),
            json.dumps(sorted(names), ensure_ascii=False).encode("utf-8", "surrogatepass"),
        )
        self._plugins_kept = True

    def _entry(self, name: str) -> Path:
        return self.directory / name[:2] / name[2:]

    def read_sealed(self, name: str) -> bytes | None:
        """The body of the entry `name` when its seal checks out under the user's key, else None."""
        try:
            fd = os.open(self._entry(name), _READ_FLAGS)
        except OSError:
            return None  # none, or a link (never written here)
        try:
            with open(fd, "rb") as handle:
                # A plain file only: a named pipe planted here would make the read wait
                # for a writer for ever (it was opened without waiting).
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                raw = handle.read(MAX_ENTRY_BYTES + 1)
        except OSError:
            return None
        if len(raw) > MAX_ENTRY_BYTES or not raw.startswith(MAGIC):
            return None
        seal, _, body = raw[len(MAGIC) :].partition(b"\n")
        if not digests.sealed(self._key, body, seal):
            return None
        return body

    def entry_name(self, *parts: bytes) -> str:
        """An entry's name: a hash of this build of the checker and of `parts`."""
        return digests.hexdigest(b"\0".join([self._fingerprint.encode(), *parts]))

    def _read(self, name: str, path: str, data: bytes, catalog: Catalog) -> Compiled | None:
        body = self.read_sealed(name)
        if body is None:
            return None
        try:
            return self._decode(body, name, path, data, catalog)
        except (CacheEntryError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
            return None  # damaged, foreign or forged: compiled again, and the entry replaced

    def _decode(self, body: bytes, name: str, path: str, data: bytes, catalog: Catalog) -> Compiled | None:
        from catalyst_dsl.compiler import Compiled

        header, _, rest = body.partition(b"\n")
        head = json.loads(header)
        if type(head) is not list or len(head) != 4 or head[0] != name or head[1] != path:
            return None
        _, _, plugins, form = head
        if type(plugins) is not list or any(
            self.plugin_digest(catalog, action) != digest for action, digest in map(_pair, plugins)
        ):
            return None
        source = None
        if form is not None:
            text = _text(data, form)
            if text is None:
                return None
            source = SourceFile(path, text)
        entry = json.loads(rest, object_hook=_Decoder(path, source).hook)
        if type(entry) is not dict:
            return None
        playbook, diagnostics, calls = entry["playbook"], entry["diagnostics"], entry["calls"]
        classes = _registry()
        if (
            playbook is not None
            and type(playbook) is not classes["Playbook"]
            or type(diagnostics) is not list
            or type(calls) is not list
            or any(type(d) is not classes["Diagnostic"] for d in diagnostics)
            or any(type(c) is not classes["CallSite"] for c in calls)
        ):
            raise CacheEntryError("an entry holds a playbook, its diagnostics and its calls")
        if diagnostics:
            from catalyst_dsl.diagnostics.codes import (
                CODES,
            )  # printing a finding looks its code's name up: it is loaded then anyway

            if any(d.code not in CODES for d in diagnostics):
                raise CacheEntryError("a finding's code is one of the table")
        return Compiled(path, source, playbook, diagnostics, calls)

    def _write(self, name: str, path: str, data: bytes, result: Compiled, catalog: Catalog, asked: list[str]) -> None:
        head = [
            name,
            path,
            [[action, self.plugin_digest(catalog, action)] for action in sorted(set(asked))],
            None if result.source is None else _text_form(data),
        ]
        entry = {"playbook": result.playbook, "diagnostics": result.diagnostics, "calls": result.calls}
        try:
            body = (
                json.dumps(head, ensure_ascii=False).encode("utf-8", "surrogatepass")
                + b"\n"
                + _Encoder(path, result.source).encode(entry)
            )
        except (CacheEntryError, UnicodeEncodeError):
            return  # something this format does not hold: the file is simply compiled each time
        self.write_sealed(name, body)

    def write_sealed(self, name: str, body: bytes) -> None:
        """Keep `body` as the entry `name`, sealed; a cache that cannot be written is passed over."""
        if self.read_only:
            return
        seal = digests.seal(self._key, body)
        target = self._entry(name)
        try:
            self._prepare()
            if target.parent.name not in self._shards:
                target.parent.mkdir(exist_ok=True)
                if not stat.S_ISDIR(os.lstat(target.parent).st_mode):
                    return  # a link (a project may come with one): entries are written only inside the project
                self._shards.add(target.parent.name)
            # Named by process and entry: two checks never share a temporary file.
            temporary = target.parent / f".tmp-{os.getpid()}-{target.name}"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(MAGIC + seal + b"\n" + body)
                os.replace(temporary, target)  # readers see the old entry or the new one, never half
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass  # a read-only project still checks; it only checks from scratch

    def _prepare(self) -> None:
        if self._ready:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        ignore = self.directory / ".gitignore"
        # Only into a folder of the cache's own: in one the project shares (`cache-dir`
        # set to the root, or to a folder of playbooks) a `*` would hide its other files
        # from git and from every later directory scan.
        if not ignore.exists() and _only_ours(self.directory):
            ignore.write_text(IGNORE_TEXT, encoding="utf-8")
        self._ready = True

    def clean(self) -> int:
        """Remove every entry (and the folder); returns how many entries there were."""
        return clean(self.directory)


def clean(directory: Path) -> int:
    """Remove the cache folder's entries, its `.gitignore` and the folder; the count of entries.

    Only names this module writes are removed (two hex digits, then hex names, and a
    `.gitignore` holding the text it writes), so a `cache-dir` pointed at a folder with
    other files in it loses none of them.
    """
    removed = 0
    try:
        shards = list(os.scandir(directory))
    except OSError:
        return 0
    for shard in shards:
        if not (shard.is_dir(follow_symlinks=False) and _hex(shard.name, 2)):
            continue
        for item in os.scandir(shard.path):
            if item.is_file(follow_symlinks=False) and (_hex(item.name, 62) or item.name.startswith(".tmp-")):
                os.unlink(item.path)
                removed += 1
        try:
            os.rmdir(shard.path)
        except OSError:
            pass
    ignore = Path(directory) / ".gitignore"
    try:
        if ignore.is_file() and ignore.read_text(encoding="utf-8") == IGNORE_TEXT:
            ignore.unlink()  # the cache's own: a .gitignore the project wrote there stays
    except (OSError, UnicodeDecodeError):
        pass
    try:
        os.rmdir(directory)
    except OSError:
        pass  # other files are in it: they are not ours
    return removed


def _only_ours(directory: Path) -> bool:
    """Whether the folder holds no name but those the cache writes (its shards)."""
    try:
        with os.scandir(directory) as listing:
            return all(entry.is_dir(follow_symlinks=False) and _hex(entry.name, 2) for entry in listing)
    except OSError:
        return False


def _hex(name: str, length: int) -> bool:
    return len(name) == length and all(c in "0123456789abcdef" for c in name)
