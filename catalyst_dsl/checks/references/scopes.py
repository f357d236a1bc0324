"""The names a point of a playbook can see, and how names defined in a block flow out of it.

The reference checker keeps a chain of scopes as it walks the steps: the playbook's top
scope, then one for each block (a branch, a loop body, a handler, a function). A name
defined on only some of the paths through a block is still visible after it, marked
with why it may be missing (C508 where it is read).
"""

from __future__ import annotations

from catalyst_dsl.ir import types as t
from catalyst_dsl._internal.records import record, replace
from catalyst_dsl.syntax.source import Span


@record(frozen=False)
class Binding:
    name: str
    type: t.Type
    kind: str  # input | var | step | loop | parameter | error | script
    span: Span | None
    #: For a var or loop variable: the untrusted value it holds, if any (for C821).
    source: str | None = None
    #: Defined only on some paths to here: why (the block and when it defines the name),
    #: and the branch key a later `if` on the same condition matches. None: on every path.
    maybe: "Maybe | None" = None


@record
class Maybe:
    reason: str  # "defined only when the `if` at line 4 takes its `then` branch"
    block: Span | None
    #: ("if", condition text, branch) for an `if` branch; None for other blocks.
    key: tuple | None = None


#: Bindings that belong to their block and never leave it.
BLOCK_OWN = ("loop", "error", "parameter")


class Scope:
    def __init__(self, parent: "Scope | None" = None) -> None:
        self.parent = parent
        self.names: dict[str, Binding] = {}
        #: The branch key of an `if` whose condition an earlier `if` had too: the names that
        #: earlier branch defined are defined here (see ReferenceChecker.inner).
        self.known_key: tuple | None = None

    def knows(self, key: tuple) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if scope.known_key == key:
                return True
            scope = scope.parent
        return False

    def lookup(self, name: str) -> Binding | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def define(self, binding: Binding) -> None:
        self.names[binding.name] = binding

    def assign(self, binding: Binding) -> None:
        """`var` updates the variable where it was defined, else defines it here."""
        existing = self.lookup(binding.name)
        if existing is not None and existing.kind in ("var", "script"):
            existing.type = t.union(existing.type, binding.type)
            return
        self.define(binding)

    def visible(self) -> list[str]:
        names: list[str] = []
        scope: Scope | None = self
        while scope is not None:
            names.extend(scope.names)
            scope = scope.parent
        return names


#: One way through a block: its scope, why a name only it defines may be missing, its branch key.
PathOut = tuple[Scope, "str | None", "tuple | None"]


def flow_out(scope: Scope, paths_out: list[PathOut], block: Span | None) -> None:
    """Make the names the paths through a block define visible after it. `paths_out` are
    the alternative ways through the block (an `if`'s two branches, a loop that runs or
    not, a try's steps or one of its handlers). A name every path defines is defined after
    the block; one that only some define may be undefined (C508 where it is read)."""
    seen: dict[str, list[tuple[Binding, str | None, tuple | None]]] = {}
    for inner, reason, key in paths_out:
        for name, binding in inner.names.items():
            if binding.kind not in BLOCK_OWN and scope.lookup(name) is None:
                seen.setdefault(name, []).append((binding, reason, key))
    for name, found in seen.items():
        binding = found[0][0]
        maybe = next((b.maybe for b, _, _ in found if b.maybe is not None), None)
        if maybe is None and len(found) < len(paths_out):
            _, reason, key = found[0]
            maybe = Maybe(reason or "defined only on some paths", block, key)
        scope.define(
            replace(
                binding,
                maybe=maybe,
                type=t.union(*(b.type for b, _, _ in found)) if len(found) > 1 else binding.type,
            )
        )
