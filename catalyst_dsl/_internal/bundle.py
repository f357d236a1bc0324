"""The package's compiled modules in one file, read once per process.

A `catalyst check` or `--what-if` imports 100 to 160 of the package's small modules.
Python finds and loads each on its own (a finder's search, several `stat`s, opening and
reading its `.pyc`, building its spec), about 0.08 ms a module before its code runs: as
much as the check itself. This finder serves the package's modules from one file
instead, beside the `.pyc` files and under the same rules:

- it holds each module's code as marshalled bytes, unmarshalled only when the module is
  imported, with the size and time of the source it was compiled from; a module whose
  source differs (an edit, a checkout) is compiled from its source as usual, so the
  file can never run code that is not what the source says;
- it is written where Python writes bytecode (`__pycache__`, or `PYTHONPYCACHEPREFIX`),
  never when Python writes none (`PYTHONDONTWRITEBYTECODE`, `-B`), at the end of a
  process that compiled a module it lacked: the modules a process uses are added, so
  the file holds what the commands people run need, and a damaged or foreign file is
  ignored and written again;
- modules keep their usual `__file__`, `__spec__`, package path and loader methods
  (`SourceFileLoader`), so tracebacks, `inspect`, resources and reloading are unchanged.

`CATALYST_CODE_BUNDLE=off` turns it off, for comparing or debugging.
"""

from __future__ import annotations

import _imp
import marshal
import os
import sys
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader

#: The package's folder (this file is catalyst_dsl/_internal/bundle.py).
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "catalyst_dsl"

#: Names this format and the Python it was written by: another Python's bytecode (another
#: magic number) or another layout of the file is a file to ignore and write again.
FORMAT = b"catalyst-modules 2 " + sys.implementation.cache_tag.encode("ascii")


def bundle_path() -> str:
    """Where Python would write the package `__init__`'s bytecode, named for the bundle:
    the same folder, with the same `PYTHONPYCACHEPREFIX` rule."""
    name = f"catalyst-modules.{sys.implementation.cache_tag}.bin"
    if sys.pycache_prefix:
        return os.path.join(sys.pycache_prefix, PACKAGE_DIR.lstrip(os.sep), name)
    return os.path.join(PACKAGE_DIR, "__pycache__", name)


class _Loader(SourceFileLoader):
    """The usual loader of a source file, whose code comes from the bundle when the bundle
    has it for this very source, and is kept for the next bundle when it does not."""

    def __init__(self, fullname: str, path: str, finder: BundleFinder, stamp: tuple[int, int]) -> None:
        super().__init__(fullname, path)
        self._finder = finder
        self._stamp = stamp

    def get_code(self, fullname):  # noqa: ANN001, ANN201 (importlib's signature)
        served = self._finder.take(fullname, self._stamp)
        if served is not None:
            return served
        code = super().get_code(fullname)
        if code is not None:
            self._finder.learned(fullname, self.path, self._stamp, code)
        return code


