"""Plugins: actions and AI adapters other distributions register through entry points.

`catalyst.actions` entry points load an object with `spec` (an ActionSpec, declared like
the built-ins) and `run(ctx, config)`; `catalyst.adapters` entry points load a factory
`(options) -> AIAdapter`. Nothing is imported until a name is asked for (or everything
is listed), and a plugin that fails is reported by name with where it came from while
the others still load: one broken distribution never stops a run or a check.
"""

from __future__ import annotations

import functools
import os
import re
import site
import stat
import sys
import threading
from typing import Any, Callable, Iterable, Mapping

from catalyst_dsl._internal import digests
from catalyst_dsl.actions.builtin import BUILTIN_ACTIONS
from catalyst_dsl.actions.catalog import RESERVED_STEP_KEYS, ActionSpec, Catalog, Effect, WhatIf
from catalyst_dsl.ir.types import ObjectT, Type
from catalyst_dsl._internal.records import record

ACTIONS = "catalyst.actions"
ADAPTERS = "catalyst.adapters"
#: Adapter names plugins may not take.
BUILTIN_ADAPTERS = ("mock",)


@record
class PluginAction:
    spec: ActionSpec
    run: Callable[[Any, Any], Any]
    #: The distribution and entry point it came from, for messages.
    origin: str


@record
class PluginProblem:
    """A plugin that was not loaded, and why."""

    group: str
    name: str
    origin: str
    message: str

    def __str__(self) -> str:
        return f"plugin '{self.name}' ({self.origin}): {self.message}"


class _Refused(Exception):
    """A plugin loaded but does not fit; the message says how."""


def _origin(entry_point: Any) -> str:
    where = f"{getattr(entry_point, 'name', '?')} = {getattr(entry_point, 'value', '?')}"
    try:
        dist = entry_point.dist
        name, version = dist.name, dist.version
    except Exception:  # no distribution (a bare EntryPoint) or unreadable metadata
        return where
    return f"{name} {version}, {where}"


