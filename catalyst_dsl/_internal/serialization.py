"""Records (catalyst_dsl._internal.records) as JSON-ready data and back: the one place that
says how, for the IR JSON (ir/serialize.py), run snapshots (runtime/state/snapshot_codec.py)
and the mock AI's scripts (runtime/adapters/mock_script.py), each a `Format` here, and for
the check cache (project/cache/codec.py), which shares the field lists (record_fields.py).

A format says
- which fields are kept: all of them, or only those that count in equality (the IR's JSON
  leaves positions out), less the names it never keeps; in the order the class declares
  them or in `__init__`'s;
- what a field is called: its Python name or camelCase (`allowed_write_paths` ->
  `allowedWritePaths`, `finally_` -> `finally`);
- which classes carry a tag naming their class (`"node": "Tmpl"`): how a reader tells the
  members of a union apart;
- how data is read: strictly (every key a field's, though a field with a default may be
  missing; every value of its field's declared type: a number is never read as text, nor a
  truth value as a number) and with every problem reported, each with the JSON path of the
  value it is about (`Invalid`), in the words of JSON or of YAML (`Words`).

Writing runs a function per class compiled from code written for its fields: the fastest
to run, and compiling one costs about 0.1 ms. Reading runs a closure per field type: files
are read far less often than they are written.

The check cache reads and writes its entries its own way, as a specialisation of these rules
rather than through a format: positionally, each object made by the JSON parser's hook as
it is read. That was measured against reading an entry as a format here, which took about
twice as long (docs/decisions.md, "One path from records to JSON").
"""

from __future__ import annotations

import json
from itertools import repeat
from types import CodeType, FunctionType

from catalyst_dsl._internal.record_fields import Kind, Slot, camel, kind_of, nothing_named, slots
from catalyst_dsl._internal.records import NOTHING, is_record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

__all__ = ["JSON_WORDS", "YAML_WORDS", "Format", "Invalid", "Words", "camel", "json_path", "unknown_keys"]


# -- problems -------------------------------------------------------------------------------


class Invalid(ValueError):
    """Data that does not read as what was asked for. `problems` are (text, path) pairs,
    every one found; a path is the keys and indexes that lead to the value from the data
    read (`("steps", 3, "attempts")`)."""

    def __init__(self, problems: list[tuple[str, tuple]]) -> None:
        super().__init__(problems[0][0])
        self.problems = problems

    def lines(self) -> list[str]:
        """Each problem as `text @ $.steps[3].attempts`."""
        return [f"{text} @ {json_path(path)}" for text, path in self.problems]


def json_path(path: Iterable[str | int]) -> str:
    return "$" + "".join(f"[{step}]" if type(step) is int else f".{step}" for step in path)


class Words:
    """How a format's problems name values: what was found (`kinds`, by Python type) and
    what a scalar field expects (`expected`); with `shown`, a scalar of the wrong type is
    quoted, as JSON, after its kind."""

    def __init__(self, kinds: dict[type, str], expected: dict[type, str], shown: bool) -> None:
        self.kinds = kinds
        self.expected = expected
        self.shown = shown
        self.object = kinds[dict]
        self.array = kinds[list]

    def kind(self, value: object) -> str:
        return self.kinds.get(type(value), type(value).__name__)

    def mismatch(self, expected: str, value: object, show: bool = False) -> str:
        found = self.kind(value)
        if show and self.shown:
            found += " " + json.dumps(value)[:40]
        return f"expected {expected}, got {found}"


_FOUND = {str: "a string", int: "a number", float: "a number", bool: "a boolean", type(None): "null"}
_EXPECTED = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}
#: The words of JSON files (snapshots, the IR).
JSON_WORDS = Words({**_FOUND, list: "an array", dict: "an object"}, _EXPECTED, shown=True)
#: The words of YAML files written by hand (the mock AI's scripts).
YAML_WORDS = Words({**_FOUND, list: "a list", dict: "a mapping"}, {**_EXPECTED, bool: "true or false"}, shown=False)


def unknown_keys(unknown: list[str], known: list[str]) -> str:
    return f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(repr(key) for key in unknown)}"


# -- formats --------------------------------------------------------------------------------


