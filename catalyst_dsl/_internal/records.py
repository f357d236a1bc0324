"""Slotted record classes: the IR, expression and type nodes, YAML nodes, diagnostics,
settings and the other classes a `catalyst check` builds at import.

They were attrs classes; importing attrs costs about 10 ms and each class attrs builds
about 0.5 ms (several generated methods, each compiled on its own), which was a third
of a one-file check. A record gets the methods `attrs.frozen` gives (an `__init__` with
the same signature, `__repr__`, `__eq__`, `__hash__` when immutable, immutability,
`__match_args__`, copying and pickling): `__init__` compiled once per shape of class
and renamed for each (see `_init`), the others closures over the fields. Callers use
`fields`, `replace` and `asdict` (attrs' `fields`, `evolve` and a shallow `asdict`);
records become JSON and back through catalyst_dsl/_internal/serialization.py.

Only what these classes use is supported: fields declared on the class itself (a base
record may have methods, not fields), defaults, `factory(...)` defaults and `field(...)`
options (eq=False, kw_only, repr=False, metadata), every field in `__init__`.
"""

from __future__ import annotations

import operator
from collections import deque
from itertools import repeat
from types import CodeType, FunctionType

#: typing is imported for type checkers only: the annotations stay text at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

#: The default of a field that has none (attrs.NOTHING).
NOTHING = _NOTHING = object()


class FrozenRecordError(AttributeError):
    """Raised on setting or deleting a field of an immutable record."""