class Plugins:
    """The plugins installed in this environment, loaded on demand and at most once.

    `entry_points_fn` is `installed_entry_points` (injectable for tests); it is called
    with `group=` only.
    """

    def __init__(
        self, entry_points_fn: Callable[..., Iterable[Any]] | None = None, *, builtins: Catalog | None = None
    ) -> None:
        self._entry_points_fn = entry_points_fn
        self._builtins = builtins
        self._lock = threading.RLock()
        self._entries: dict[str, dict[str, list[Any]]] = {}
        self._resolved: dict[str, set[str]] = {ACTIONS: set(), ADAPTERS: set()}
        self._actions: dict[str, PluginAction] = {}
        self._adapters: dict[str, Callable[[Mapping[str, object]], Any]] = {}
        self._problems: list[PluginProblem] = []
        #: `environment()` as it was just before each group was listed.
        self._listed_in: dict[str, str] = {}
        #: Per group, the names its entry points declare as an earlier listing in this same
        #: environment found them (`known`): other names are no plugin's, without listing.
        self._known: dict[str, frozenset[str]] = {}

    # --- lookups ---------------------------------------------------------------------

    def action(self, name: str) -> PluginAction | None:
        """The plugin action `name`, importing only the plugins that declare that name."""
        self._resolve(ACTIONS, name)
        return self._actions.get(name)

    def adapter(self, name: str) -> Callable[[Mapping[str, object]], Any] | None:
        self._resolve(ADAPTERS, name)
        return self._adapters.get(name)

    def actions(self) -> dict[str, PluginAction]:
        for name in self._group(ACTIONS):
            self._resolve(ACTIONS, name)
        return dict(self._actions)

    def adapters(self) -> dict[str, Callable[[Mapping[str, object]], Any]]:
        for name in self._group(ADAPTERS):
            self._resolve(ADAPTERS, name)
        return dict(self._adapters)

    def known(self, group: str, names: frozenset[str]) -> None:
        """Take `names` as what the entry points of `group` declare: a listing made before,
        in the `environment()` this process has (the check cache keeps one)."""
        with self._lock:
            self._known[group] = names

    def declared(self, group: str) -> tuple[frozenset[str], str] | None:
        """The names entry points declare in `group` and the `environment()` they were
        listed in, when this process listed them; None when it did not, or could not."""
        with self._lock:
            if group not in self._entries or any(p.group == group and p.name == "*" for p in self._problems):
                return None
            return frozenset(self._entries[group]), self._listed_in[group]

    def problems(self) -> list[PluginProblem]:
        """Every plugin that could not be used (this loads all of them)."""
        self.actions()
        self.adapters()
        return list(self._problems)

    def catalog(self, base: Catalog) -> Catalog:
        """`base` plus the plugin actions; one whose name `base` already has is reported and left out."""
        extra = []
        for name, action in self.actions().items():
            if base.declares(name):
                self._problem(
                    ACTIONS, name, action.origin, f"an action named '{name}' already exists; the plugin's is not used"
                )
            else:
                extra.append(action.spec)
        return Catalog([*base.specs(), *extra])

    # --- loading ---------------------------------------------------------------------

    def _group(self, group: str) -> dict[str, list[Any]]:
        with self._lock:
            if group not in self._entries:
                self._entries[group] = self._list(group)
            return self._entries[group]

    def _list(self, group: str) -> dict[str, list[Any]]:
        by_name: dict[str, list[Any]] = {}
        fn = self._entry_points_fn if self._entry_points_fn is not None else installed_entry_points
        # Taken before the listing: a distribution installed while it runs makes a later
        # environment() differ from this one, never match a listing that missed it.
        self._listed_in[group] = environment()
        try:
            for entry_point in fn(group=group):
                by_name.setdefault(entry_point.name, []).append(entry_point)
        except Exception as exc:  # a distribution with broken metadata
            self._problem(
                group, "*", "installed distributions", f"cannot list the plugins: {type(exc).__name__}: {exc}"
            )
        return by_name

    def _resolve(self, group: str, name: str) -> None:
        with self._lock:
            if name in self._resolved[group]:
                return
            known = self._known.get(group)
            if known is not None and name not in known and group not in self._entries:
                return  # no entry point declares it: nothing to load, no listing to make
            self._resolved[group].add(name)
            taken_by: str | None = None
            for entry_point in self._group(group).get(name, []):
                origin = _origin(entry_point)
                if taken_by is not None:
                    # Never imported: only one plugin may own a name.
                    self._problem(
                        group, name, origin, f"'{name}' is also declared by {taken_by}, which is used instead"
                    )
                    continue
                try:
                    if group == ACTIONS:
                        self._actions[name] = self._load_action(entry_point, origin)
                    else:
                        self._adapters[name] = self._load_adapter(entry_point)
                except _Refused as refusal:
                    self._problem(group, name, origin, str(refusal))
                    continue
                except Exception as exc:  # whatever the plugin's own code raises
                    self._problem(group, name, origin, f"failed to load: {type(exc).__name__}: {exc}")
                    continue
                taken_by = origin

    def _load_action(self, entry_point: Any, origin: str) -> PluginAction:
        name = entry_point.name
        # Checked before importing anything: such a plugin is never used.
        builtin = self._builtins.declares(name) if self._builtins is not None else name in _builtin_names()
        if builtin:
            raise _Refused(f"'{name}' is a built-in action; a plugin adds actions and cannot replace one")
        if name in RESERVED_STEP_KEYS:
            raise _Refused(f"'{name}' is a reserved step key and cannot name an action")
        loaded = entry_point.load()
        spec, run = getattr(loaded, "spec", None), getattr(loaded, "run", None)
        if not isinstance(spec, ActionSpec):
            what = "has no 'spec'" if spec is None else f"has a 'spec' of type {type(spec).__name__}"
            raise _Refused(f"{what}; it needs an ActionSpec from catalyst_dsl.actions.catalog")
        if not callable(run):
            raise _Refused("has no callable 'run(ctx, config)'")
        if spec.name != name:
            raise _Refused(
                f"its spec declares the action '{spec.name}' but the entry point is named '{name}'; they must be the"
                " same"
            )
        problem = _spec_problem(spec)
        if problem is not None:
            raise _Refused(f"its spec is inconsistent: {problem}")
        return PluginAction(spec=spec, run=run, origin=origin)

    def _load_adapter(self, entry_point: Any) -> Callable[[Mapping[str, object]], Any]:
        if entry_point.name in BUILTIN_ADAPTERS:
            raise _Refused(f"'{entry_point.name}' is a built-in AI adapter and cannot be replaced")
        factory = entry_point.load()
        if not callable(factory):
            raise _Refused(f"loads a {type(factory).__name__}, not a factory (options) -> AIAdapter")
        return factory

    def _problem(self, group: str, name: str, origin: str, message: str) -> None:
        problem = PluginProblem(group=group, name=name, origin=origin, message=message)
        with self._lock:
            if problem not in self._problems:
                self._problems.append(problem)


@functools.lru_cache(maxsize=1)
def _builtin_names() -> frozenset[str]:
    return frozenset(spec.name for spec in BUILTIN_ACTIONS)


def _spec_problem(spec: ActionSpec) -> str | None:
    """What in a plugin's declaration would make the checker or interpreter trip later."""
    if not isinstance(spec.config, ObjectT):
        return f"config is a {type(spec.config).__name__}, not an ObjectT"
    if not isinstance(spec.result, Type):
        return f"result is a {type(spec.result).__name__}, not a Type"
    if not isinstance(spec.effect, Effect) or not isinstance(spec.what_if, WhatIf):
        return "effect and what_if must be an Effect and a WhatIf"
    keys = spec.config_keys()
    if spec.primary is not None and spec.primary not in keys:
        return f"the primary property '{spec.primary}' is not a config key ({', '.join(keys) or 'none'})"
    for write in spec.writes:
        if getattr(write, "key", None) not in keys:
            return f"it declares writes through '{getattr(write, 'key', write)}', which is not a config key"
    return None


