"""The check cache: each playbook's compiled result kept by content, so that checking an
unchanged library reads its files' results instead of parsing them again.

An entry is one file in the project's cache directory (the `cache-dir` setting, default
`.xe/cache/`, which holds a `.gitignore` of `*` when it is a folder of its own). Its
name is a hash of everything the result depends on: the file's path and bytes,
catalyst's version and the code that checked it (the size and time of each file of the
package), and the format. Action names the file uses that are not built in are
recorded with a digest of what the plugin catalog says about them now, and compared on
every read, so installing or upgrading a plugin recomputes the files that use it (and
only those: a library of built-in actions never scans the installed plugins).

Entries are JSON written by this module (never pickle) and sealed with keyed BLAKE2b
(a MAC, `digests.seal`) under a key private to the user
(`$XDG_CACHE_HOME/catalyst/cache-key`, mode 0600, made on first use). An entry whose
seal, name, version, shape or plugin digests do not check out is ignored and recomputed:
it can never stand in for a file's real findings, even when someone who may write the
project (and so could as well edit the playbooks) plants one.
Without a usable key (no home, a key readable by others) the cache is off.

The seal is where trust begins. Someone who can read the key can seal any playbook at
all, so the decoder does not try to prove a sealed entry harmless: it refuses what this
module never writes where that is cheap to see on each record (a field of one class, a
span, a finding's code). Checking every field against its whole annotation cost about
3 ms of each read of a large entry (the kitchen-sink's 11 ms became 14-15).

Entries are written to a temporary file and renamed into place, so concurrent checks
never read half an entry; the last writer of identical content wins.
"""

from __future__ import annotations

import functools
import json
import operator
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from typing import TYPE_CHECKING

from catalyst_dsl import __version__, digests
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl import records
from catalyst_dsl.syntax.source import SourceFile, Span

if TYPE_CHECKING:
    from catalyst_dsl.actions.catalog import Catalog
    from catalyst_dsl.compiler import Compiled

# The compiler is imported when a file has to be compiled or read: a check that the
# cache answers whole (check_replay) loads none of it.

#: Changes whenever the layout of an entry does.
FORMAT = 5
MAGIC = b"catalyst-check-cache 1\n"
KEY_FILE = "cache-key"
#: The `.gitignore` the cache puts in its folder (when the folder is its own).
IGNORE_TEXT = "# catalyst's check cache: local, rebuilt when missing.\n*\n"
#: An entry larger than this is not a playbook's result: it is ignored, never parsed.
MAX_ENTRY_BYTES = 64 * 1024 * 1024
#: How an entry is opened: never through a link, and without waiting (a named pipe).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


#: Not looked for yet (a CheckCache's kept plugin names).
_UNREAD = object()


class CacheEntryError(ValueError):
    """An entry that does not decode into the classes and shapes written here."""


# -- where the key and the entries live ------------------------------------------------


def user_cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """`$XDG_CACHE_HOME/catalyst`, else `~/.cache/catalyst`; None when there is no home."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        home = environ.get("HOME") or os.path.expanduser("~")
        if not home or home == "~":
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "catalyst"


def cache_key(environ: Mapping[str, str] | None = None, *, make: bool = True) -> bytes | None:
    """The user's private sealing key, made on first use (unless `make` is false); None
    when none can be used."""
    directory = user_cache_dir(environ)
    if directory is None:
        return None
    path = directory / KEY_FILE
    if not make and not path.is_file():
        return None
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            # Created whole or not at all: of two first checks, one key wins and both read it.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            import secrets  # only to make the key: every later check reads it

            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(secrets.token_hex(32) + "\n")
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or (
            os.name == "posix" and (info.st_mode & 0o077 or info.st_uid != os.getuid())
        ):
            return None  # readable by others, or not ours: it seals nothing
        text = path.read_bytes().decode("ascii").strip()  # not read_text: its codec lookup imports encodings.ascii
        return bytes.fromhex(text) if len(text) == 64 else None
    except (OSError, ValueError):
        return None


def code_fingerprint(package: str | None = None) -> str:
    """catalyst's version, the Python that runs it, and the size and time of each of its
    files (of `package`, the folder of catalyst_dsl unless given, and of the grammar
    beside it): a different build of the checker, or the same source tree run by another
    Python (another standard library, another libyaml build beside it), never reads
    another's results."""
    package = package or os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    stamps = [f"{__version__}\0{FORMAT}\0{sys.implementation.cache_tag}\0{sys.version}"]
    for root in (package, os.path.join(os.path.dirname(package), "grammar")):
        _stamp_files(root, stamps)
    return digests.hexdigest("".join(stamps).encode("utf-8", "surrogatepass"))


