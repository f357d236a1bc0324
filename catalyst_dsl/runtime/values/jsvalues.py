"""JavaScript values in Python: `undefined`, kinds, conversions and the operators on them.

Values are plain Python data standing for JavaScript values: `None` is `null`,
`UNDEFINED` is `undefined`, `bool`, `int`/`float` (numbers), `str`, `list` (arrays) and
`dict` (objects). Integral results are kept as `int` so `4/2` renders as `2`.

The evaluator (`evaluate.py`) and the built-ins (`jsbuiltins.py`) both convert through
here, so `String(x)`, `${{ x }}` in text and `'' + x` can never disagree.
"""

from __future__ import annotations

import json
import math
import re
from typing import NoReturn

from catalyst_dsl._internal.lazy_pattern import LazyPattern

#: Strings an expression may build (`repeat`, `padStart`, `+`, ...): a playbook that needs
#: more is a mistake, and refusing early keeps a typo from exhausting memory.
MAX_STRING_LENGTH = 10 * 1024 * 1024

#: Beyond 2**53 JavaScript numbers are no longer exact integers; keep such results as floats.
_MAX_SAFE_INTEGER = 2**53

#: What JavaScript's `trim` and `Number(...)` treat as white space (Python's differs).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

#: A decimal number as JavaScript reads one: `Number(text)` wants all of the text to
#: match, `parseFloat(text)` takes the longest prefix that does.
decimal_number = LazyPattern(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)", re.ASCII)

_RADIX_PREFIXES = {"0x": 16, "0o": 8, "0b": 2}


class _Undefined:
    """JavaScript's `undefined`: a missing member, an absent `get`, a missing argument."""

    _instance: "_Undefined | None" = None

    def __new__(cls) -> "_Undefined":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):  # a copied or unpickled sentinel stays the sentinel
        return (_Undefined, ())


UNDEFINED = _Undefined()


class _Unknown:
    """A value a what-if cannot know (an AI answer, a program's output) and everything
    computed from it. Operators and calls given it give it back; it is never truthy or
    falsy, so whoever branches on it must decide what "both ways" means."""

    _instance: "_Unknown | None" = None

    def __new__(cls) -> "_Unknown":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<unknown>"

    def __reduce__(self):
        return (_Unknown, ())


UNKNOWN = _Unknown()


def contains_unknown(value: object) -> bool:
    if value is UNKNOWN:
        return True
    # Loops, not any() over a generator: a plan asks this of every config it renders.
    if isinstance(value, list):
        for item in value:
            if contains_unknown(item):
                return True
    elif isinstance(value, dict):
        for item in value.values():
            if contains_unknown(item):
                return True
    return False


class Fault(Exception):
    """A built-in or an operator refused its arguments; the evaluator turns it into an
    EvaluationError located at the call or operator."""


# -- kinds ------------------------------------------------------------------------------------------


def is_number(value: object) -> bool:
    # bool is an int subclass in Python, but true is not a number in JavaScript.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_array(value: object) -> bool:
    return isinstance(value, (list, tuple))


def kind(value: object) -> str:
    """JavaScript's idea of the value's type, finer than `typeof` (arrays, null)."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    if is_array(value):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "other"


def a_kind(value: object) -> str:
    """The value's kind with an article, for messages: 'an array', 'undefined'."""
    name = kind(value)
    if name in ("undefined", "null"):
        return name
    return ("an " if name[0] in "aeiou" else "a ") + name


# -- conversions ------------------------------------------------------------------------------------


def canonical_number(value: int | float) -> int | float:
    """A numeric result as we store it: integral and safe -> int, anything else -> float."""
    if isinstance(value, int):
        if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
            return value
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if value.is_integer() and abs(value) <= _MAX_SAFE_INTEGER:
        return int(value)
    return value


def truthy(value: object) -> bool:
    """JavaScript truthiness: false, 0, NaN, '', null and undefined are false."""
    if value is None or value is UNDEFINED:
        return False
    if isinstance(value, bool):
        return value
    if is_number(value):
        return value == value and value != 0  # NaN is the only value unequal to itself
    if isinstance(value, str):
        return value != ""
    return True  # arrays and objects, even empty ones