class BundleFinder:
    """A meta-path finder for the package's modules (the package itself is imported
    before it is installed). Every other import goes on to Python's own finders."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._entries: Entries | _Index | None = None  # read on first use
        self._learned: Entries = {}

    # -- finding ------------------------------------------------------------------------

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001, ANN201 (importlib's signature)
        if not fullname.startswith(PACKAGE + ".") or fullname.endswith(".__main__"):
            return None  # `python -m` asks runpy for __main__'s code itself
        entries = self._entries if self._entries is not None else self._read()
        entry = entries.get(fullname)
        if entry is not None:
            origin = os.path.join(PACKAGE_DIR, entry[0])
            try:
                info = os.stat(origin)
            except OSError:
                info = None
            if info is not None and (info.st_mtime_ns, info.st_size) == (entry[1], entry[2]):
                # Built as Python's own finder builds it for a source file, without its search.
                package = origin.endswith(os.sep + "__init__.py")
                loader = _Loader(fullname, origin, self, (entry[1], entry[2]))
                spec = ModuleSpec(fullname, loader, origin=origin, is_package=package)
                spec.has_location = True
                if package:
                    spec.submodule_search_locations = [os.path.dirname(origin)]
                return spec
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not SourceFileLoader or not spec.origin:
            return spec  # a folder without __init__, an extension module: Python's own way
        try:
            info = os.stat(spec.origin)
        except OSError:
            return spec
        spec.loader = _Loader(fullname, spec.origin, self, (info.st_mtime_ns, info.st_size))
        return spec

    def take(self, fullname: str, stamp: tuple[int, int]):  # noqa: ANN201 (a code object)
        """The module's code from the bundle if it was compiled from a source of this size
        and time; None otherwise."""
        entries = self._entries if self._entries is not None else self._read()
        entry = entries.get(fullname)
        if entry is None:
            return None
        _, mtime_ns, size, code = entry
        if (mtime_ns, size) != stamp:
            return None
        try:
            served = marshal.loads(code)
        except Exception:  # noqa: BLE001 (damaged: compiled from the source, and written again at the end)
            return None
        if type(served) is not _CODE:
            return None
        # A copy of the package (its folder moved, sizes and times kept) names its own files
        # in tracebacks, as Python's own loader makes sure for a .pyc.
        _imp._fix_co_filename(served, os.path.join(PACKAGE_DIR, entry[0]))
        return served

    def learned(self, fullname: str, origin: str, stamp: tuple[int, int], code) -> None:  # noqa: ANN001
        relative = os.path.relpath(origin, PACKAGE_DIR)
        if not relative.startswith(os.pardir):  # a module of this copy of the package (always, but cheap to be sure)
            self._learned[fullname] = (relative, stamp[0], stamp[1], marshal.dumps(code))

    # -- the file -----------------------------------------------------------------------

    def _read(self) -> Entries | _Index:
        try:
            with open(self.path, "rb") as handle:
                self._entries = decode(handle.read())
        except OSError:
            self._entries = {}  # none yet: written at the end
        return self._entries

    def save(self) -> None:
        """Write the bundle again if this process compiled modules it lacked; the entries
        of modules whose source has changed since are left out."""
        if not self._learned or sys.dont_write_bytecode:
            return
        entries = dict((self._entries if self._entries is not None else self._read()).items())
        entries.update(self._learned)
        kept = {}
        for name, entry in entries.items():
            try:
                info = os.stat(os.path.join(PACKAGE_DIR, entry[0]))
            except OSError:
                continue
            if (info.st_mtime_ns, info.st_size) == (entry[1], entry[2]):
                kept[name] = entry
        self._learned.clear()
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            # Created, never opened through whatever stands at the name, as Python writes a .pyc.
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(encode(kept))
            os.replace(temporary, self.path)  # whole or not at all, for a process reading it
        except OSError:
            try:
                os.unlink(temporary)
            except OSError:
                pass


_CODE = type((lambda: None).__code__)

#: name -> (source path in the package's folder, its mtime_ns, its size, marshalled code)
Entries = dict[str, tuple[str, int, int, "bytes | memoryview"]]


def encode(entries: Entries) -> bytes:
    """The file: FORMAT, a line break, the length of the index (8 bytes), the index (each
    module's source, its time and size, and where its code lies after the index), then
    the modules' code one after the other."""
    index, blobs, offset = {}, [], 0
    for name, (relative, mtime_ns, size, code) in entries.items():
        index[name] = (relative, mtime_ns, size, offset, len(code))
        blobs.append(bytes(code))
        offset += len(code)
    header = marshal.dumps(index)
    return b"".join([FORMAT, b"\n", len(header).to_bytes(8, "little"), header, *blobs])


def decode(data: bytes) -> Entries | _Index:
    """The entries of a file `encode` wrote; of anything else (another version, another
    Python, damage of any kind), none, or only those that are well formed. An entry is
    checked and its code cut from `data` only when asked for: most processes import a
    few of the modules the file holds."""
    view = memoryview(data)
    start = len(FORMAT) + 1 + 8
    try:
        if view[: start - 8] != FORMAT + b"\n":
            return {}
        size = int.from_bytes(view[start - 8 : start], "little")
        index = marshal.loads(view[start : start + size])
    except Exception:  # noqa: BLE001 (damaged in any way: written again at the end)
        return {}
    return _Index(index, view, start + size) if type(index) is dict else {}


class _Index:
    """A file's index over its bytes: `get`, `in` and `items` as a dict of entries."""

    def __init__(self, index: dict, view: memoryview, base: int) -> None:
        self._index = index
        self._view = view
        self._base = base

    def get(self, name: str) -> tuple[str, int, int, memoryview] | None:
        place = self._index.get(name)
        if place is None or not _well_formed(name, place):
            return None
        start = self._base + place[3]
        if start + place[4] > len(self._view):
            return None  # cut short
        return (place[0], place[1], place[2], self._view[start : start + place[4]])

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def items(self):  # noqa: ANN201
        for name in self._index:
            entry = self.get(name)
            if entry is not None:
                yield name, entry


def _well_formed(name: object, place: object) -> bool:
    """An entry of the index as `encode` writes it."""
    return (
        type(name) is str
        and type(place) is tuple
        and len(place) == 5
        and type(place[0]) is str
        and all(type(number) is int and number >= 0 for number in place[1:])
    )


def install() -> BundleFinder | None:
    """Put the finder first on `sys.meta_path` (once) and save the bundle at exit."""
    if os.environ.get("CATALYST_CODE_BUNDLE", "").lower() in ("off", "0", "no", "false"):
        return None
    for finder in sys.meta_path:
        if isinstance(finder, BundleFinder):
            return finder
    finder = BundleFinder(bundle_path())
    sys.meta_path.insert(0, finder)
    import atexit

    atexit.register(finder.save)
    return finder