def _stamp_files(directory: str, stamps: list[str]) -> None:
    """Each source file under `directory` (sub-folders first in name order, `__pycache__`
    left out) as its path, size and time, appended to `stamps`."""
    try:
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return  # no such folder (an installed package has no grammar/ beside it)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):  # as os.walk: a link to a folder is not followed
            if entry.name != "__pycache__":
                _stamp_files(entry.path, stamps)
        elif entry.name.endswith((".py", ".lark", ".json", ".toml")):
            info = entry.stat()
            stamps.append(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}\n")


# -- the cache ---------------------------------------------------------------------------


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
            return None  # git's own folder (as file systems that fold case name it): entries named like its loose objects would spoil it
        key = cache_key(make=not read_only)
        return None if key is None else cls(directory, key, read_only=read_only)

    def compiled(self, path: str, catalog: Catalog) -> Compiled:
        from catalyst_dsl.compiler import Compiled, compile_bytes, read_playbook

        data = read_playbook(path)
        if isinstance(data, Compiled):
            return data  # unreadable or too large: nothing worth keeping
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
        self._write(name, path, data, result, catalog, asked)
        return result

    def _holds_builtins(self, catalog: Catalog) -> bool:
        """Whether `catalog` declares the built-in actions and no others (asked once per catalog)."""
        if self._catalog_seen[0] is not catalog:
            from catalyst_dsl.actions.catalog import builtin_catalog

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


# -- what else a result depends on -------------------------------------------------------


def _recording(base: Catalog, asked: list[str]) -> Catalog:
    """The catalog as it is, noting in `asked` each name it had to ask the plugins about."""
    return _recording_class()(base, asked)


@functools.lru_cache(maxsize=1)
def _recording_class() -> type:
    from catalyst_dsl.actions.catalog import Catalog

    class Recording(Catalog):
        def __init__(self, base: Catalog, asked: list[str]) -> None:
            self._specs = base._specs
            self._base = base
            self._asked = asked
            self._fallback = base._fallback

        def get(self, name: str):
            if name not in self._specs:
                self._asked.append(name)
            return self._base.get(name)

    return Recording


def _plugin_digest(catalog: Catalog, action: str) -> str:
    """What the catalog says about an action that is not built in, as a digest."""
    if not isinstance(action, str):
        raise CacheEntryError("an action name is text")
    spec = catalog.get(action)
    return _said(repr(spec)) if spec is not None else _missing(catalog.why_missing(action))


def _missing(why: str | None) -> str:
    """The digest of an action no one declares (`why`: a plugin that declares it but failed)."""
    return _said(f"missing: {why}")


def _said(text: str) -> str:
    return digests.hexdigest(text.encode("utf-8", "surrogatepass"))


def _text_form(data: bytes) -> list:
    """How the file's text comes from its bytes (see `_text`): [bom, length]."""
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data[3 if bom else 0 :].decode("utf-8")
    return [bom, len(text.replace("\r\n", "\n").replace("\r", "\n"))]