def _string_to_number(text: str) -> int | float:
    text = text.strip(JS_WHITESPACE)
    if not text:
        return 0
    radix = _RADIX_PREFIXES.get(text[:2].lower())
    if radix is not None:
        try:
            return canonical_number(int(text[2:], radix))
        except ValueError:  # also rejects '_', which Python would accept in a literal
            return math.nan
    if "_" in text or not decimal_number.fullmatch(text):
        return math.nan
    return canonical_number(float(text.replace("Infinity", "inf")))


def to_number(value: object) -> int | float:
    """JavaScript's Number(value)."""
    if isinstance(value, bool):
        return 1 if value else 0
    if is_number(value):
        return value  # type: ignore[return-value]
    if value is None:
        return 0
    if value is UNDEFINED:
        return math.nan
    if isinstance(value, str):
        return _string_to_number(value)
    if is_array(value):
        return _string_to_number(to_text(value))  # [] -> 0, [5] -> 5, [1, 2] -> NaN
    return math.nan


def to_integer(value: object) -> int | float:
    """ToIntegerOrInfinity: the integer an index or count argument stands for."""
    n = to_number(value)
    if n != n:
        return 0
    if math.isinf(n):
        return n
    return int(n)


def to_uint32(value: object) -> int:
    n = to_number(value)
    if n != n or math.isinf(n):
        return 0
    return int(n) % 2**32


def number_text(value: int | float) -> str:
    """Number to text as JavaScript writes it: 2 not 2.0, 1e+21, 1e-7, NaN, Infinity."""
    if isinstance(value, int):
        if abs(value) < 10**21:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "Infinity" if value > 0 else "-Infinity"
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"  # also -0
    sign = "-" if value < 0 else ""
    from decimal import Decimal  # imported on the first fraction: most runs print none

    # repr gives the shortest digits that read back as the same float, as JavaScript does;
    # only the layout (where the point goes, when to switch to an exponent) differs.
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent += len(digit_tuple) - len(digits)  # type: ignore[operator]
    k = len(digits)
    n = exponent + k  # the decimal point sits after the n-th digit
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def to_text(value: object) -> str:
    """JavaScript's String(value), except that objects become JSON instead of '[object Object]'."""
    if isinstance(value, str):
        return value
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return number_text(value)  # type: ignore[arg-type]
    if is_array(value):
        return ",".join("" if item is None or item is UNDEFINED else to_text(item) for item in value)  # type: ignore[union-attr]
    if isinstance(value, dict):
        return stringify(value, "", "")  # type: ignore[return-value]
    return str(value)


def as_written(value: object) -> str:
    """A value as a playbook writes it, for messages: JSON (`null`, `true`, `"text"`), never
    Python's spelling (`None`, `True`, `'text'`)."""
    text = stringify(value, "", "")
    return "undefined" if text is UNDEFINED else text  # type: ignore[return-value]


