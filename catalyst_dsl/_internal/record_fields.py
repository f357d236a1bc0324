"""Which fields of a record a format keeps, what it calls them and what each may hold: the
part of serialization.py that the check cache's own reader (project/cache/codec.py) shares.

It is a module of its own because a what-if reads the cache: importing serialization.py's
readers and writers too would cost every what-if that reads an entry about 0.4 ms more.

What a field may hold (its `Kind`) is read from the annotation's text (the package's
modules use `from __future__ import annotations`) by a parser of the little of Python's type
syntax they use, not by `typing.get_type_hints`, which evaluates each text as code.
"""

from __future__ import annotations

import json
import sys
import typing
from types import GenericAlias, UnionType

from catalyst_dsl._internal.records import NOTHING, is_record

if typing.TYPE_CHECKING:
    from typing import Any, Callable


def camel(name: str) -> str:
    """`allowed_write_paths` -> `allowedWritePaths`; `finally_` -> `finally`."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class Kind:
    """What a field may hold. `sort` is one of: scalar (`cls` str, int, float or bool), any,
    none, optional (`args`: the kind when not None), union (`args`: its members), literal
    (`args`: the values), list and tuple (`args`: the item's kind), fixed (a tuple of so
    many items, `args`: their kinds), dict (`args`: key and value), record (`cls`), other
    (`cls`: a class that is not a record, such as Span) or unknown (`args`: a name found
    nowhere)."""

    __slots__ = ("sort", "cls", "args")

    def __init__(self, sort: str, cls: Any = None, args: tuple = ()) -> None:
        self.sort = sort
        self.cls = cls
        self.args = args

    def __repr__(self) -> str:
        return f"Kind({self.sort}, {getattr(self.cls, '__name__', self.cls)}, {self.args!r})"

    def bare(self) -> Kind:
        """The kind without its None: what an optional field holds when it holds something."""
        return self.args[0] if self.sort == "optional" else self


class Slot:
    """One field as a format keeps it: its attribute (`name`), its `__init__` argument
    (`alias`), its key, its kind, its default (NOTHING, a value or a `records.factory`) and
    whether it is left out of the data while it holds its default (`omit_if_default`
    metadata: a field added later leaves the JSON and the fingerprints of every IR that does
    not use it as they were)."""

    __slots__ = ("name", "alias", "key", "kind", "default", "omitted")

    def __init__(self, name: str, alias: str, key: str, kind: Kind, default: Any, omitted: bool) -> None:
        self.name = name
        self.alias = alias
        self.key = key
        self.kind = kind
        self.default = default
        self.omitted = omitted


def slots(cls: type, *, positions: bool, dropped: frozenset[str], init_order: bool, camel_case: bool) -> tuple:
    """The fields of the record class `cls` that a format keeps, as `Slot`s: every field, or
    only those that count in equality (`positions` False: spans left out), less `dropped`;
    in declaration order, or in `__init__`'s (`init_order`: keyword-only fields last);
    keyed by their Python names or in camelCase."""
    kept = [f for f in cls.__record_fields__ if (positions or f.eq) and f.name not in dropped]
    if init_order:
        kept = [f for f in kept if not f.kw_only] + [f for f in kept if f.kw_only]
    module = cls.__module__
    return tuple(
        Slot(
            f.name,
            f.alias,
            camel(f.name) if camel_case else f.name,
            annotation_kind(module, f.type),
            f.default,
            bool(f.metadata.get("omit_if_default")),
        )
        for f in kept
    )


# -- kinds ----------------------------------------------------------------------------------

ANY, NONE = Kind("any"), Kind("none")
#: The kinds of the builtins an annotation names, by name and by class.
_NAMED = {
    **{cls.__name__: Kind("scalar", cls) for cls in (str, int, float, bool)},
    "Any": ANY,
    "object": ANY,
    "None": NONE,
    "NoneType": NONE,
}
_CLASSES = {str: _NAMED["str"], int: _NAMED["int"], float: _NAMED["float"], bool: _NAMED["bool"]}
_CLASSES.update({object: ANY, typing.Any: ANY, type(None): NONE})
#: Kinds worked out, by (module, annotation): the IR's classes share a few dozen texts.
_KINDS: dict[tuple[str, Any], Kind] = {}
#: id(an object a name stood for) -> (the object, its kind).
_RESOLVED: dict[int, tuple[Any, Kind]] = {}


def annotation_kind(module: str, annotation: Any) -> Kind:
    """The kind of a field's annotation in `module`, whose names it uses (a dotted name
    through its first part: `ir.Step`)."""
    key = (module, annotation)
    kind = _KINDS.get(key)
    if kind is None:
        namespace = vars(sys.modules[module])

        def resolve(name: str) -> Any:
            first, _, rest = name.partition(".")
            found = namespace.get(first, NOTHING)
            for part in rest.split(".") if rest else ():
                found = getattr(found, part, NOTHING)
            return found

        kind = kind_of(annotation, resolve)
        if kind.sort != "unknown":  # a name the module may define later
            _KINDS[key] = kind
    return kind


def nothing_named(name: str) -> Any:
    """The `resolve` of an annotation that is a type, not text: it names nothing."""
    return NOTHING


def kind_of(annotation: Any, resolve: Callable[[str], Any]) -> Kind:
    """The kind of an annotation, its text or the type itself; `resolve(name)` is what a
    name stands for, NOTHING when it stands for nothing."""
    if type(annotation) is str:
        if annotation.isidentifier():  # most annotations: one name, read without the parser
            return _generic(annotation, [], resolve)
        return _parsed(annotation, resolve)
    known = _CLASSES.get(annotation) if annotation.__hash__ is not None else None
    if known is not None:
        return known
    if annotation is None:
        return NONE
    if isinstance(annotation, type) and not isinstance(annotation, GenericAlias):
        if is_record(annotation):
            return Kind("record", annotation)
        if annotation in (list, tuple, dict):
            return _generic(annotation.__name__, [], resolve)
        return Kind("other", annotation)
    if isinstance(annotation, typing.ForwardRef):
        return kind_of(annotation.__forward_arg__, resolve)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return Kind("literal", args=args)
    kinds = [Ellipsis if arg is Ellipsis else kind_of(arg, resolve) for arg in args]
    if origin is typing.Union or isinstance(annotation, UnionType):
        return _union(kinds)
    if origin in (list, tuple, dict):
        return _generic(origin.__name__, kinds, resolve)
    return Kind("other", origin or annotation)


def _union(members: list[Kind]) -> Kind:
    present = [k for k in members if k.sort != "none"]
    one = present[0] if len(present) == 1 else Kind("union", args=tuple(present))
    return Kind("optional", args=(one,)) if len(present) < len(members) else one


def _generic(name: str, args: list, resolve: Callable[[str], Any]) -> Kind:
    """The kind of `name[args]`, or of `name` alone when `args` is empty."""
    base = name.rpartition(".")[2]
    if base == "Optional":
        return _union([args[0], NONE])
    if base == "Union":
        return _union(args)
    if base == "Literal":
        return Kind("literal", args=tuple(args))
    if base in ("tuple", "Tuple"):
        if len(args) == 2 and args[1] is Ellipsis:
            return Kind("tuple", args=(args[0],))
        return Kind("fixed", args=tuple(args)) if args else Kind("tuple", args=(ANY,))
    if base in ("list", "List"):
        return Kind("list", args=(args[0] if args else ANY,))
    if base in ("dict", "Dict"):
        return Kind("dict", args=tuple(args) if args else (ANY, ANY))
    known = _NAMED.get(name)
    if known is not None:
        return known
    found = resolve(name)
    if found is NOTHING:
        return Kind("unknown", args=(name,))
    # What a name stands for is the same whichever text names it: the IR's `Value` and
    # `Expr`, unions of six and ten classes, are named by a dozen annotations each.
    known = _RESOLVED.get(id(found))
    if known is None or known[0] is not found:
        known = _RESOLVED[id(found)] = (found, kind_of(found, resolve))
    return known[1]


def _parsed(text: str, resolve: Callable[[str], Any]) -> Kind:
    """An annotation's text read as a kind: names, `X[...]`, `X | Y`, `...`, quoted names
    (forward references) and, inside `Literal[...]`, quoted strings and numbers."""
    tokens = _tokens(text)
    kind, at = _read(tokens, 0, resolve)
    if at != len(tokens):
        raise SyntaxError(f"cannot read the annotation {text!r}")
    return kind


def _read(tokens: list[str], at: int, resolve: Callable[[str], Any]) -> tuple[Any, int]:
    """The kind written from `tokens[at]` on (`X`, `X[...]`, `X | Y`...), and where it ends.
    One function, not a parser object: an annotation is read in a few calls."""
    members = []
    end = len(tokens)
    while True:
        token = tokens[at]
        at += 1
        if token[0] in "'\"":  # a forward reference: most often one name
            inner = token[1:-1]
            kind = _generic(inner, [], resolve) if inner.isidentifier() else _parsed(inner, resolve)
        elif token == "...":
            kind = Ellipsis
        elif at < end and tokens[at] == "[":
            literal = token.rpartition(".")[2] == "Literal"
            args: list = []
            while tokens[at] != "]":
                if literal:
                    args.append(_literal(tokens[at + 1]))
                    at += 2
                else:
                    arg, at = _read(tokens, at + 1, resolve)
                    args.append(arg)
            at += 1
            kind = _generic(token, args, resolve)
        else:
            kind = _generic(token, [], resolve)
        members.append(kind)
        if at < end and tokens[at] == "|":
            at += 1
            continue
        return (_union(members) if len(members) > 1 else kind), at


def _literal(token: str) -> object:
    if token[0] in "'\"":
        return json.loads('"' + token[1:-1] + '"')
    # True, False, None or a number (JSON writes numbers as Python does)
    return _LITERALS[token] if token in _LITERALS else json.loads(token)


_LITERALS = {"True": True, "False": False, "None": None}


def _tokens(text: str) -> list[str]:
    """The tokens of an annotation: split on spaces once its punctuation is spaced out,
    unless a quoted text (a literal string) holds a space or punctuation itself: then one
    character at a time, each quoted text one token."""
    tokens = text.replace("[", " [ ").replace("]", " ] ").replace(",", " , ").replace("|", " | ").split()
    if "'" not in text and '"' not in text:
        return tokens
    if all(t[0] not in "'\"" or (len(t) > 1 and t[-1] == t[0]) for t in tokens):
        return tokens
    tokens = []
    at, end = 0, len(text)
    while at < end:
        char = text[at]
        if char in "'\"":
            close = text.index(char, at + 1) + 1
        elif char in "[],|":
            close = at + 1
        elif char.isspace():
            at += 1
            continue
        else:
            close = at
            while close < end and text[close] not in "[],|'\" ":
                close += 1
        tokens.append(text[at:close])
        at = close
    return tokens
