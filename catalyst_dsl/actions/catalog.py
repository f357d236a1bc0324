"""The action catalog: one declaration per action, the single source every phase reads.

A declaration says what an action accepts (config schema and primary property), what it
gives back (result type), what kind of effect it has, what it writes, and how it behaves
under --what-if. The checker, the interpreter and the what-if report read these; nothing
about an action is written twice.

This module is the bottom of the action layer: it knows neither the built-in actions
(actions/builtin.py), nor the installed plugins (actions/plugins.py), nor who records what
a check asked (project/observed). The catalog a check uses, built-ins then plugins, is put
together above it, in actions/installed.py; plugin distributions import `ActionSpec` from
here.
"""

from __future__ import annotations

import contextlib
import enum
from typing import Callable, Iterable, Iterator

from catalyst_dsl.ir.types import ObjectT, Type
from catalyst_dsl._internal.records import record


class Effect(enum.Enum):
    PURE = "pure"  # computes a value; safe to run anywhere
    READ = "read"  # reads files or the repository; run for real under what-if
    WRITE = "write"  # changes files in the project
    NETWORK = "network"  # talks to a remote service
    EXTERNAL = "external"  # runs a program or an AI whose effects we cannot see
    CONTROL = "control"  # structures other steps; its effect is theirs
    HUMAN = "human"  # waits for a person


class WhatIf(enum.Enum):
    RUN = "run"  # run for real (pure and read actions)
    DIFF = "diff"  # a file change, shown as a diff
    DESCRIBE = "describe"  # the request, commit or call it would make, described
    UNKNOWN = "unknown"  # cannot be simulated; its result is unknown downstream
    PAUSE = "pause"  # would wait for approval
    CONTROL = "control"  # the steps it contains are simulated one by one


@record
class WriteDecl:
    """A config key whose value names what the action writes."""

    key: str
    kind: str  # "file" | "files" (patterns) | "branch"
    doc: str = ""


#: Programs that actions run, and where to get them: one source for `catalyst check`'s
#: C819 and for the error a step gets when the program is missing.
PROGRAMS = {
    "git": "install git (https://git-scm.com) and make sure `git` is on PATH",
    "node": "install Node.js (https://nodejs.org) and make sure `node` is on PATH, or write the step as `bash`",
    "pwsh": (
        "install PowerShell 7 (https://aka.ms/powershell) and make sure `pwsh` is on PATH, or write the step as `bash`"
    ),
}


#: Keys a step holds beside its action: the native dialect reads them, and no action (a
#: plugin's included) may be named by one.
RESERVED_STEP_KEYS = (
    "name",
    "condition",
    "errorPolicy",
    "timeout",
    "checkpoint",
    "writes",
    "isolated",
    "requires",
    "ensures",
    "bindings",
    "approved",
    "cache",
)


@record
class ActionSpec:
    name: str
    group: str
    summary: str
    config: ObjectT
    primary: str | None
    result: Type
    effect: Effect
    what_if: WhatIf
    writes: tuple[WriteDecl, ...] = ()
    #: Runs an opaque program: its writes are declared with the step's `writes:` key.
    shell_like: bool = False
    #: Needs a program on the machine to run (a key of PROGRAMS).
    requires: str | None = None
    #: Its `waitForReview: true` pauses the run after it until what it made is reviewed.
    pauses_for_review: bool = False
    #: (config key, language) of the script it runs: values in that key are escaped for
    #: where they stand (bash, powershell) or reported as unescaped (javascript).
    script: tuple[str, str] | None = None
    #: The config key holding the URL it requests: values placed in that URL's path or
    #: query are percent-encoded (runtime/values/url_values.py).
    url: str | None = None

    def config_keys(self) -> list[str]:
        return self.config.names()


class InstalledPlugins:
    """The installed plugins as the built-in catalog asks them about names it does not
    declare. actions/installed.py gives the one instance; the catalog only knows this face."""

    def __call__(self, name: str) -> ActionSpec | None:
        raise NotImplementedError

    def why_missing(self, name: str) -> str | None:
        """Why a plugin that declares `name` could not be used, or None."""
        raise NotImplementedError


#: Told each name a catalog asks its fallback about, while a check that keeps its findings
#: runs (project/observed listens): what the plugins answer decides those findings.
_fallback_listeners: list[Callable[[str], None]] = []


@contextlib.contextmanager
def telling_fallbacks_to(listener: Callable[[str], None]) -> Iterator[None]:
    """Call `listener(name)` for each name any catalog asks its fallback about, until the block ends."""
    _fallback_listeners.append(listener)
    try:
        yield
    finally:
        _fallback_listeners.remove(listener)


class Catalog:
    """The actions known in one compilation: built-ins, then plugins (later, functions)."""

    def __init__(self, specs: Iterable[ActionSpec], fallback: Callable[[str], ActionSpec | None] | None = None) -> None:
        self._specs: dict[str, ActionSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"action {spec.name} declared twice")  # our bug, at import time
            self._specs[spec.name] = spec
        #: Asked for names not declared here: the installed plugins, looked up lazily so
        #: a check that meets only built-in actions never scans entry points.
        self._fallback = fallback

    @property
    def asks_installed_plugins(self) -> bool:
        """Whether names not declared here are the installed plugins' to answer (the
        built-in catalog's way), not a fallback of the caller's own."""
        return isinstance(self._fallback, InstalledPlugins)

    def get(self, name: str) -> ActionSpec | None:
        spec = self._specs.get(name)
        if spec is None and self._fallback is not None:
            spec = self._fallback(name)
            # What the plugins say decides the findings: a replayed check asks them again.
            for listener in _fallback_listeners:
                listener(name)
        return spec

    def why_missing(self, name: str) -> str | None:
        """Why an action that a plugin declares could not be used, or None (never declared)."""
        if isinstance(self._fallback, InstalledPlugins):
            return self._fallback.why_missing(name)
        return None

    def declares(self, name: str) -> bool:
        """Whether `name` is one of this catalog's own actions (never a plugin's)."""
        return name in self._specs

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def names(self) -> list[str]:
        return list(self._specs)

    def specs(self) -> list[ActionSpec]:
        return list(self._specs.values())
