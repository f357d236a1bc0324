"""Small slotted record classes for what every `catalyst check` loads before it knows
whether it will compile anything: diagnostics, source files, codes, settings, dialects.

attrs builds the IR's classes, but importing attrs costs about 11 ms and each class it
builds about 0.5 ms (several generated methods, each compiled on its own); a check
replayed from the cache needs none of the IR, so its few classes are made here instead,
from closures (about 0.05 ms a class), with the methods `attrs.frozen` gives them (an
`__init__` taking every field by position or keyword, `__repr__`, `__eq__`, `__hash__`
when immutable, immutability, `__match_args__`, copying and pickling), and the two
helpers callers use on them, `fields` and `replace` (attrs' `fields` and `evolve`).

Only what these classes use is supported: fields declared on the class itself (no
inheritance of fields), defaults and `factory(...)` defaults, every field in `__init__`.
"""

from __future__ import annotations

import operator

#: typing is imported for type checkers only: the annotations stay text at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

_NOTHING = object()


class FrozenRecordError(AttributeError):
    """Raised on setting or deleting a field of an immutable record."""


class factory:
    """A default made afresh for each record, as `attrs.field(factory=...)`."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class Field:
    """One field, with the attributes of an `attrs.Attribute` that callers read."""

    __slots__ = ("name", "type", "default", "alias")
    init = True
    eq = True

    def __init__(self, name: str, type: Any, default: Any) -> None:
        self.name = name
        self.type = type
        self.default = default
        self.alias = name.lstrip("_")

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r})"


def record(cls: type | None = None, *, frozen: bool = True):
    """The class as a slotted record; `@record` is immutable, `@record(frozen=False)` not."""
    if cls is None:
        return lambda c: _build(c, frozen)
    return _build(cls, frozen)


def fields(cls: type) -> tuple[Field, ...]:
    return cls.__record_fields__


def is_record(cls: object) -> bool:
    return isinstance(cls, type) and "__record_fields__" in cls.__dict__


def replace(value, **changes):
    """A copy of `value` with `changes` (attrs.evolve)."""
    cls = type(value)
    return cls(**{f.alias: changes.pop(f.name) if f.name in changes else getattr(value, f.name) for f in cls.__record_fields__}, **changes)


def _build(cls: type, frozen: bool) -> type:
    body = dict(cls.__dict__)
    annotations = body.get("__annotations__", {})
    names = tuple(annotations)
    found = tuple(Field(name, annotations[name], body.pop(name, _NOTHING)) for name in names)
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    body["__slots__"] = names
    body["__record_fields__"] = found
    body["__match_args__"] = names
    methods = _methods(cls.__name__, cls.__qualname__, found, frozen)
    for method, function in methods.items():
        if method not in body or method in ("__getstate__", "__setstate__"):
            function.__qualname__ = f"{cls.__qualname__}.{method}"
            body[method] = function
    if not frozen:
        body["__hash__"] = None  # mutable and compared by value, as attrs.define
    return type(cls)(cls.__name__, cls.__bases__, body)


def _methods(name: str, qualname: str, found: tuple[Field, ...], frozen: bool) -> dict[str, Callable]:
    """The record's methods, as closures over its fields: compiling code for each class
    (what attrs and dataclasses do) costs more than these classes ever save at run time."""
    count = len(found)
    assign = object.__setattr__
    names = tuple(f.name for f in found)
    values = operator.attrgetter(*names) if count > 1 else (lambda value: (getattr(value, names[0]),)) if count else (lambda value: ())

    def __init__(self, *args, **kwargs):
        if len(args) > count:
            raise TypeError(f"{name}() takes {count} positional arguments but {len(args)} were given")
        for f, value in zip(found, args):
            assign(self, f.name, value)
        for f in found[len(args):]:
            if f.alias in kwargs:
                value = kwargs.pop(f.alias)
            elif f.default is _NOTHING:
                raise TypeError(f"{name}() missing the required argument '{f.alias}'")
            elif type(f.default) is factory:
                value = f.default.make()
            else:
                value = f.default
            assign(self, f.name, value)
        if kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")

    def __repr__(self):
        return f"{name}(" + ", ".join(f"{field}={getattr(self, field)!r}" for field in names) + ")"

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return values(self) == values(other)

    def __getstate__(self):
        return values(self)

    def __setstate__(self, state):
        for field, value in zip(names, state):
            assign(self, field, value)

    methods = {"__init__": __init__, "__repr__": __repr__, "__eq__": __eq__, "__getstate__": __getstate__, "__setstate__": __setstate__}
    if frozen:
        def __hash__(self):
            return hash((qualname, *values(self)))

        def __setattr__(self, field, value):
            raise FrozenRecordError(f"a {name} cannot be changed ({field})")

        def __delattr__(self, field):
            raise FrozenRecordError(f"a {name} cannot be changed ({field})")

        methods.update(__hash__=__hash__, __setattr__=__setattr__, __delattr__=__delattr__)
    return methods