def _text(data: bytes, form) -> str | None:
    """The text `decode` made of these bytes (a result with a source decoded without error)."""
    if not (isinstance(form, list) and len(form) == 2 and isinstance(form[0], bool) and type(form[1]) is int):
        raise CacheEntryError("the text form is [bom, length]")
    try:
        text = data[3 if form[0] else 0 :].decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if len(text) == form[1] else None


# -- the format --------------------------------------------------------------------------


def _classes() -> dict[str, type]:
    """Every class an entry may name: the IR, expressions, types, diagnostics, call sites."""
    from catalyst_dsl.checks.call_sites import CallSite
    from catalyst_dsl.diagnostics import model
    from catalyst_dsl.ir import nodes, types
    from catalyst_dsl.syntax import expr_ast

    found: dict[str, type] = {}
    for module in (nodes, types, expr_ast):
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and records.is_record(value):
                found[value.__name__] = value
    for cls in (CallSite, model.Diagnostic, model.Label):
        found[cls.__name__] = cls
    return found


@records.record
class _Shape:
    """How one class is kept: its fields (attribute, init argument) and which of them
    JSON turns from tuples into arrays (and back), hold dicts, or hold any scalar."""

    name: str
    fields: tuple[tuple[str, str], ...]
    tuples: tuple[int, ...]
    nested_tuples: tuple[int, ...]
    dicts: tuple[int, ...]
    scalars: tuple[int, ...]
    #: Fields that hold a span: one of this file not yet positioned is kept as its
    #: offsets (one number) right there, not as a tagged object (a third of an entry's objects).
    spans: tuple[int, ...] = ()
    #: Fields whose value is one exact class (or None where the field may be empty): text,
    #: a whole number, a truth value, a span or one of the kept records. An entry that
    #: says otherwise is not one this module wrote, whatever its seal.
    typed: tuple[tuple[int, tuple[type, ...]], ...] = ()

    def read(self, value) -> list:
        """The values of the kept fields, in order."""
        if len(self.fields) == 1:
            return [getattr(value, self.fields[0][0])]
        return list(self._getter(value)) if self.fields else []

    @property
    def _getter(self):
        return _GETTERS[self.name]


_CLASSES: dict[str, type] | None = None
_SHAPES: dict[type, _Shape] = {}
_GETTERS: dict[str, operator.attrgetter] = {}
#: Fields that are never kept: a template's map back into the YAML nodes (`smap`) and the
#: type its place expects (`expected`) serve the file's own checks, which a cached result
#: has had already; nothing reads them from a playbook that is checked or run as a whole
#: (the language server compiles its own). The types were a sixteenth of an entry's records.
_DROPPED = {"smap", "expected"}
_SCALARS = (str, int, float, bool, type(None))


def _registry() -> dict[str, type]:
    """Every class an entry may name, by name (`_classes`)."""
    global _CLASSES
    if _CLASSES is None:
        _CLASSES = _classes()
    return _CLASSES


def _shape(cls: type) -> _Shape | None:
    """How records of `cls` are kept, or None when it is not a kept class. Worked out
    the first time a class is met, not for all of them at once: an entry names about
    half of them (working out all 55 was about 1.5 ms of every what-if)."""
    shape = _SHAPES.get(cls)
    if shape is not None:
        return shape
    name = cls.__name__
    classes = _registry()
    if classes.get(name) is not cls:
        return None
    every = [f for f in records.fields(cls) if f.init]
    # In `__init__`'s order (positional parameters, then keyword-only ones).
    kept = [f for f in every if not f.kw_only and f.name not in _DROPPED] + [
        f for f in every if f.kw_only and f.name not in _DROPPED
    ]
    kinds = [str(f.type).replace("Optional[", "") for f in kept]
    typed = tuple(_typed(kept, classes))
    if len(kept) > 1:
        _GETTERS[name] = operator.attrgetter(*(f.name for f in kept))
    shape = _SHAPES[cls] = _Shape(
        name,
        tuple((f.name, f.alias or f.name.lstrip("_")) for f in kept),
        tuple(i for i, k in enumerate(kinds) if k.startswith("tuple[")),
        tuple(i for i, k in enumerate(kinds) if k.startswith("tuple[tuple[")),
        tuple(i for i, k in enumerate(kinds) if k.startswith("dict[")),
        tuple(i for i, k in enumerate(kinds) if k == "object"),
        tuple(i for i, allowed in typed if Span in allowed),
        typed,
    )
    return shape