class factory:
    """A default made afresh for each record, as `attrs.field(factory=...)`."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


_Factory = factory  # `field(factory=...)` names its argument like the class


class field:
    """A field's options in a class body, as `attrs.field(...)`: a default (or a
    `factory`), whether it counts in equality and hashing (`eq`, False for positions),
    whether `__init__` takes it by keyword only, whether `repr` shows it, and `metadata`."""

    __slots__ = ("default", "eq", "kw_only", "repr", "metadata")

    def __init__(
        self,
        *,
        default: Any = _NOTHING,
        factory: Callable[[], Any] | None = None,
        eq: bool = True,
        kw_only: bool = False,
        repr: bool = True,
        metadata: dict | None = None,
    ) -> None:
        self.default = _Factory(factory) if factory is not None else default
        self.eq = eq
        self.kw_only = kw_only
        self.repr = repr
        self.metadata = metadata or {}


class Field:
    """One field, with the attributes of an `attrs.Attribute` that callers read."""

    __slots__ = ("name", "type", "default", "alias", "eq", "kw_only", "repr", "metadata")
    init = True

    def __init__(self, name: str, type: Any, declared: Any, kw_only: bool = False) -> None:
        self.name = name
        self.type = type
        self.alias = name.lstrip("_")
        options = declared if isinstance(declared, field) else None
        self.default = options.default if options else declared
        self.eq = options.eq if options else True
        self.kw_only = (options.kw_only if options else False) or kw_only
        self.repr = options.repr if options else True
        self.metadata = options.metadata if options else {}

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r})"


def record(cls: type | None = None, *, frozen: bool = True, eq: bool = True, kw_only: bool = False):
    """The class as a slotted record; `@record` is immutable, `@record(frozen=False)` not.
    With `eq=False` records are compared and hashed by identity (attrs' `eq=False`); with
    `kw_only=True` every field is keyword-only (attrs' `define(kw_only=True)`)."""
    if cls is None:
        return lambda c: _build(c, frozen, eq, kw_only)
    return _build(cls, frozen, eq, kw_only)


def fields(cls: type) -> tuple[Field, ...]:
    return cls.__record_fields__


def maker(cls: type, names: tuple[str, ...]) -> Callable[[list], Any]:
    """A function that makes a `cls` record from a list of the values of its fields
    `names`, in that order, every other field its default (a plain one: a factory or a
    missing default is a TypeError here), without calling `__init__`: each slot assigned
    once, as unpickling (`__setstate__`) does, in one pass of C calls. For a reader of
    records it wrote itself (the check cache), where the values are checked already."""
    rest = [f for f in cls.__record_fields__ if f.name not in names]
    if any(f.default is _NOTHING or type(f.default) is factory for f in rest):
        raise TypeError(f"{cls.__name__}: a field not given needs a plain default")
    order = (*names, *(f.name for f in rest))
    defaults = [f.default for f in rest]
    slots = [cls.__dict__.get(name) for name in order]
    if not defaults and all(type(slot) is _SLOT for slot in slots):
        # Each field set through its slot's own setter, one call per field in code made
        # for the number of fields (shipped in record_shapes.py): less than half the
        # time of the loop below, which looks each slot up by name.
        setters = {f"_set{i}": slot.__set__ for i, slot in enumerate(slots)}
        return FunctionType(_maker_code(len(order)), {"_new": object.__new__, "_cls": cls, **setters}, "make")
    new, assign = object.__new__, object.__setattr__  # a record's own __setattr__ refuses

    def make(values: list) -> Any:
        made = new(cls)
        deque(map(assign, repeat(made), order, values + defaults if defaults else values), maxlen=0)
        return made

    return make


#: The type of a slot's descriptor in its class (`__slots__`).
_SLOT = type(Field.__dict__["name"])
#: The code of `maker`'s functions by number of fields; from record_shapes.py, else compiled here.
_MAKERS: dict[int, CodeType] = {}


def _maker_code(count: int) -> CodeType:
    code = _MAKERS.get(count)
    if code is None:
        _shipped_init(())  # reads record_shapes.py once, with the makers it ships
        code = _MAKERS.get(count)
    if code is None:
        code = _MAKERS[count] = _compiled(_maker_source(count), "make")
    return code


def _maker_source(count: int) -> str:
    lines = [
        "def make(values):",
        "    made = _new(_cls)",
        *(f"    _set{i}(made, values[{i}])" for i in range(count)),
        "    return made",
    ]
    return "\n".join(lines) + "\n"


def is_record(cls: object) -> bool:
    return isinstance(cls, type) and "__record_fields__" in cls.__dict__


def replace(value, **changes):
    """A copy of `value` with `changes` (attrs.evolve)."""
    cls = type(value)
    return cls(
        **{
            f.alias: changes.pop(f.name) if f.name in changes else getattr(value, f.name) for f in cls.__record_fields__
        },
        **changes,
    )


def asdict(value) -> dict[str, Any]:
    """The fields of `value` by name, in the order they are declared: attrs.asdict for
    records of plain values (an approval token's claims, a line of `runs list --json`).
    Unlike attrs.asdict it does not recurse: a record, list or dict held in a field is
    handed over as it is, not copied or turned into a dict."""
    return {f.name: getattr(value, f.name) for f in type(value).__record_fields__}


def _build(cls: type, frozen: bool, eq: bool = True, kw_only: bool = False) -> type:
    body = dict(cls.__dict__)
    annotations = body.get("__annotations__", {})
    names = tuple(annotations)
    for base in cls.__mro__[1:]:
        if base.__dict__.get("__record_fields__"):
            raise TypeError(f"{cls.__name__}: a record inherits no fields ({base.__name__} has some)")
    found = tuple(Field(name, annotations[name], body.pop(name, _NOTHING), kw_only) for name in names)
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    body["__slots__"] = names
    body["__record_fields__"] = found
    body["__record_frozen__"] = frozen
    # As attrs: keyword-only fields cannot be matched by position.
    body["__match_args__"] = tuple(f.name for f in found if not f.kw_only)
    methods = _methods(cls.__name__, cls.__qualname__, found, frozen)
    methods["__init__"], settle = _first_init(cls.__qualname__, found, frozen)
    if not eq:
        methods.pop("__eq__")
        methods.pop("__hash__", None)
    for method, function in methods.items():
        if method not in body or method in ("__getstate__", "__setstate__"):
            function.__qualname__ = f"{cls.__qualname__}.{method}"
            body[method] = function
    if not frozen and eq:
        body["__hash__"] = None  # mutable and compared by value, as attrs.define
    built = type(cls)(cls.__name__, cls.__bases__, body)
    settle(built)
    _point_class_cells(cls, built)
    return built


def _point_class_cells(given: type, built: type) -> None:
    """Point the class cell of `given`'s own methods at `built`. A method that names its
    class (zero-argument `super()`, `__class__`) reads it from a cell Python filled with
    the class the decorator was given; the record is a new class (slots can only be made
    with a class), and `super()` would refuse its instances. attrs does the same."""
    for value in vars(given).values():
        kind = type(value)
        if kind is FunctionType:
            functions: tuple = (value,)
        elif kind is property:
            functions = (value.fget, value.fset, value.fdel)
        elif kind is classmethod or kind is staticmethod:
            functions = (value.__func__,)
        else:
            continue
        for function in functions:
            code = getattr(function, "__code__", None)
            if code is not None and "__class__" in code.co_freevars:
                cell = function.__closure__[code.co_freevars.index("__class__")]
                if cell.cell_contents is given:
                    cell.cell_contents = built


#: How many records of a class the generic `__init__` makes before the class gets its
#: compiled one: most classes of a check replayed from the cache make a handful (and
#: compiling costs about as much as 50 generic calls), the IR's classes thousands.
COMPILE_AFTER = 32


def _first_init(qualname: str, found: tuple[Field, ...], frozen: bool) -> tuple[Callable, Callable[[type], None]]:
    """An `__init__` that binds the arguments itself for a class's first records, then
    puts the compiled one (`_init`) in its place; and the function that tells it its class.

    A call it cannot bind (an argument missing, unknown or given twice) goes to the
    compiled one at once, so every TypeError is Python's own, whichever is in place."""
    positional = tuple(f for f in found if not f.kw_only)
    keyword = tuple(f for f in found if f.kw_only)
    assign = object.__setattr__
    state: dict[str, Any] = {"left": COMPILE_AFTER, "owner": None}

    def compiled() -> Callable:
        init = _init(qualname, found, frozen, state["owner"])
        init.__qualname__ = f"{qualname}.__init__"
        if state["owner"] is not None:
            state["owner"].__init__ = init
        return init

    def __init__(self, *args, **kwargs):
        state["left"] -= 1
        if state["left"] < 0 or len(args) > len(positional):
            return compiled()(self, *args, **kwargs)
        for f, value in zip(positional, args):
            if f.alias in kwargs:
                return compiled()(self, *args, **kwargs)
            assign(self, f.name, value)
        used = 0
        for f in positional[len(args) :] + keyword:
            if f.alias in kwargs:
                value = kwargs[f.alias]
                used += 1
            elif f.default is _NOTHING:
                return compiled()(self, *args, **kwargs)
            elif type(f.default) is factory:
                value = f.default.make()
            else:
                value = f.default
            assign(self, f.name, value)
        if used != len(kwargs):
            return compiled()(self, *args, **kwargs)

    def settle(owner: type) -> None:
        state["owner"] = owner

    return __init__, settle


def _init(qualname: str, found: tuple[Field, ...], frozen: bool, owner: type | None = None) -> Callable:
    """`__init__` with the record's own signature, like attrs' own: IR nodes are made by
    the hundred thousand, and such a function is the fastest way to make them.

    Compiling one per class cost most of a record's making, so the code is compiled once
    per shape (how many positional and keyword-only parameters, which fields have a
    factory) with placeholder names, and each class gets a copy renamed to its own fields;
    the defaults are the function's own (`__defaults__`, `__kwdefaults__`), not code.

    An immutable record's fields are set each through its slot's own setter (`_set<i>`,
    the `__set__` of `owner`'s slot): its class refuses `self.x = ...`, and the setter
    is about twice as fast as `object.__setattr__`, which looks the slot up by name (a
    library's check makes hundreds of thousands of IR nodes)."""
    ordered, shape = _shape(found, frozen)
    made = shape[3]
    code = _SHAPES.get(shape)
    if code is None:
        code = _SHAPES[shape] = _shipped_init(shape) or _shaped_init(*shape)
    # `p<i>` is the i-th parameter, `f<i>` its attribute's name (a constant or a name).
    params = {f"p{i}": f.alias for i, f in enumerate(ordered)}
    attributes = {f"f{i}": f.name for i, f in enumerate(ordered)}
    code = code.replace(
        co_varnames=tuple(params.get(name, name) for name in code.co_varnames),
        co_names=tuple(attributes.get(name, name) for name in code.co_names),
        co_consts=tuple(attributes.get(c, c) if type(c) is str else c for c in code.co_consts),
    )
    namespace: dict[str, Any] = {
        "_NOTHING": _NOTHING,
        **{f"_make{i}": f.default.make for i, f in enumerate(ordered) if made[i]},
    }
    if frozen:
        namespace.update((f"_set{i}", _slot_setter(owner, f.name)) for i, f in enumerate(ordered))
    defaults = {
        f.alias: _NOTHING if type(f.default) is factory else f.default for f in ordered if f.default is not _NOTHING
    }
    init = FunctionType(
        code,
        namespace,
        "__init__",
        tuple(defaults[f.alias] for f in ordered if not f.kw_only and f.alias in defaults) or None,
    )
    init.__kwdefaults__ = {f.alias: defaults[f.alias] for f in ordered if f.kw_only and f.alias in defaults} or None
    return init


def _slot_setter(owner: type | None, name: str) -> Callable[[object, Any], None]:
    """What sets the field `name` of an immutable record of `owner`: its slot's setter,
    or `object.__setattr__` by name when the class is not known yet."""
    slot = owner.__dict__.get(name) if owner is not None else None
    if type(slot) is _SLOT:
        return slot.__set__
    return lambda made, value: object.__setattr__(made, name, value)


def _shape(found: tuple[Field, ...], frozen: bool) -> tuple[tuple[Field, ...], tuple]:
    """The fields in signature order (the positional ones, then the keyword-only ones) and
    the record's shape: frozen, how many of each, which have a factory."""
    ordered = tuple(f for f in found if not f.kw_only) + tuple(f for f in found if f.kw_only)
    keyword = sum(f.kw_only for f in ordered)
    return ordered, (frozen, len(ordered) - keyword, keyword, tuple(type(f.default) is factory for f in ordered))


#: The compiled `__init__` of each shape of record (see `_init`).
_SHAPES: dict[tuple, CodeType] = {}
#: The shapes compiled ahead, in record_shapes.py; None until first needed.
_SHIPPED: dict[tuple, CodeType] | None = None


def _shipped_init(shape: tuple) -> CodeType | None:
    """The code of `shape` from record_shapes.py, which holds the shapes of the package's
    own records compiled ahead (Python keeps the module compiled): compiling one here cost
    0.1 to 0.3 ms, about 1 ms of a one-file check. The same source as `_shaped_init`'s,
    so the same code; None for a shape it lacks (a class added since it was written)."""
    global _SHIPPED
    if _SHIPPED is None:
        try:
            from catalyst_dsl._internal.record_shapes import MAKERS, SHAPES
        except ImportError:  # not written yet (python -m catalyst_dsl._internal.records writes it)
            MAKERS, SHAPES = {}, {}
        _SHIPPED = SHAPES
        for count, code in MAKERS.items():
            _MAKERS.setdefault(count, code.replace(co_filename=_SOURCE_NAME, co_firstlineno=1))
    code = _SHIPPED.get(shape)
    # As compiled by _shaped_init: named in tracebacks as that code is.
    return None if code is None else code.replace(co_filename=_SOURCE_NAME, co_firstlineno=1)


def _shaped_init(frozen: bool, positional: int, keyword: int, made: tuple[bool, ...]) -> CodeType:
    return _compiled(_shaped_source(frozen, positional, keyword, made), "__init__")


def _compiled(source: str, name: str) -> CodeType:
    """The code of the function `name` that `source` defines."""
    module = compile(source, _SOURCE_NAME, "exec")
    return next(c for c in module.co_consts if isinstance(c, CodeType) and c.co_name == name)


_SOURCE_NAME = "<record __init__>"


def _shaped_source(frozen: bool, positional: int, keyword: int, made: tuple[bool, ...]) -> str:
    params = [f"p{i}" for i in range(positional)]
    keywords = [f"p{i}" for i in range(positional, positional + keyword)]
    lines = []
    for i in range(len(made)):
        value = f"_make{i}() if p{i} is _NOTHING else p{i}" if made[i] else f"p{i}"
        lines.append(f"    _set{i}(self, {value})" if frozen else f"    self.f{i} = {value}")
    signature = ", ".join(["self", *params, *(["*", *keywords] if keywords else [])])
    return f"def __init__({signature}):\n" + ("\n".join(lines) or "    pass") + "\n"


def _methods(name: str, qualname: str, found: tuple[Field, ...], frozen: bool) -> dict[str, Callable]:
    """The record's other methods, as closures over its fields: compiling code for each
    (what attrs and dataclasses do) costs more than these methods ever save at run time."""
    assign = object.__setattr__
    names = tuple(f.name for f in found)
    values = _getter(names)
    compared = _getter(tuple(f.name for f in found if f.eq))
    shown = tuple(f.name for f in found if f.repr)

    def __repr__(self):
        return f"{name}(" + ", ".join(f"{field}={getattr(self, field)!r}" for field in shown) + ")"

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return compared(self) == compared(other)

    def __getstate__(self):
        return values(self)

    def __setstate__(self, state):
        for field, value in zip(names, state):
            assign(self, field, value)

    methods = {"__repr__": __repr__, "__eq__": __eq__, "__getstate__": __getstate__, "__setstate__": __setstate__}
    if frozen:

        def __hash__(self):
            return hash((qualname, *compared(self)))

        def __setattr__(self, field, value):
            raise FrozenRecordError(f"a {name} cannot be changed ({field})")

        def __delattr__(self, field):
            raise FrozenRecordError(f"a {name} cannot be changed ({field})")

        methods.update(__hash__=__hash__, __setattr__=__setattr__, __delattr__=__delattr__)
    return methods


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple]:
    """The values of `names` of a record, as a tuple."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        only = names[0]
        return lambda value: (getattr(value, only),)
    return lambda value: ()


# -- the shapes compiled ahead ---------------------------------------------------------


def shapes_source() -> str:
    """The text of record_shapes.py: the `__init__` of every shape of record that the
    package's modules declare, as `_shaped_source` writes it."""
    import importlib
    import pkgutil

    import catalyst_dsl

    shapes = set()
    for module in pkgutil.walk_packages(catalyst_dsl.__path__, "catalyst_dsl."):
        if module.name == "catalyst_dsl.__main__":
            continue  # runs the command line
        for value in vars(importlib.import_module(module.name)).values():
            if is_record(value):
                shapes.add(_shape(value.__record_fields__, value.__record_frozen__)[1])
    parts = [
        '"""The compiled `__init__` of every shape of record the package declares (records._init),\n'
        'and the code of `records.maker`\'s functions for each number of fields a record has.\n\n'
        'Generated by `python -m catalyst_dsl._internal.records`; do not edit. Each function is the source\n'
        'records._shaped_source (or _maker_source) writes; only its code is used, renamed for each class.\n"""\n\n'
        "from __future__ import annotations  # as records.py, which compiles the same source\n\n"
        "SHAPES = {}\nMAKERS = {}\n"
    ]
    for shape in sorted(shapes):
        parts.append(f"\n{_shaped_source(*shape)}SHAPES[{shape!r}] = __init__.__code__\n")
    for count in sorted({len(made) for _, _, _, made in shapes}):
        parts.append(f"\n{_maker_source(count)}MAKERS[{count}] = make.__code__\n")
    parts.append("\ndel __init__, make\n")
    return "".join(parts)


def main() -> None:
    from pathlib import Path

    from catalyst_dsl._internal import records  # this module as the package imports it, not as __main__

    target = Path(records.__file__).with_name("record_shapes.py")
    target.write_text(records.shapes_source(), encoding="utf-8", newline="\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