def stringify(value: object, indent: str, prefix: str) -> str | _Undefined:
    """JSON.stringify: UNDEFINED for values JSON cannot hold (undefined itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return number_text(value) if math.isfinite(value) else "null"  # type: ignore[arg-type]
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is UNDEFINED:
        return UNDEFINED
    inner = prefix + indent
    if is_array(value):
        items = [stringify(item, indent, inner) for item in value]  # type: ignore[union-attr]
        texts = ["null" if item is UNDEFINED else item for item in items]
        return _layout("[", texts, "]", indent, prefix)  # type: ignore[arg-type]
    if isinstance(value, dict):
        colon = ": " if indent else ":"
        texts = []
        for key, item in value.items():
            text = stringify(item, indent, inner)
            if text is not UNDEFINED:  # JSON.stringify leaves out undefined members
                texts.append(json.dumps(str(key), ensure_ascii=False) + colon + text)  # type: ignore[operator]
        return _layout("{", texts, "}", indent, prefix)
    return json.dumps(str(value), ensure_ascii=False)


def _layout(open_: str, texts: list[str], close: str, indent: str, prefix: str) -> str:
    if not texts:
        return open_ + close
    if not indent:
        return open_ + ",".join(texts) + close
    inner = prefix + indent
    return open_ + "\n" + inner + (",\n" + inner).join(texts) + "\n" + prefix + close


def too_long() -> NoReturn:
    raise Fault(f"the resulting string would be longer than {MAX_STRING_LENGTH // (1024 * 1024)} MB")


def checked_text(text: str) -> str:
    """`text`, or a Fault when it is longer than an expression may build."""
    if len(text) > MAX_STRING_LENGTH:
        too_long()
    return text


# -- operators --------------------------------------------------------------------------------------


def strict_equal(a: object, b: object) -> bool:
    """`===`: same kind and same value; arrays and objects only equal themselves."""
    name = kind(a)
    if name != kind(b):
        return False
    if name in ("array", "object"):
        return a is b
    return a == b  # numbers: NaN != NaN falls out of Python's float comparison


def same_value_zero(a: object, b: object) -> bool:
    """`includes` finds NaN, unlike `===` and `indexOf`."""
    if is_number(a) and is_number(b) and a != a and b != b:
        return True
    return strict_equal(a, b)


def loose_equal(a: object, b: object) -> bool:
    """`==`, following JavaScript's IsLooselyEqual for the kinds of values we have."""
    ka, kb = kind(a), kind(b)
    if ka == kb:
        return strict_equal(a, b)
    nullish = ("null", "undefined")
    if ka in nullish or kb in nullish:
        return ka in nullish and kb in nullish
    if ka == "boolean":
        return loose_equal(to_number(a), b)
    if kb == "boolean":
        return loose_equal(a, to_number(b))
    if {ka, kb} == {"number", "string"}:
        return to_number(a) == to_number(b)
    if ka in ("array", "object") and kb in ("number", "string"):
        return loose_equal(to_text(a), b)
    if kb in ("array", "object") and ka in ("number", "string"):
        return loose_equal(a, to_text(b))
    return False


def _utf16(text: str) -> bytes:
    # JavaScript orders strings by UTF-16 code units; big-endian bytes sort the same way.
    return text.encode("utf-16-be", "surrogatepass")


def compare(op: str, a: object, b: object) -> bool:
    """`< <= > >=`: strings by code units when both are text, otherwise as numbers."""
    if kind(a) in ("array", "object"):
        a = to_text(a)
    if kind(b) in ("array", "object"):
        b = to_text(b)
    if isinstance(a, str) and isinstance(b, str):
        x: object = _utf16(a)
        y: object = _utf16(b)
    else:
        x, y = to_number(a), to_number(b)  # a NaN makes every comparison false, as in JS
    if op == "<":
        return x < y  # type: ignore[operator]
    if op == "<=":
        return x <= y  # type: ignore[operator]
    if op == ">":
        return x > y  # type: ignore[operator]
    return x >= y  # type: ignore[operator]


def arithmetic(op: str, a: object, b: object) -> object:
    """`+ - * / %`; a Fault when `+` would build too long a string."""
    if op == "+":
        if any(kind(v) in ("string", "array", "object") for v in (a, b)):
            left, right = to_text(a), to_text(b)
            if len(left) + len(right) > MAX_STRING_LENGTH:
                too_long()
            return left + right
        return canonical_number(to_number(a) + to_number(b))
    x, y = to_number(a), to_number(b)
    if op == "-":
        return canonical_number(x - y)
    if op == "*":
        return canonical_number(x * y)
    if op == "/":
        if y == 0:
            if x == 0 or x != x:
                return math.nan
            return math.copysign(math.inf, x) * math.copysign(1.0, y)
        try:
            return canonical_number(x / y)
        except OverflowError:
            return math.copysign(math.inf, x) * math.copysign(1.0, y)
    # `%`: the sign follows the dividend, as math.fmod does (Python's % follows the divisor).
    if y == 0 or math.isinf(x) or x != x or y != y:
        return math.nan
    if math.isinf(y):
        return x
    return canonical_number(math.fmod(x, y))


def as_json_data(value: object) -> object:
    """A value as plain JSON data, for snapshots and plans: `undefined` is null, an unknown
    value is the text `<unknown>`, tuples are lists, anything else foreign is its text."""
    if value is UNKNOWN:
        return "<unknown>"
    if value is UNDEFINED or value is None:
        return None
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): as_json_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json_data(v) for v in value]
    return str(value)