def _typed(kept: list, classes: dict[str, type]):
    """(index, the classes it may hold) of each kept field whose type is one class (with
    the kept records made from it)."""
    simple = {"str": str, "int": int, "bool": bool, "float": float, "Span": Span}
    for i, f in enumerate(kept):
        written = str(f.type)
        optional = written.startswith("Optional[") or written.endswith("| None")
        name = written.removeprefix("Optional[").removesuffix("]").removesuffix(" | None").strip("'\"")
        kind = simple.get(name) or classes.get(name)
        empty = (type(None),) if optional else ()
        if kind is float:
            yield i, (float, int) + empty
        elif kind in (str, int, bool, Span):
            yield i, (kind,) + empty
        elif kind is not None:  # a kept record, or a base of kept records (a type of the IR)
            yield i, tuple(c for c in classes.values() if issubclass(c, kind)) + empty


class _Encoder:
    """The `default` of json.dumps, for what JSON has no form of: objects as
    {"@": class, "f": [fields]}, spans of this file not yet positioned as {"o": offsets}
    (`Span.packed_in`: its two offsets into the text as one number), positioned ones as {"s": [line, col, end line, end col]}
    (another file's as {"S": [file, ...]}), dicts as {"d": [[key, value], ...]}, a
    severity as {"v": [value]}. Tuples become arrays; the decoder knows which fields hold them."""

    def __init__(self, path: str, source: SourceFile | None) -> None:
        self.path = path
        self.source = source

    def encode(self, value) -> bytes:
        try:
            text = json.dumps(
                value, default=self.default, ensure_ascii=False, separators=(",", ":"), check_circular=False
            )
        except RecursionError:
            raise CacheEntryError("nested too deeply") from None
        return text.encode("utf-8", "surrogatepass")

    def default(self, value):
        kind = type(value)
        if kind is Span:
            packed = value.packed_in(self.source)
            if packed is not None:
                return {"o": packed}  # not positioned yet: kept as offsets
            if value.file == self.path:
                return {"s": [value.line, value.col, value.end_line, value.end_col]}
            return {"S": [value.file, value.line, value.col, value.end_line, value.end_col]}
        shape = _shape(kind)
        if shape is not None:
            fields = shape.read(value)
            for i in shape.spans:
                span = fields[i]
                if type(span) is Span:
                    packed = span.packed_in(self.source)
                    if packed is not None:
                        fields[i] = packed
            for i in shape.dicts:
                if fields[i] is not None:
                    fields[i] = {"d": list(fields[i].items())}
            for i in shape.scalars:
                if type(fields[i]) not in _SCALARS and _shape(type(fields[i])) is None:
                    raise CacheEntryError(f"a {type(fields[i]).__name__} in {shape.name}")
            return {"@": shape.name, "f": fields}
        if kind is Severity:
            return {"v": [value.value]}
        raise CacheEntryError(f"cannot keep a {kind.__name__}")


