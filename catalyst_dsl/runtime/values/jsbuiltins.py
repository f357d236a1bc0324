"""The expression language's built-ins: one implementation per name the allowlist has.

`expr_builtins.py` says what may be called (and the checker types calls with it); this
module says what each call does: string, array and number methods, `Math`, `JSON`,
`Object`, `Array` and the global functions (`String`, `Number`, `parseInt`, `get`, ...).
The evaluator reaches them only through `method`, `namespace_function` and
`global_function`, which return nothing for a name the allowlist lacks.

Methods take (receiver, args); functions take (env, args); namespace functions take
(args). A missing argument is UNDEFINED, as in JavaScript; extra arguments are ignored.
An implementation refuses its arguments by raising `Fault`.
"""

from __future__ import annotations

import json
import math
from typing import Callable

from catalyst_dsl import expr_builtins as B
from catalyst_dsl.runtime.values.env import Env
from catalyst_dsl.runtime.values.jsvalues import (
    JS_WHITESPACE,
    MAX_STRING_LENGTH,
    UNDEFINED,
    Fault,
    a_kind,
    canonical_number,
    checked_text,
    decimal_number,
    is_array,
    is_number,
    number_text,
    same_value_zero,
    strict_equal,
    stringify,
    to_integer,
    to_number,
    to_text,
    to_uint32,
    too_long,
    truthy,
)


_RADIX_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _arg(args: list, i: int) -> object:
    return args[i] if i < len(args) else UNDEFINED


def _relative(value: object, length: int, default: int) -> int:
    """A `slice`-style position: negative counts from the end, clamped to [0, length]."""
    if value is UNDEFINED:
        return default
    n = to_integer(value)
    return int(max(length + n, 0)) if n < 0 else int(min(n, length))


def _clamp(value: object, length: int) -> int:
    return int(min(max(to_integer(value), 0), length))


# -- methods shared by strings and arrays -----------------------------------------------------------


def _at(sequence, args: list) -> object:
    i = to_integer(_arg(args, 0))
    if i < 0:
        i += len(sequence)
    return sequence[int(i)] if 0 <= i < len(sequence) else UNDEFINED


def _slice(sequence, args: list):
    start = _relative(_arg(args, 0), len(sequence), 0)
    end = _relative(_arg(args, 1), len(sequence), len(sequence))
    return sequence[start:end]


# -- string methods ---------------------------------------------------------------------------------


def _substitution(text: str, matched: str, position: int, replacement: str) -> str:
    """The `$$`, `$&`, `$` + backtick and `$'` patterns of a replacement (there are no groups)."""
    if "$" not in replacement:
        return replacement
    out = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        nxt = replacement[i + 1 : i + 2]
        if c == "$" and nxt in ("$", "&", "`", "'"):
            out.append({"$": "$", "&": matched, "`": text[:position], "'": text[position + len(matched) :]}[nxt])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _s_split(s: str, args: list) -> list:
    separator, limit = _arg(args, 0), _arg(args, 1)
    count = 2**32 - 1 if limit is UNDEFINED else to_uint32(limit)
    if count == 0:
        return []
    if separator is UNDEFINED:
        return [s]
    sep = to_text(separator)
    if sep == "":
        return list(s[:count])
    return s.split(sep, count)[:count]


def _s_replace(s: str, args: list) -> str:
    pattern, replacement = to_text(_arg(args, 0)), to_text(_arg(args, 1))
    at = s.find(pattern)
    if at < 0:
        return s
    return checked_text(s[:at] + _substitution(s, pattern, at, replacement) + s[at + len(pattern) :])