def metadata_places() -> list[str]:
    """The places on `sys.path` plugins are looked for in: every one but the working folder.

    `python -m catalyst_dsl` puts the working folder first on `sys.path` (and `python -c`
    puts `''` there), so a repository being checked could otherwise declare a plugin with
    a `*.dist-info` folder of its own and have its module imported. Installed
    distributions live in site directories and `PYTHONPATH` entries, never in the folder a
    command happens to run in; a site directory is kept even when it is the working folder."""
    here = os.path.realpath(os.getcwd()) if _has_working_folder() else None
    sites = {os.path.realpath(place) for place in _site_directories()}
    places = []
    for place in sys.path:
        if place == "":
            continue
        real = os.path.realpath(place)
        if real == here and real not in sites:
            continue
        places.append(place)
    return places


def _has_working_folder() -> bool:
    try:
        os.getcwd()
    except OSError:  # removed while we run: nothing can be found in it either
        return False
    return True


def _site_directories() -> list[str]:
    try:
        return [*site.getsitepackages(), site.getusersitepackages()]
    except AttributeError:  # an old virtualenv's site module has neither
        return []


def installed_entry_points(*, group: str) -> list[Any]:
    """The entry points of `group` that installed distributions declare, looked for in
    `metadata_places()`; a distribution found twice counts once, the first as
    `importlib.metadata.entry_points` does."""
    import importlib.metadata

    seen: set[str] = set()
    found: list[Any] = []
    for dist in importlib.metadata.distributions(path=metadata_places()):
        name = dist.metadata["Name"]
        if name:
            normalized = re.sub(r"[-_.]+", "-", name).lower()
            if normalized in seen:
                continue
            seen.add(normalized)
        found.extend(dist.entry_points.select(group=group))
    return found


def environment() -> str:
    """A digest of where the installed distributions' metadata is: the places on
    `sys.path` (and the finders) that `importlib.metadata` searches, each with its time,
    the name of each `*.dist-info` and `*.egg-info` in it (an `.egg` folder's
    `EGG-INFO`) and the time and size of its `entry_points.txt`. Installing, upgrading or
    removing a distribution adds, removes or remakes a folder in its place (which changes
    the place's time, and the names), and rewriting its entry points changes that file,
    so a list of entry points made under one digest still holds while the digest is the
    same (see cache.store: a replayed check then knows a name is no plugin's without
    listing). The metadata folders' own times are not read: what changes inside one
    without remaking it (its RECORD, say) declares no entry point.

    Only `metadata_places()` count (never the working folder), and a place with no
    metadata in it adds nothing to what is found, so it adds nothing to the digest
    either: `python -m catalyst_dsl` and the `catalyst` program (its own folder first on
    the path) share one digest, and a what-if run one way reads the names a check run the
    other way kept. Names are
    matched without regard to case, as `importlib.metadata` matches them."""
    digest = digests.hasher()
    digest.update(sys.executable.encode("utf-8", "surrogatepass"))
    for finder in sys.meta_path:
        kind = finder if isinstance(finder, type) else type(finder)  # the standard finders are classes
        digest.update(f"\0finder {kind.__module__}.{kind.__qualname__}".encode())
    for place in metadata_places():
        try:
            info = os.stat(place or ".")
            if not stat.S_ISDIR(info.st_mode):
                digest.update(b"\0zip " + os.fsencode(place) + str(info.st_mtime_ns).encode())  # a zip file
                continue
            egg = place.lower().endswith(".egg")
            names = sorted(
                n
                for n in os.listdir(place or ".")
                if n.lower().endswith((".dist-info", ".egg-info")) or (egg and n.lower() == "egg-info")
            )
        except OSError:
            continue
        if not names:
            continue
        digest.update(b"\0path " + os.fsencode(place) + f"\0{info.st_mtime_ns}".encode())
        for name in names:
            entry_points = os.path.join(place or ".", name, "entry_points.txt")
            digest.update(f"\0{name}\0{_stamp(entry_points)}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _stamp(path: str) -> str:
    """When and how `path` last changed, as far as the file system says ("-" if it is not there).

    The entry points file counts on its own: rewriting it in place (a develop install
    re-run, an edit) leaves its folder's and its place's times as they were."""
    try:
        info = os.stat(path)
    except OSError:
        return "-"
    return f"{info.st_mtime_ns}:{info.st_size}"


@functools.lru_cache(maxsize=1)
def installed() -> Plugins:
    """The plugins of this environment, shared by the checker and the interpreter."""
    return Plugins()


def plugin_spec(name: str) -> ActionSpec | None:
    """The declaration of the plugin action `name`, or None (the catalog's fallback)."""
    action = installed().action(name)
    return action.spec if action is not None else None
