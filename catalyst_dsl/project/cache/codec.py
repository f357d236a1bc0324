"""The format of a check cache entry: a compiled result as JSON, and the decoder that
turns it back into exactly the classes and shapes written here.

Which fields of a class an entry keeps, in which order, and what each may hold come from
the package's one account of records as JSON (catalyst_dsl._internal.record_fields, which
serialization.py's formats use too). How they are kept is this module's own: each record
as `{"@": class, "f": [values]}`, positionally, made again by the JSON parser's object hook
as it reads them, which was measured at about half the time of reading an entry as one of
serialization.py's formats (docs/decisions.md, "One path from records to JSON").

The seal is where trust begins. Someone who can read the key can seal any playbook at
all, so the decoder does not try to prove a sealed entry harmless: it refuses what this
module never writes where that is cheap to see on each record (a field of one class, a
span, a finding's code). Checking every field against its whole annotation cost about
3 ms of each read of a large entry (the kitchen-sink's 11 ms became 14-15).
"""

from __future__ import annotations

import json
import operator

from catalyst_dsl._internal import records
from catalyst_dsl.diagnostics.severity import Severity
from catalyst_dsl.syntax.source import SourceFile, Span


class CacheEntryError(ValueError):
    """An entry that does not decode into the classes and shapes written here."""


def _classes() -> dict[str, type]:
    """Every class an entry may name: the IR, expressions, types, diagnostics, call sites."""
    from catalyst_dsl.checks.call_sites import CallSite
    from catalyst_dsl.diagnostics import model
    from catalyst_dsl.ir import nodes, types
    from catalyst_dsl.syntax.expr import nodes as expr_nodes

    found: dict[str, type] = {}
    for module in (nodes, types, expr_nodes):
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and records.is_record(value):
                found[value.__name__] = value
    for cls in (CallSite, model.Diagnostic, model.Label):
        found[cls.__name__] = cls
    return found


class _Shape:
    """How one class is kept: its fields (attribute, init argument) and which of them
    JSON turns from tuples into arrays (and back), hold dicts, or hold any scalar.
    Worked out from the fields the cache keeps (`_fields`) and what each may hold."""

    __slots__ = ("name", "fields", "tuples", "nested_tuples", "dicts", "scalars", "spans", "typed", "_values")

    def __init__(self, cls: type, kept: tuple, classes: dict[str, type]) -> None:
        self.name = cls.__name__
        self.fields = tuple((slot.name, slot.alias) for slot in kept)
        tuples, nested, dicts, scalars, spans, typed = [], [], [], [], [], []
        for i, slot in enumerate(kept):
            kind = slot.kind.bare()
            if kind.sort == "tuple":
                tuples.append(i)
                if kind.args[0].sort in ("tuple", "fixed"):
                    nested.append(i)
            elif kind.sort == "dict":
                dicts.append(i)
            elif kind.sort == "any":
                scalars.append(i)
            allowed = _allowed(kind, classes)
            if allowed:
                allowed += (type(None),) if slot.kind.sort == "optional" else ()
                typed.append((i, allowed))
                if Span in allowed:
                    spans.append(i)
        self.tuples, self.nested_tuples, self.dicts = tuple(tuples), tuple(nested), tuple(dicts)
        self.scalars = tuple(scalars)
        #: Fields that hold a span: one of this file not yet positioned is kept as its
        #: offsets (one number) right there, not as a tagged object (a third of an entry's objects).
        self.spans = tuple(spans)
        #: Fields whose value is one exact class (or None where the field may be empty): text,
        #: a whole number, a truth value, a span or one of the kept records. An entry that
        #: says otherwise is not one this module wrote, whatever its seal.
        self.typed = tuple(typed)
        self._values = operator.attrgetter(*(name for name, _ in self.fields)) if len(self.fields) > 1 else None

    def read(self, value) -> list:
        """The values of the kept fields, in order."""
        if len(self.fields) == 1:
            return [getattr(value, self.fields[0][0])]
        return list(self._values(value)) if self.fields else []


def _allowed(kind, classes: dict[str, type]) -> tuple[type, ...]:
    """The classes a field of `kind` (not None) holds when it is one class: text, a number,
    a truth value, a span or a kept record (with the kept records made from it); else ()."""
    if kind.cls is float:
        return (float, int)
    if kind.sort == "scalar" or kind.cls is Span:
        return (kind.cls,)
    if kind.sort == "record" and classes.get(kind.cls.__name__) is kind.cls:
        # a kept record, or a base of kept records (a type of the IR)
        return tuple(c for c in classes.values() if issubclass(c, kind.cls))
    return ()


_CLASSES: dict[str, type] | None = None
_SHAPES: dict[type, _Shape] = {}
#: Fields that are never kept: a template's map back into the YAML nodes (`smap`) and the
#: type its place expects (`expected`) serve the file's own checks, which a cached result
#: has had already; nothing reads them from a playbook that is checked or run as a whole
#: (the language server compiles its own). The types were a sixteenth of an entry's records.
_DROPPED = frozenset({"smap", "expected"})
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
    classes = _registry()
    if classes.get(cls.__name__) is not cls:
        return None
    shape = _SHAPES[cls] = _Shape(cls, _fields(cls), classes)
    return shape


def _fields(cls: type) -> tuple:
    """The fields an entry keeps of `cls`, in the order of its values: every field, positions
    too (a cached result is shown and run), but `_DROPPED`, in `__init__`'s order."""
    from catalyst_dsl._internal.record_fields import slots

    return slots(cls, positions=True, dropped=_DROPPED, init_order=True, camel_case=False)


class _Encoder:
    """The `default` of json.dumps, for what JSON has no form of: objects as
    {"@": class, "f": [fields]}, spans of this file not yet positioned as {"o": offsets}
    (`Span.packed_in`: its two offsets into the text as one number), positioned ones as
    {"s": [line, col, end line, end col]} (another file's as {"S": [file, ...]}), dicts
    as {"d": [[key, value], ...]}, a severity as {"v": [value]}. Tuples become arrays;
    the decoder knows which fields hold them."""

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
