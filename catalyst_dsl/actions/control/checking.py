"""What a control action's scope rule sees of the reference checker that walks it.

The checker (checks/references/checker.py) sits above the actions: checks/ imports
actions/, never the reverse. It finds a control action's `check_scope(checker, step,
scope)` by the action's name and passes itself in; the rule calls back only what these
Protocols name, and returns the type of the step's result.
"""

from __future__ import annotations

from typing import Any, Iterable, Protocol

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t
from catalyst_dsl.syntax.source import Span


class Binding(Protocol):
    """A name the steps can read, with its type (checks/references/scopes.py)."""

    name: str
    type: t.Type


class Scope(Protocol):
    """The names a point of the playbook sees (checks/references/scopes.py)."""

    def define(self, binding: Binding) -> None: ...

    def assign(self, binding: Binding) -> None:
        """`var`: update the variable where it was defined, else define it here."""
        ...


#: One way through a block: its scope, why a name only it defines may be missing, its branch key.
PathOut = tuple[Scope, "str | None", "tuple | None"]


class Checker(Protocol):
    """The reference checker as a scope rule calls it back."""

    #: The actions' declarations (actions/catalog.py: Catalog), for a step's declared result.
    catalog: Any
    #: Where findings go (diagnostics/model.py: DiagnosticSink).
    sink: Any
    #: A function's name -> the type of what it returns, for the steps that call it.
    function_results: dict[str, t.Type]
    #: A step or variable name -> the type it has where it is first defined.
    defined_types: dict[str, t.Type]

    def value(self, value: ir.Value | None, scope: Scope) -> t.Type:
        """Check a config value's references and give its type."""
        ...

    def condition(self, value: ir.Value, scope: Scope, where: str) -> None: ...

    def walk(self, steps: Iterable[ir.Step], scope: Scope) -> None: ...

    def guarded(self, steps: Iterable[ir.Step], scope: Scope) -> None:
        """Walk steps that run only when something holds: a branch, a loop body, a handler."""
        ...

    def inner(self, scope: Scope, key: tuple | None = None) -> Scope:
        """A block's scope under `scope`; `key`, an `if` branch's (condition, branch)."""
        ...

    def binding(self, name: str, type: t.Type, kind: str, span: Span | None, source: str | None = None) -> Binding: ...

    def flow_out(self, scope: Scope, paths_out: list[PathOut], block: Span | None) -> None:
        """Make the names the paths through a block define visible after it."""
        ...

    def value_origin(self, value: ir.Value | None, scope: Scope) -> str | None:
        """Where an untrusted value a config value reads comes from, for C821."""
        ...

    def note_call(self, step: ir.Step, input_types: dict[str, t.Type] | None) -> None: ...

    def quiet_type(self, value: ir.Value, scope: Scope) -> t.Type:
        """A value's type, with nothing reported."""
        ...

    def line(self, span: Span | None) -> str: ...