class Format:
    """One way of keeping records as data (the module's docstring says what it decides).

    `camel_case`: keys in camelCase; `positions`: keep the fields left out of equality;
    `dropped`: names never kept; `init_order`: fields in `__init__`'s order; `tag`, `tagged`:
    the key that names the class of a tagged record, and those classes (all with `tagged`
    None); `words`: how problems are put; `unknown(unknown, known)`: what is said of keys no
    field has; `check(record)`: a problem with a record whose fields all read, or None;
    `leaves`: by class, how values that are not records are written and read (`re.Pattern`),
    as (writer, reader), either None where it is not needed; a reader raises TypeError or
    ValueError with its problem."""

    def __init__(
        self,
        *,
        camel_case: bool = False,
        positions: bool = False,
        dropped: Iterable[str] = (),
        init_order: bool = False,
        tag: str | None = None,
        tagged: Iterable[type] | None = (),
        words: Words = JSON_WORDS,
        unknown: Callable[[list[str], list[str]], str] = unknown_keys,
        check: Callable[[Any], str | None] | None = None,
        leaves: dict[type, tuple[Callable[[Any], Any] | None, Callable[[Any], Any] | None]] | None = None,
    ) -> None:
        self.options = {
            "positions": positions,
            "dropped": frozenset(dropped),
            "init_order": init_order,
            "camel_case": camel_case,
        }
        self.tag = tag
        self.tagged = None if tagged is None else frozenset(tagged)
        self.words = words
        self.unknown = unknown
        self.check = check
        self.leaves = leaves or {}
        self._fields: dict[type, tuple[Slot, ...]] = {}
        self._encoders = _Lazy(self._encoder)
        self._decoders = _Lazy(self._decoder)
        self.plain = self._plain_writer()

    def fields(self, cls: type) -> tuple[Slot, ...]:
        """The fields of the record class `cls` this format keeps (record_fields.slots)."""
        found = self._fields.get(cls)
        if found is None:
            found = self._fields[cls] = slots(cls, **self.options)
        return found

    def is_tagged(self, cls: type) -> bool:
        return self.tag is not None and (self.tagged is None or cls in self.tagged)

    # -- writing

    def unstructure(self, value: Any) -> Any:
        """`value` (a record, or JSON data holding records) as JSON data."""
        return self.plain(value)

    def _plain_writer(self) -> Callable[[Any], Any]:
        """The writer of a value whose field does not say what it holds (`Any`, `object`):
        by its class, containers copied, records and `leaves` written by their own writers."""
        encoders = self._encoders
        leaves = {cls: write for cls, (write, _) in self.leaves.items() if write is not None}

        def plain(value):
            kind = type(value)
            if kind is str or kind is int or kind is bool or kind is float or value is None:
                return value
            if isinstance(value, dict):
                return {key: plain(item) for key, item in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(item) for item in value]
            if is_record(kind):
                return encoders[kind](value)
            write = leaves.get(kind)
            return value if write is None else write(value)

        return plain

    def _encoder(self, cls: type) -> Callable[[Any], dict]:
        """The writer of `cls`: `{key: value.field, ...}`, compiled for its fields."""
        if not is_record(cls):
            raise TypeError(f"cannot write a {cls.__name__} as JSON")
        namespace: dict[str, Any] = {"_E": self._encoders, "_plain": self.plain}
        items = [f"{self.tag!r}: {cls.__name__!r}"] if self.is_tagged(cls) else []
        later = []
        code = _Code(cls, namespace, self.leaves)
        for i, slot in enumerate(self.fields(cls)):
            written = code.writing(slot.kind, f"value.{slot.name}")
            if slot.omitted:
                namespace[f"_default{i}"] = slot.default
                later.append(f"    if value.{slot.name} != _default{i}:\n        data[{slot.key!r}] = {written}\n")
            else:
                items.append(f"{slot.key!r}: {written}")
        body = "{" + ", ".join(items) + "}"
        if later:
            source = f"def encode(value):\n    data = {body}\n{''.join(later)}    return data\n"
        else:
            source = f"def encode(value):\n    return {body}\n"
        module = compile(source, f"<write {cls.__qualname__}>", "exec")
        return FunctionType(next(c for c in module.co_consts if type(c) is CodeType), namespace, "encode")

    # -- reading

    def structure(self, data: Any, target: Any) -> Any:
        """`data` read as `target`, a record class or a type such as `list[Entry]`;
        Invalid naming every problem."""
        kind = Kind("record", target) if is_record(target) else kind_of(target, nothing_named)
        return self._reader(kind)(data)

    def _decoder(self, cls: type) -> Callable[[Any], Any]:
        """The reader of a `cls` record from a JSON object."""
        if not is_record(cls):
            raise TypeError(f"cannot read a {cls.__name__} from JSON")
        words, unknown, check = self.words, self.unknown, self.check
        fields = self.fields(cls)
        plan = [(s.key, s.alias, self._reader(s.kind), s.default is NOTHING) for s in fields]
        keys = [s.key for s in fields]
        known = frozenset(keys)
        tag, name = (self.tag, cls.__name__) if self.is_tagged(cls) else (None, None)

        def decode(data):
            if type(data) is not dict:
                raise Invalid([(words.mismatch(words.object, data), ())])
            problems: list[tuple[str, tuple]] = []
            given = {}
            for key, alias, read, required in plan:
                if key in data:
                    try:
                        given[alias] = read(data[key])
                    except Invalid as exc:
                        problems.extend((text, (key, *path)) for text, path in exc.problems)
                elif required:
                    problems.append(("required key missing", (key,)))
            extra = data.keys() - known
            if tag in extra:
                extra.discard(tag)
                if data[tag] != name:
                    problems.append((f"{json.dumps(data[tag])[:40]} is not {json.dumps(name)}", (tag,)))
            if extra:
                problems.append((unknown(sorted(extra), keys), ()))
            if problems:
                raise Invalid(problems)
            made = cls(**given)
            problem = None if check is None else check(made)
            if problem is not None:
                raise Invalid([(problem, ())])
            return made

        return decode

    def _reader(self, kind: Kind) -> Callable[[Any], Any]:
        """The reader of a value of `kind`: the value as the field holds it, or Invalid."""
        sort, words = kind.sort, self.words
        if sort == "any":
            return _same
        if sort == "scalar":
            return _Exactly((kind.cls,), words.expected[kind.cls], words).read
        if sort == "none":
            return _Exactly((type(None),), "null", words).read
        if sort == "optional":
            inner = self._reader(kind.args[0])
            return lambda value: None if value is None else inner(value)
        if sort == "literal":
            return _OneOf(kind.args).read
        if sort in ("list", "tuple"):
            return _sequence_reader(list if sort == "list" else tuple, self._reader(kind.args[0]), words)
        if sort == "fixed":
            return _fixed_reader(tuple(self._reader(k) for k in kind.args), words)
        if sort == "dict":
            return _dict_reader(self._reader(kind.args[1]), words)
        if sort == "record":
            decoders, cls = self._decoders, kind.cls
            return lambda value: decoders[cls](value)
        if sort == "union":
            return self._union_reader(kind.args)
        if sort == "other" and self.leaves.get(kind.cls, (None, None))[1] is not None:
            return _leaf_reader(self.leaves[kind.cls][1])
        raise TypeError(f"cannot read {kind!r} from JSON")

    def _union_reader(self, members: tuple[Kind, ...]) -> Callable[[Any], Any]:
        words = self.words
        if all(k.sort == "scalar" for k in members):
            kinds = tuple(k.cls for k in members)
            return _Exactly(kinds, " or ".join(words.expected[k] for k in kinds), words).read
        if not all(k.sort == "record" and self.is_tagged(k.cls) for k in members):
            raise TypeError(f"cannot tell the members of {members!r} apart")
        by_name = {k.cls.__name__: k.cls for k in members}
        decoders, tag = self._decoders, self.tag

        def read(value):
            if type(value) is not dict:
                raise Invalid([(words.mismatch(words.object, value), ())])
            cls = by_name.get(value.get(tag))
            if cls is None:
                found = json.dumps(value.get(tag))[:40]
                raise Invalid([(f"{found} is not one of {', '.join(map(json.dumps, by_name))}", (tag,))])
            return decoders[cls](value)

        return read