class _Decoder:
    """The reverse of `_Encoder`, run by the JSON parser on each object as it is read:
    only the classes of `_classes`, each with exactly its own fields."""

    def __init__(self, path: str, source: SourceFile | None) -> None:
        self.path = path
        self.source = source
        #: A span from its packed offsets, or None when they are none of this file's.
        self._unpack_number = source.unpack if source is not None else _no_source
        self.hook = self._records(_PLANS, self._tagged, self._unpack_number)

    @staticmethod
    def _records(plans: dict[str, tuple], tagged, unpack):
        """The hook: a record from each {"@": class, "f": fields}, the rest to `tagged`.
        A closure over what it reads for each of an entry's thousands of objects (a
        method looking them up on `self` and on the class's shape took a third longer)."""

        def hook(value: dict):
            if "@" not in value:
                return tagged(value)
            name = value["@"]
            count, spans, typed, tuples, nested, make = plans[
                name
            ]  # KeyError for a name not kept (the entry is refused)
            values = value["f"]
            if len(value) != 2 or type(values) is not list or len(values) != count:
                raise CacheEntryError(f"{name} has {count} fields")
            for i in spans:
                if type(values[i]) is int:
                    # `_Decoder._unpack` inline (a call fewer for each of thousands of spans).
                    span = unpack(values[i])
                    if span is None:
                        raise CacheEntryError("offsets into the file's text")
                    values[i] = span
            for i, kinds, kind in typed:
                if type(values[i]) not in kinds:
                    raise CacheEntryError(f"{name} holds a {type(values[i]).__name__} where it keeps a {kind}")
            if tuples:  # most classes hold no tuple (and `nested` is a part of `tuples`): no loop begun for them
                for i in tuples:
                    if type(values[i]) is list:
                        values[i] = tuple(values[i])
                for i in nested:
                    if values[i] is not None:
                        values[i] = tuple(tuple(item) for item in values[i])
            # Made without `__init__` and its keyword arguments (a third of the decoding):
            # the values are checked above; a dropped field gets its default.
            return make(values)

        return hook

    def _tagged(self, value: dict):
        if len(value) != 1:
            return value  # the entry itself, checked by the reader
        ((tag, body),) = value.items()
        if tag == "o":
            return self._unpack(body)
        if type(body) is not list:
            raise CacheEntryError("a tagged value holds a list")
        if tag == "s":
            return Span(self.path, *_ints(body, 4))
        if tag == "S":
            if len(body) != 5 or type(body[0]) is not str:
                raise CacheEntryError("a span names its file")
            return Span(body[0], *_ints(body[1:], 4))
        if tag == "d":
            return dict(_pair(item) for item in body)
        if tag == "v":
            return Severity(*body)
        raise CacheEntryError(f"an unknown tag {tag!r}")

    def _unpack(self, packed: int) -> Span:
        span = self._unpack_number(packed)
        if span is None:
            raise CacheEntryError("offsets into the file's text")
        return span


def _no_source(packed: int) -> None:
    return None  # a result without a source keeps no offsets: any it holds is refused


class _Plans(dict):
    """Name -> what the decoder does with a record of that class: (the number of kept
    fields, the fields that hold spans, the typed fields as (index, the classes allowed,
    the first one's name), the fields that hold tuples and tuples of tuples, the maker
    of its records from the kept fields' values). Each made when an entry first names
    its class; a name that is no kept class's is a KeyError (the entry is refused)."""

    def __missing__(self, name: str) -> tuple:
        cls = _registry()[name]
        shape = _shape(cls)
        make = records.maker(cls, tuple(attribute for attribute, _ in shape.fields))
        typed = tuple((i, frozenset(kinds), kinds[0].__name__) for i, kinds in shape.typed)
        plan = self[name] = (len(shape.fields), shape.spans, typed, shape.tuples, shape.nested_tuples, make)
        return plan


_PLANS = _Plans()


def _ints(values: list, count: int) -> list[int]:
    # Positions are never negative and never text or truth values: a span that holds one
    # would be rendered (or compared) later in the check and fail there, not here.
    if len(values) != count or any(type(n) is not int or n < 0 for n in values):
        raise CacheEntryError("a span is four whole numbers")
    return values


def _pair(item) -> tuple:
    if type(item) is not list or len(item) != 2:
        raise CacheEntryError("a dict holds pairs")
    return item[0], item[1]
