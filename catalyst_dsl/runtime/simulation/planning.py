"""The plan a what-if builds: one entry per step, in the order the steps would run.

The simulator opens an entry when a step starts and files the steps it runs inside
that entry (branches, loop bodies, a called playbook's steps). Entries hold only what
is the same on every machine and every day: no times, no run ids, no absolute paths.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import threading
from typing import TYPE_CHECKING, Any, Iterator

from catalyst_dsl.runtime.values import taint
from catalyst_dsl.runtime.values.jsvalues import as_json_data
from catalyst_dsl.runtime.values.taint import MIN_DERIVED_LENGTH, marked_texts, placeholder, placeholders

if TYPE_CHECKING:
    from catalyst_dsl.runtime.values.secrets import Masker

#: The list new entries go into: the plan's top level, or the `steps` of the step running them.
PARENT: contextvars.ContextVar[list | None] = contextvars.ContextVar("catalyst_plan_parent", default=None)
#: True inside a step whose running depends on a value the plan cannot know.
CONDITIONAL: contextvars.ContextVar[bool] = contextvars.ContextVar("catalyst_plan_conditional", default=False)

#: When a step has several effects, the one that names it (the most destructive).
_WEIGHT = {"delete": 4, "modify": 3, "create": 2, "no-op": 1}


#: Characters of a clause's name in an address: a longer one (a long `when`) is cut, and
#: a digest of the whole keeps two that start alike apart.
PART_NAME_CHARS = 80


def _part_name(name: str) -> str:
    from catalyst_dsl._internal.terminal_text import safe_text

    shown = safe_text(" ".join(name.split())).replace("%", "%25").replace("/", "%2F")
    if len(shown) <= PART_NAME_CHARS:
        return shown
    from catalyst_dsl._internal.digests import hexdigest

    return f"{shown[: PART_NAME_CHARS - 10]}…{hexdigest(name.encode('utf-8', 'surrogatepass'))[:8]}"


class PlanRecorder:
    def __init__(self, masker: "Masker") -> None:
        self.masker = masker
        self.steps: list[dict[str, Any]] = []
        #: Secret text shown so far (text -> placeholder), for the diffs (see `settle`):
        #: all of the plan's, and per entry (by id) also the short ones.
        self._secret: dict[str, str] = {}
        self._secret_of: dict[int, dict[str, str]] = {}
        self._lock = threading.Lock()
        #: Set once a step the plan cannot see through may have changed files (an AI
        #: given writing tools, a program): a later file check that fails now may hold then.
        self.files_unknown: str | None = None
        #: The catch clauses and route branches met, by path (`steps/3/catch/0`): their
        #: names (a code, a label, a `when`), which address their steps (plan_data).
        self.parts: dict[str, str] = {}
        self._part_names: dict[str, set[str]] = {}  # the owner's clauses -> the names given

    def name_part(self, path: str, name: str) -> None:
        """Name the clause or branch at `path` (`steps/3/catch/0`), once: as an address
        shows it (one short line, `/` and control characters escaped), and told apart from
        a clause of the same owner with the same name (`E1~2`: a second clause of one code)."""
        if path in self.parts:
            return
        shown = _part_name(name)
        owner = path.rsplit("/", 1)[0]  # `steps/3/catch`: the clauses of one step
        taken = self._part_names.setdefault(owner, set())
        candidate, n = shown, 1
        while candidate in taken:
            n += 1
            candidate = f"{shown}~{n}"
        taken.add(candidate)
        self.parts[path] = candidate

    def open(self, path: str, step: str, action: str) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "path": path,
            "step": step,
            "action": action,
            "change": None,
            "reason": None,
            "conditional": CONDITIONAL.get(),
            "config": {},
            "effects": [],
            "writes": [],
            "approval": None,
            "request": None,
            "steps": [],
        }
        parent = PARENT.get()
        (self.steps if parent is None else parent).append(entry)
        return entry

    def inside(self, entry: dict[str, Any]) -> "_Inside":
        """While it is entered, new entries go into `entry`'s steps."""
        return _Inside(entry["steps"])

    @staticmethod
    @contextlib.contextmanager
    def conditional() -> Iterator[None]:
        token = CONDITIONAL.set(True)
        try:
            yield
        finally:
            CONDITIONAL.reset(token)

    def shown(self, value: Any, entry: dict[str, Any] | None = None) -> Any:
        """A config value as the plan shows it: unknowns named, secrets and values computed
        from them as placeholders (`<secret-derived:token>`), other secrets masked, JSON only.

        `entry`: the step the value configures; its diffs then show that secret text as
        its placeholder too, however short.
        """
        data = as_json_data(value)  # new containers: what follows may keep them as they are
        if taint.active():  # else no text is marked: nothing to look for or replace
            found: dict[str, str] = {}
            _secret_texts(data, found)
            if found:
                with self._lock:
                    self._secret.update({t: p for t, p in found.items() if len(t) >= MIN_DERIVED_LENGTH})
                    if entry is not None:
                        self._secret_of.setdefault(id(entry), {}).update(found)
            data = placeholders(data)
        return self.masker.mask(data, own=True)  # new containers already: not copied again

    def settle(self, entry: dict[str, Any], effects: list[dict[str, Any]], fallback: str) -> None:
        """Fill in the entry's change from its effects, unless a handler already decided.

        A diff of a file whose content was computed from a secret shows the placeholder
        of that secret text, as the step's config does, never the text itself.
        """
        if not effects:  # most steps: no diff to hide secrets in, no change to weigh
            if self._secret_of:
                with self._lock:
                    self._secret_of.pop(id(entry), None)  # the entry's secret texts are done with
            entry["effects"] = effects
            if entry["change"] is None:
                entry["change"] = fallback
            return
        secret = None
        if self._secret or self._secret_of:  # else no secret text was shown: nothing to hide
            with self._lock:
                secret = {**self._secret, **self._secret_of.pop(id(entry), {})}
        if secret:
            for effect in effects:
                if isinstance(effect.get("diff"), str):
                    effect["diff"] = _hide(effect["diff"], secret)
        entry["effects"] = effects
        entry["writes"] = [{"path": e["path"], "allowed": True} for e in effects] + entry["writes"]
        if entry["change"] is None:
            changes = [e["change"] for e in effects]
            entry["change"] = max(changes, key=_WEIGHT.__getitem__) if changes else fallback


class _Inside:
    """`PlanRecorder.inside`: a class rather than a generator, as every step enters one."""

    __slots__ = ("steps", "token")

    def __init__(self, steps: list) -> None:
        self.steps = steps

    def __enter__(self) -> None:
        self.token = PARENT.set(self.steps)

    def __exit__(self, *exc: object) -> None:
        PARENT.reset(self.token)


def _secret_texts(value: Any, found: dict[str, str]) -> None:
    for text in marked_texts(value):
        if text:
            found[str(text)] = placeholder(text)


def _hide(diff: str, secret: dict[str, str]) -> str:
    """`diff` with each secret text its placeholder, in one pass (longest first); the
    header lines (file names, hunk ranges) are left as they are."""
    pattern = re.compile("|".join(re.escape(t) for t in sorted(secret, key=lambda t: (-len(t), t))))
    lines = diff.splitlines(keepends=True)
    return "".join(
        line if line.startswith(("--- ", "+++ ", "@@")) else pattern.sub(lambda m: secret[m.group(0)], line)
        for line in lines
    )