class _Lazy(dict):
    """Class -> its writer or reader, made the first time it is asked for: classes refer to
    each other, so none can be made before those it holds."""

    def __init__(self, make: Callable[[type], Callable]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, cls: type) -> Callable:
        made = self[cls] = self.make(cls)
        return made


#: Kinds whose values JSON holds as they are.
_AS_IS = ("scalar", "literal", "none")


class _Code:
    """The expressions in the code of one class's writer."""

    def __init__(self, cls: type, namespace: dict[str, Any], leaves: dict) -> None:
        self.cls = cls
        self.namespace = namespace
        self.leaves = leaves
        #: How many names the code has bound so far: each expression binds names of its own.
        self.bound = 0

    def writing(self, kind: Kind, value: str) -> str:
        """Code that writes `value` (an expression without side effects) of `kind`: `value`
        itself when JSON holds it as it is. Containers are written as new lists and dicts."""
        sort = kind.sort
        if sort in _AS_IS or (sort == "union" and all(k.sort == "scalar" for k in kind.args)):
            return value
        if sort == "any":
            return f"_plain({value})"
        if sort in ("record", "union"):
            return f"_E[type({value})]({value})"
        self.bound += 1
        if sort == "other" and self.leaves.get(kind.cls, (None, None))[0] is not None:
            self.namespace[f"_leaf{self.bound}"] = self.leaves[kind.cls][0]
            return f"_leaf{self.bound}({value})"
        name = f"_x{self.bound}"
        if sort == "optional":
            inner = self.writing(kind.args[0], name)
            return value if inner == name else f"(None if ({name} := {value}) is None else {inner})"
        if sort in ("list", "tuple"):
            item = self.writing(kind.args[0], name)
            return f"list({value})" if item == name else f"[{item} for {name} in {value}]"
        if sort == "fixed":
            return "[" + ", ".join(self.writing(k, f"{value}[{i}]") for i, k in enumerate(kind.args)) + "]"
        if sort == "dict":
            item = self.writing(kind.args[1], name)
            return f"dict({value})" if item == name else f"{{_k: {item} for _k, {name} in {value}.items()}}"
        raise TypeError(f"{self.cls.__name__}: cannot write {kind!r} as JSON")


