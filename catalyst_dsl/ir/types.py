"""Value types: for inputs, action configs and results, and expressions.

Small and structural. `Any` is compatible with everything (a value we cannot know
statically is never reported as wrong); objects may be closed (known fields only) or open.
"""

from __future__ import annotations

from typing import Iterable

from catalyst_dsl._internal.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from catalyst_dsl.ir.nodes import InputDecl


@record
class Type:
    def describe(self) -> str:
        raise NotImplementedError


@record
class AnyT(Type):
    def describe(self) -> str:
        return "any"


@record
class StringT(Type):
    def describe(self) -> str:
        return "string"


@record
class NumberT(Type):
    def describe(self) -> str:
        return "number"


@record
class BooleanT(Type):
    def describe(self) -> str:
        return "boolean"


@record
class NullT(Type):
    def describe(self) -> str:
        return "null"


@record
class EnumT(Type):
    values: tuple[str, ...]

    def describe(self) -> str:
        return " | ".join(repr(v) for v in self.values)


@record
class ArrayT(Type):
    item: Type = AnyT()

    def describe(self) -> str:
        return f"array<{self.item.describe()}>" if not isinstance(self.item, AnyT) else "array"


@record
class Field:
    type: Type
    required: bool = False
    doc: str = ""


@record
class ObjectT(Type):
    """An object: known fields, and (when open) other keys of type `rest`."""

    fields: tuple[tuple[str, Field], ...] = ()
    rest: Type | None = None

    @property
    def open(self) -> bool:
        return self.rest is not None

    def field(self, name: str) -> Field | None:
        for key, field in self.fields:
            if key == name:
                return field
        return None

    def names(self) -> list[str]:
        return [k for k, _ in self.fields]

    def member(self, name: str) -> Type | None:
        f = self.field(name)
        if f is not None:
            return f.type
        return self.rest

    def describe(self) -> str:
        if not self.fields:
            return "object" if self.rest is None or isinstance(self.rest, AnyT) else f"map<{self.rest.describe()}>"
        return "{" + ", ".join(self.names()) + (", …" if self.open else "") + "}"


@record
class UnionT(Type):
    options: tuple[Type, ...]

    def describe(self) -> str:
        return " | ".join(o.describe() for o in self.options)


@record
class StepsT(Type):
    """A list of steps (the body of if, for-each, try, function, parallel)."""

    def describe(self) -> str:
        return "steps"


@record
class DurationT(Type):
    """Seconds as a number, or a string with a unit: 30s, 5m, 1h, 500ms."""

    def describe(self) -> str:
        return "duration"


@record
class InputsT(Type):
    """Input declarations (the `inputs` of a `function`)."""

    def describe(self) -> str:
        return "input declarations"


ANY = AnyT()
STRING = StringT()
NUMBER = NumberT()
BOOLEAN = BooleanT()
NULL = NullT()
STEPS = StepsT()
DURATION = DurationT()


def obj(rest: Type | None = None, **fields: Type | Field) -> ObjectT:
    """An object type; `name_` keys drop the trailing underscore, `_` becomes `-` never."""
    items = []
    for key, value in fields.items():
        field = value if isinstance(value, Field) else Field(value)
        items.append((key.rstrip("_"), field))
    return ObjectT(tuple(items), rest)


def req(t: Type, doc: str = "") -> Field:
    return Field(t, True, doc)


def opt(t: Type, doc: str = "") -> Field:
    return Field(t, False, doc)


def union(*options: Type) -> Type:
    flat: list[Type] = []
    for o in options:
        for item in o.options if isinstance(o, UnionT) else (o,):
            if isinstance(item, AnyT):
                return ANY
            if item not in flat:
                flat.append(item)
    if len(flat) == 1:
        return flat[0]
    return UnionT(tuple(flat))


def options_of(t: Type) -> tuple[Type, ...]:
    return t.options if isinstance(t, UnionT) else (t,)


def is_any(t: Type) -> bool:
    return isinstance(t, AnyT)


def is_stringish(t: Type) -> bool:
    return isinstance(t, (StringT, EnumT))


def assignable(actual: Type, expected: Type) -> bool:
    """Can a value of type `actual` be given where `expected` is declared?"""
    if isinstance(actual, AnyT) or isinstance(expected, AnyT):
        return True
    if isinstance(actual, UnionT):
        # A value that may be null is accepted: whether it is null is known at run time.
        present = [o for o in actual.options if not isinstance(o, NullT)]
        if not present:
            return assignable(NULL, expected)
        return all(assignable(o, expected) for o in present)
    if isinstance(expected, UnionT):
        return any(assignable(actual, o) for o in expected.options)
    if isinstance(expected, DurationT):
        return isinstance(actual, (NumberT, StringT))
    if isinstance(expected, (StringT,)):
        # Scalars are written into text as they are (numbers and booleans stringify).
        return isinstance(actual, (StringT, EnumT, NumberT, BooleanT))
    if isinstance(expected, EnumT):
        if isinstance(actual, EnumT):
            return set(actual.values) <= set(expected.values)
        return isinstance(actual, StringT)
    if isinstance(expected, ArrayT):
        return isinstance(actual, ArrayT) and assignable(actual.item, expected.item)
    if isinstance(expected, ObjectT):
        if not isinstance(actual, ObjectT):
            return False
        for name, field in expected.fields:
            got = actual.member(name)
            if got is not None and not assignable(got, field.type):
                return False
        return True
    return type(actual) is type(expected)


def type_of_value(value: object) -> Type:
    """The type of a literal Python value (from YAML)."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, (int, float)):
        return NUMBER
    if isinstance(value, str):
        return STRING
    if isinstance(value, list):
        items = [type_of_value(v) for v in value]
        return ArrayT(union(*items) if items else ANY)
    if isinstance(value, dict):
        return ObjectT(tuple((k, Field(type_of_value(v), True)) for k, v in value.items()), None)
    return ANY


def join(types: Iterable[Type]) -> Type:
    items = list(types)
    return union(*items) if items else ANY


INPUT_TYPES: dict[str, Type] = {
    "string": STRING,
    "number": NUMBER,
    "boolean": BOOLEAN,
    "enum": STRING,
    "array": ArrayT(ANY),
    "object": ObjectT((), ANY),
    "any": ANY,
}

OUTPUT_TYPES: dict[str, Type] = {**INPUT_TYPES, "any": ANY}


def input_type(decl: InputDecl) -> Type:
    """The type of an input's value: an enum when it lists allowed strings."""
    if decl.allowed and decl.type in ("string", "enum"):
        return EnumT(tuple(str(a) for a in decl.allowed))
    return INPUT_TYPES.get(decl.type, ANY)


def a_type(type_: Type) -> str:
    """The type in words with its article, as messages say it: "a string", "one of a | b"."""
    text = type_.describe()
    if isinstance(type_, EnumT):
        return f"one of {text}"
    if isinstance(type_, ObjectT):
        return "a mapping"
    return ("an " if text[:1] in "aeiou" else "a ") + text