def _s_replace_all(s: str, args: list) -> str:
    pattern, replacement = to_text(_arg(args, 0)), to_text(_arg(args, 1))
    # An empty pattern matches between every character, as in JavaScript.
    step = max(len(pattern), 1)
    out: list[str] = []
    size = 0
    done = 0
    at = s.find(pattern)
    while at != -1:
        piece = s[done:at] + _substitution(s, pattern, at, replacement)
        size += len(piece)
        if size > MAX_STRING_LENGTH:
            too_long()
        out.append(piece)
        done = at + len(pattern)
        at = s.find(pattern, at + step) if at + step <= len(s) else -1
    out.append(s[done:])
    return checked_text("".join(out))


def _s_last_index_of(s: str, args: list) -> int:
    search = to_text(_arg(args, 0))
    position = to_number(_arg(args, 1))
    start = len(s) if position != position else _clamp(position, len(s))
    return s.rfind(search, 0, start + len(search))


def _pad(s: str, args: list, at_start: bool) -> str:
    target = to_integer(_arg(args, 0))
    if target <= len(s):
        return s
    fill = " " if _arg(args, 1) is UNDEFINED else to_text(args[1])
    if fill == "":
        return s
    if target > MAX_STRING_LENGTH:
        too_long()
    need = int(target) - len(s)
    padding = (fill * (need // len(fill) + 1))[:need]
    return padding + s if at_start else s + padding


def _s_repeat(s: str, args: list) -> str:
    count = to_integer(_arg(args, 0))
    if count < 0 or math.isinf(count):
        raise Fault(f"repeat count must be a non-negative finite number, got {to_text(_arg(args, 0))}")
    if len(s) * count > MAX_STRING_LENGTH:
        too_long()
    return s * int(count)


def _s_char_at(s: str, args: list) -> str:
    i = to_integer(_arg(args, 0))
    return s[int(i)] if 0 <= i < len(s) else ""


def _s_substring(s: str, args: list) -> str:
    start = _clamp(_arg(args, 0), len(s))
    end = len(s) if _arg(args, 1) is UNDEFINED else _clamp(args[1], len(s))
    return s[min(start, end) : max(start, end)]


def _trim(where: str) -> Callable[[str, list], str]:
    def trim(s: str, args: list) -> str:
        if where == "start":
            return s.lstrip(JS_WHITESPACE)
        if where == "end":
            return s.rstrip(JS_WHITESPACE)
        return s.strip(JS_WHITESPACE)

    return trim


def _s_ends_with(s: str, args: list) -> bool:
    end = len(s) if _arg(args, 1) is UNDEFINED else _clamp(args[1], len(s))
    return s.endswith(to_text(_arg(args, 0)), 0, end)


STRING_METHODS: dict[str, Callable[[str, list], object]] = {
    "toLowerCase": lambda s, a: s.lower(),
    "toUpperCase": lambda s, a: s.upper(),
    "trim": _trim("both"),
    "trimStart": _trim("start"),
    "trimEnd": _trim("end"),
    "split": _s_split,
    "includes": lambda s, a: s.find(to_text(_arg(a, 0)), _clamp(_arg(a, 1), len(s))) != -1,
    "startsWith": lambda s, a: s.startswith(to_text(_arg(a, 0)), _clamp(_arg(a, 1), len(s))),
    "endsWith": _s_ends_with,
    "replace": _s_replace,
    "replaceAll": _s_replace_all,
    "slice": _slice,
    "substring": _s_substring,
    "indexOf": lambda s, a: s.find(to_text(_arg(a, 0)), _clamp(_arg(a, 1), len(s))),
    "lastIndexOf": _s_last_index_of,
    "padStart": lambda s, a: _pad(s, a, True),
    "padEnd": lambda s, a: _pad(s, a, False),
    "repeat": _s_repeat,
    "charAt": _s_char_at,
    "at": _at,
    "concat": lambda s, a: checked_text(s + "".join(to_text(v) for v in a)),
    "toString": lambda s, a: s,
}


# -- array methods ----------------------------------------------------------------------------------


def _a_join(items: list, args: list) -> str:
    sep = "," if _arg(args, 0) is UNDEFINED else to_text(args[0])
    return checked_text(sep.join("" if v is None or v is UNDEFINED else to_text(v) for v in items))


def _from_index(value: object, length: int) -> int:
    n = to_integer(value)
    return int(min(n, length)) if n >= 0 else int(max(length + n, 0))


def _a_includes(items: list, args: list) -> bool:
    wanted = _arg(args, 0)
    return any(same_value_zero(v, wanted) for v in items[_from_index(_arg(args, 1), len(items)) :])


def _a_index_of(items: list, args: list) -> int:
    wanted = _arg(args, 0)
    for i in range(_from_index(_arg(args, 1), len(items)), len(items)):
        if strict_equal(items[i], wanted):
            return i
    return -1


def _a_last_index_of(items: list, args: list) -> int:
    wanted = _arg(args, 0)
    n = len(items) - 1 if len(args) < 2 else to_integer(args[1])
    start = min(n, len(items) - 1) if n >= 0 else len(items) + n
    if start < 0:
        return -1
    for i in range(int(start), -1, -1):
        if strict_equal(items[i], wanted):
            return i
    return -1


def _a_concat(items: list, args: list) -> list:
    out = list(items)
    for value in args:
        if is_array(value):
            out.extend(value)  # type: ignore[arg-type]
        else:
            out.append(value)
    return out


def _flatten(items, depth: int | float) -> list:
    out: list = []
    for value in items:
        if is_array(value) and depth >= 1:
            out.extend(_flatten(value, depth - 1))
        else:
            out.append(value)
    return out


def _a_flat(items: list, args: list) -> list:
    depth = 1 if _arg(args, 0) is UNDEFINED else max(to_integer(args[0]), 0)
    return _flatten(items, depth)


ARRAY_METHODS: dict[str, Callable[[list, list], object]] = {
    "join": _a_join,
    "includes": _a_includes,
    "indexOf": _a_index_of,
    "lastIndexOf": _a_last_index_of,
    "slice": _slice,
    "concat": _a_concat,
    "at": _at,
    "flat": _a_flat,
    "toString": lambda items, a: _a_join(items, []),
}


# -- number methods ---------------------------------------------------------------------------------


def _n_to_fixed(x: int | float, args: list) -> str:
    digits = to_integer(_arg(args, 0))
    if not 0 <= digits <= 100:
        raise Fault(f"toFixed() digits must be between 0 and 100, got {to_text(_arg(args, 0))}")
    if x != x or abs(x) >= 1e21:
        return number_text(x)
    if x == 0:
        x = 0  # -0 prints without its sign, unlike -0.001
    from decimal import ROUND_HALF_UP, Decimal, localcontext  # only toFixed() needs decimal

    # JavaScript rounds the exact binary value half away from zero; Python's format
    # rounds half to even, so `(2.5).toFixed(0)` would differ.
    with localcontext() as ctx:
        ctx.prec = 500
        rounded = Decimal(x).quantize(Decimal(1).scaleb(-int(digits)), rounding=ROUND_HALF_UP)
    return f"{rounded:f}"


def _n_to_string(x: int | float, args: list) -> str:
    radix = 10 if _arg(args, 0) is UNDEFINED else to_integer(args[0])
    if not 2 <= radix <= 36:
        raise Fault(f"toString() radix must be between 2 and 36, got {to_text(_arg(args, 0))}")
    if radix == 10 or not math.isfinite(x):
        return number_text(x)
    if x != int(x):
        raise Fault("toString() with a radix other than 10 supports only integers")
    n = abs(int(x))
    out = ""
    while True:
        n, digit = divmod(n, int(radix))
        out = _RADIX_DIGITS[digit] + out
        if n == 0:
            break
    return ("-" if x < 0 else "") + out


NUMBER_METHODS: dict[str, Callable[[int | float, list], object]] = {
    "toFixed": _n_to_fixed,
    "toString": _n_to_string,
}


# -- namespaces: Math, JSON, Object, Array ----------------------------------------------------------


def _math(fn: Callable[[float], float]) -> Callable[[list], object]:
    def apply(args: list) -> object:
        x = to_number(_arg(args, 0))
        if x != x or math.isinf(x):
            return x  # floor/ceil/round of NaN or Infinity is itself (Python would raise)
        return canonical_number(fn(x))

    return apply


def _round(x: float) -> float:
    """Math.round: halves go up (towards +Infinity), so -2.5 rounds to -2."""
    floor = math.floor(x)
    return floor + 1 if x - floor >= 0.5 else floor


def _extreme(pick: Callable, empty: float) -> Callable[[list], object]:
    def apply(args: list) -> object:
        numbers = [to_number(a) for a in args]
        if any(n != n for n in numbers):
            return math.nan
        return canonical_number(pick(numbers)) if numbers else empty

    return apply


def _json_stringify(args: list) -> object:
    value, replacer, space = _arg(args, 0), _arg(args, 1), _arg(args, 2)
    if replacer is not UNDEFINED and replacer is not None:
        raise Fault("JSON.stringify() does not support a replacer; pass null")
    if is_number(space):
        indent = " " * int(min(max(to_integer(space), 0), 10))
    elif isinstance(space, str):
        indent = space[:10]
    else:
        indent = ""
    try:
        text = stringify(value, indent, "")
    except RecursionError:
        raise Fault("JSON.stringify(): the value is nested too deeply") from None
    return text if text is UNDEFINED else checked_text(text)  # type: ignore[arg-type]


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _json_number(text: str) -> int | float:
    # Integers longer than 15 digits may not be exact as doubles: read them as JavaScript would.
    return canonical_number(float(text)) if len(text) > 15 else int(text)


def _json_parse(args: list) -> object:
    text = to_text(_arg(args, 0))
    try:
        return json.loads(
            text,
            parse_float=lambda s: canonical_number(float(s)),
            parse_int=_json_number,
            parse_constant=_refuse_constant,
        )
    except json.JSONDecodeError as exc:
        raise Fault(f"JSON.parse(): {exc.msg} at position {exc.pos}") from None
    except ValueError as exc:
        raise Fault(f"JSON.parse(): {exc}") from None
    except RecursionError:
        raise Fault("JSON.parse(): the text is nested too deeply") from None


def _object_view(value: object, what: str) -> list:
    if value is None or value is UNDEFINED:
        raise Fault(f"Object.{what}() cannot convert {to_text(value)} to an object")
    if isinstance(value, dict):
        pairs = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, str) or is_array(value):
        pairs = [(str(i), v) for i, v in enumerate(value)]  # type: ignore[arg-type]
    else:
        pairs = []  # numbers and booleans have no own enumerable properties
    if what == "keys":
        return [k for k, _ in pairs]
    if what == "values":
        return [v for _, v in pairs]
    return [[k, v] for k, v in pairs]


NAMESPACES: dict[str, dict[str, Callable[[list], object]]] = {
    "Math": {
        "min": _extreme(min, math.inf),
        "max": _extreme(max, -math.inf),
        "round": _math(_round),
        "floor": _math(math.floor),
        "ceil": _math(math.ceil),
        "abs": _math(abs),
    },
    "JSON": {"stringify": _json_stringify, "parse": _json_parse},
    "Object": {
        "keys": lambda a: _object_view(_arg(a, 0), "keys"),
        "values": lambda a: _object_view(_arg(a, 0), "values"),
        "entries": lambda a: _object_view(_arg(a, 0), "entries"),
    },
    "Array": {"isArray": lambda a: is_array(_arg(a, 0))},
}


# -- global functions -------------------------------------------------------------------------------


def _parse_int(args: list) -> object:
    text = to_text(_arg(args, 0)).lstrip(JS_WHITESPACE)
    sign = -1 if text.startswith("-") else 1
    if text[:1] in ("+", "-"):
        text = text[1:]
    radix = 0 if _arg(args, 1) is UNDEFINED else to_integer(args[1])
    strip_prefix = radix in (0, 16)
    if radix == 0:
        radix = 10
    if not 2 <= radix <= 36:
        return math.nan
    if strip_prefix and text[:2].lower() == "0x":
        text, radix = text[2:], 16
    valid = _RADIX_DIGITS[: int(radix)]
    end = 0
    while end < len(text) and text[end].lower() in valid:
        end += 1
    digits = text[:end].lstrip("0")
    if end == 0:
        return math.nan
    if len(digits) > 1100:  # more than any double holds, in any radix; also spares int()'s limit
        return sign * math.inf
    return canonical_number(sign * int(digits or "0", int(radix)))


def _parse_float(args: list) -> object:
    match = decimal_number.match(to_text(_arg(args, 0)).lstrip(JS_WHITESPACE))
    if match is None:
        return math.nan
    return canonical_number(float(match.group().replace("Infinity", "inf")))


def _get(env: Env, args: list) -> object:
    if len(args) != 1:
        raise Fault(f"get() takes one argument, got {len(args)}")
    path = args[0]
    if not isinstance(path, str):
        raise Fault(f"get() needs a path string, got {a_kind(path)}")
    if "://" in path:  # get('xe://spec') reads the file, as the checker types it (text or missing)
        protocol, _, rest = path.partition("://")
        return env.read(protocol, rest)
    return env.get(path)


def _logs(env: Env, args: list) -> object:
    """`logs()`: the run's log entries so far; `logs('warning')`: those of that level only."""
    level = _arg(args, 0)
    if level is UNDEFINED or level is None:
        return env.logs()
    if not isinstance(level, str):
        raise Fault(f"logs() takes a level name (error, warning, info, verbose, debug, trace), got {a_kind(level)}")
    return [entry for entry in env.logs() if entry.get("level") == level]


FUNCTIONS: dict[str, Callable[[Env, list], object]] = {
    "String": lambda env, a: to_text(a[0]) if a else "",
    "Number": lambda env, a: canonical_number(to_number(a[0])) if a else 0,
    "Boolean": lambda env, a: truthy(_arg(a, 0)),
    "parseInt": lambda env, a: _parse_int(a),
    "parseFloat": lambda env, a: _parse_float(a),
    "get": _get,
    "logs": _logs,
    # The text itself; as a whole placeholder in a script, the renderer skips escaping it.
    "raw": lambda env, a: to_text(a[0]) if a else "",
}


# -- lookups: the allowlist decides, the tables implement -------------------------------------------


def global_function(name: str) -> Callable[[Env, list], object] | None:
    """`name(...)`: its implementation, None when the allowlist has no such function."""
    return FUNCTIONS.get(name) if name in B.FUNCTIONS else None


def namespace_function(namespace: str, name: str) -> Callable[[list], object] | None:
    """`Math.max(...)`: its implementation, None when the allowlist has no such member."""
    return NAMESPACES.get(namespace, {}).get(name) if name in B.NAMESPACES.get(namespace, {}) else None


def method(receiver: object, name: str) -> Callable[[object, list], object] | None:
    """`receiver.name(...)`: its implementation, None when the allowlist has no such method
    for the receiver's kind (booleans, objects, null and undefined have none)."""
    if isinstance(receiver, str):
        allowed, impls = B.STRING_METHODS, STRING_METHODS
    elif is_array(receiver):
        allowed, impls = B.ARRAY_METHODS, ARRAY_METHODS
    elif is_number(receiver):
        allowed, impls = B.NUMBER_METHODS, NUMBER_METHODS
    else:
        return None
    impl = impls.get(name) if name in allowed else None
    if impl is not None and isinstance(receiver, tuple):
        return lambda r, args: impl(list(r), args)  # type: ignore[arg-type]
    return impl  # type: ignore[return-value]