# -- readers of each kind -------------------------------------------------------------------


def _same(value: Any) -> Any:
    return value


class _Exactly:
    """A value of one of `kinds`, exactly (True is no integer); an integer for a float."""

    def __init__(self, kinds: tuple[type, ...], expected: str, words: Words) -> None:
        self.kinds, self.expected, self.words = kinds, expected, words

    def read(self, value: Any) -> Any:
        found = type(value)
        if found in self.kinds:
            return value
        if found is int and float in self.kinds:
            try:
                return float(value)
            except OverflowError:  # a JSON integer of hundreds of digits: no float holds it
                raise Invalid([(f"expected {self.expected}, got an integer too large for one", ())]) from None
        raise Invalid([(self.words.mismatch(self.expected, value, show=True), ())])


class _OneOf:
    """One of a literal's values."""

    def __init__(self, choices: tuple) -> None:
        self.choices = choices

    def read(self, value: Any) -> Any:
        # Compared with their types: True is not read as 1.
        if not any(value == choice and type(value) is type(choice) for choice in self.choices):
            allowed = ", ".join(json.dumps(choice) for choice in self.choices)
            raise Invalid([(f"{json.dumps(value)[:40]} is not one of {allowed}", ())])
        return value


def _sequence_reader(make: type, item: Callable[[Any], Any], words: Words) -> Callable[[Any], Any]:
    def read(value):
        # Only an array: a string would read as a list of its characters.
        if type(value) is not list:
            raise Invalid([(words.mismatch(words.array, value), ())])
        items = _items(zip(repeat(item), value))
        return items if make is list else make(items)

    return read


def _fixed_reader(readers: tuple[Callable[[Any], Any], ...], words: Words) -> Callable[[Any], Any]:
    def read(value):
        if type(value) is not list or len(value) != len(readers):
            raise Invalid([(words.mismatch(f"{words.array} of {len(readers)} items", value), ())])
        return tuple(_items(zip(readers, value)))

    return read


def _items(pairs: Iterable[tuple[Callable[[Any], Any], Any]]) -> list:
    """Each value read by its reader; Invalid naming every bad one by its index."""
    items, problems = [], []
    for index, (read, value) in enumerate(pairs):
        try:
            items.append(read(value))
        except Invalid as exc:  # collected: every bad item is reported
            problems.extend((text, (index, *path)) for text, path in exc.problems)
    if problems:
        raise Invalid(problems)
    return items


def _dict_reader(item: Callable[[Any], Any], words: Words) -> Callable[[Any], Any]:
    def read(value):
        if type(value) is not dict:
            raise Invalid([(words.mismatch(words.object, value), ())])
        if item is _same:
            return dict(value)
        made, problems = {}, []
        for key, each in value.items():
            try:
                made[key] = item(each)
            except Invalid as exc:
                problems.extend((text, (key, *path)) for text, path in exc.problems)
        if problems:
            raise Invalid(problems)
        return made

    return read


def _leaf_reader(leaf: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def read(value):
        try:
            return leaf(value)
        except (TypeError, ValueError) as exc:
            raise Invalid([(str(exc), ())]) from None

    return read
