"""The runtime evaluator of `{{ reference }}` and `${{ expression }}`: JavaScript-like values.

The front end parses templates (`syntax/templates.py`) and the checker types them; this
module gives them their run-time value. It is the only place expressions are evaluated:
the interpreter, `--what-if` and failed-condition messages all come through here.

Values are plain Python data standing for JavaScript values: `None` is `null`,
`UNDEFINED` is `undefined`, `bool`, `int`/`float` (numbers), `str`, `list` (arrays) and
`dict` (objects). Integral results are kept as `int` so `4/2` renders as `2`.

Nothing outside the allowlist of `expr_builtins.py` can run: calls dispatch through the
implementation tables at the end of this module, keyed by the allowlist's names, and
member access only ever reads dict keys, list items and `.length` (never a Python
attribute).
"""

from __future__ import annotations

import json
import math
import re
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Callable, NoReturn, Protocol

from catalyst_dsl import expr_builtins as B
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.syntax import expr_ast as ast
from catalyst_dsl.syntax.templates import ParsedTemplate, parse_template

#: Strings an expression may build (`repeat`, `padStart`, `+`, ...): a playbook that needs
#: more is a mistake, and refusing early keeps a typo from exhausting memory.
MAX_STRING_LENGTH = 10 * 1024 * 1024

#: Explanations of failed conditions cut values longer than this.
MAX_SHOWN_LENGTH = 200

#: Beyond 2**53 JavaScript numbers are no longer exact integers; keep such results as floats.
_MAX_SAFE_INTEGER = 2**53

#: What JavaScript's `trim` and `Number(...)` treat as white space (Python's differs).
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


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


class Env(Protocol):
    """What an expression can read; the interpreter supplies it."""

    def lookup(self, name: str) -> object:
        """The value of a name; raises KeyError(name) when it is not defined."""

    def get(self, path: str) -> object:
        """`get('a.b.0')`: a dotted path, UNDEFINED when absent."""

    def logs(self) -> list[dict]:
        """`logs()`: the run's log entries."""

    def protocol(self, protocol: str, path: str) -> object:
        """`{{xe://a/b}}` (and `get('xe://a/b')`): what a protocol path holds."""


class EvaluationError(StepError):
    """An expression failed at run time; `start`/`end` are offsets in the template text."""

    def __init__(self, message: str, start: int = 0, end: int = 0) -> None:
        super().__init__("ExpressionError", message, metadata={"start": start, "end": end})
        self.start = start
        self.end = end


class _Fault(Exception):
    """A built-in refused its arguments; the call site turns it into an EvaluationError."""


# -- JavaScript values and conversions ------------------------------------------------------------


def _is_number(value: object) -> bool:
    # bool is an int subclass in Python, but true is not a number in JavaScript.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_array(value: object) -> bool:
    return isinstance(value, (list, tuple))


def _kind(value: object) -> str:
    """JavaScript's idea of the value's type, finer than `typeof` (arrays, null)."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if _is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    if _is_array(value):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "other"


def _a_kind(value: object) -> str:
    """The value's kind with an article, for messages: 'an array', 'undefined'."""
    kind = _kind(value)
    if kind in ("undefined", "null"):
        return kind
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _num(value: int | float) -> int | float:
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
    if _is_number(value):
        return value == value and value != 0  # NaN is the only value unequal to itself
    if isinstance(value, str):
        return value != ""
    return True  # arrays and objects, even empty ones


_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)", re.ASCII)
_RADIX_PREFIXES = {"0x": 16, "0o": 8, "0b": 2}


def _string_to_number(text: str) -> int | float:
    text = text.strip(_JS_WHITESPACE)
    if not text:
        return 0
    radix = _RADIX_PREFIXES.get(text[:2].lower())
    if radix is not None:
        try:
            return _num(int(text[2:], radix))
        except ValueError:  # also rejects '_', which Python would accept in a literal
            return math.nan
    if "_" in text or not _DECIMAL.fullmatch(text):
        return math.nan
    return _num(float(text.replace("Infinity", "inf")))


def to_number(value: object) -> int | float:
    """JavaScript's Number(value)."""
    if isinstance(value, bool):
        return 1 if value else 0
    if _is_number(value):
        return value  # type: ignore[return-value]
    if value is None:
        return 0
    if value is UNDEFINED:
        return math.nan
    if isinstance(value, str):
        return _string_to_number(value)
    if _is_array(value):
        return _string_to_number(to_text(value))  # [] -> 0, [5] -> 5, [1, 2] -> NaN
    return math.nan


def _to_integer(value: object) -> int | float:
    """ToIntegerOrInfinity: the integer an index or count argument stands for."""
    n = to_number(value)
    if n != n:
        return 0
    if math.isinf(n):
        return n
    return int(n)


def _to_uint32(value: object) -> int:
    n = to_number(value)
    if n != n or math.isinf(n):
        return 0
    return int(n) % 2**32


def _number_text(value: int | float) -> str:
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
    if _is_number(value):
        return _number_text(value)  # type: ignore[arg-type]
    if _is_array(value):
        return ",".join("" if item is None or item is UNDEFINED else to_text(item) for item in value)  # type: ignore[union-attr]
    if isinstance(value, dict):
        return _stringify(value, "", "")  # type: ignore[return-value]
    return str(value)


def _stringify(value: object, indent: str, prefix: str) -> str | _Undefined:
    """JSON.stringify: UNDEFINED for values JSON cannot hold (undefined itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_number(value):
        return _number_text(value) if math.isfinite(value) else "null"  # type: ignore[arg-type]
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is UNDEFINED:
        return UNDEFINED
    inner = prefix + indent
    if _is_array(value):
        items = [_stringify(item, indent, inner) for item in value]  # type: ignore[union-attr]
        texts = ["null" if item is UNDEFINED else item for item in items]
        return _layout("[", texts, "]", indent, prefix)  # type: ignore[arg-type]
    if isinstance(value, dict):
        colon = ": " if indent else ":"
        texts = []
        for key, item in value.items():
            text = _stringify(item, indent, inner)
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


def _strict_equal(a: object, b: object) -> bool:
    """`===`: same kind and same value; arrays and objects only equal themselves."""
    kind = _kind(a)
    if kind != _kind(b):
        return False
    if kind in ("array", "object"):
        return a is b
    return a == b  # numbers: NaN != NaN falls out of Python's float comparison


def _same_value_zero(a: object, b: object) -> bool:
    """`includes` finds NaN, unlike `===` and `indexOf`."""
    if _is_number(a) and _is_number(b) and a != a and b != b:
        return True
    return _strict_equal(a, b)


def _loose_equal(a: object, b: object) -> bool:
    """`==`, following JavaScript's IsLooselyEqual for the kinds of values we have."""
    ka, kb = _kind(a), _kind(b)
    if ka == kb:
        return _strict_equal(a, b)
    nullish = ("null", "undefined")
    if ka in nullish or kb in nullish:
        return ka in nullish and kb in nullish
    if ka == "boolean":
        return _loose_equal(to_number(a), b)
    if kb == "boolean":
        return _loose_equal(a, to_number(b))
    if {ka, kb} == {"number", "string"}:
        return to_number(a) == to_number(b)
    if ka in ("array", "object") and kb in ("number", "string"):
        return _loose_equal(to_text(a), b)
    if kb in ("array", "object") and ka in ("number", "string"):
        return _loose_equal(a, to_text(b))
    return False


def _utf16(text: str) -> bytes:
    # JavaScript orders strings by UTF-16 code units; big-endian bytes sort the same way.
    return text.encode("utf-16-be", "surrogatepass")


def _compare(op: str, a: object, b: object) -> bool:
    """`< <= > >=`: strings by code units when both are text, otherwise as numbers."""
    if _kind(a) in ("array", "object"):
        a = to_text(a)
    if _kind(b) in ("array", "object"):
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


def _too_long() -> NoReturn:
    raise _Fault(f"the resulting string would be longer than {MAX_STRING_LENGTH // (1024 * 1024)} MB")


def _checked_text(text: str) -> str:
    if len(text) > MAX_STRING_LENGTH:
        _too_long()
    return text


def _arithmetic(op: str, a: object, b: object) -> object:
    if op == "+":
        if any(_kind(v) in ("string", "array", "object") for v in (a, b)):
            left, right = to_text(a), to_text(b)
            if len(left) + len(right) > MAX_STRING_LENGTH:
                _too_long()
            return left + right
        return _num(to_number(a) + to_number(b))
    x, y = to_number(a), to_number(b)
    if op == "-":
        return _num(x - y)
    if op == "*":
        return _num(x * y)
    if op == "/":
        if y == 0:
            if x == 0 or x != x:
                return math.nan
            return math.copysign(math.inf, x) * math.copysign(1.0, y)
        try:
            return _num(x / y)
        except OverflowError:
            return math.copysign(math.inf, x) * math.copysign(1.0, y)
    # `%`: the sign follows the dividend, as math.fmod does (Python's % follows the divisor).
    if y == 0 or math.isinf(x) or x != x or y != y:
        return math.nan
    if math.isinf(y):
        return x
    return _num(math.fmod(x, y))


# -- the evaluator ---------------------------------------------------------------------------------


class _Evaluator:
    """Evaluates one expression tree; `base` turns node offsets into template offsets."""

    def __init__(self, env: Env, base: int = 0) -> None:
        self.env = env
        self.base = base

    def fail(self, message: str, node) -> NoReturn:
        raise EvaluationError(message, self.base + node.start, self.base + node.end)

    def eval(self, node) -> object:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            self.fail(f"cannot evaluate a {type(node).__name__} here", node)
        return handler(self, node)

    # -- leaves and literals

    def literal(self, node: ast.Literal) -> object:
        if node.kind == "undefined":
            return UNDEFINED
        if node.kind == "number":
            return _num(node.value)  # type: ignore[arg-type]
        return node.value

    def array(self, node: ast.ArrayExpr) -> object:
        return [self.eval(item) for item in node.items]

    def object(self, node: ast.ObjectExpr) -> object:
        return {entry.key: self.eval(entry.value) for entry in node.entries}

    def name(self, node: ast.Name) -> object:
        try:
            return self.env.lookup(node.name)
        except KeyError:
            if node.name in B.NAMESPACES or node.name in B.FUNCTIONS:
                self.fail(f"'{node.name}' can only be called", node)
            self.fail(f"'{node.name}' is not defined", node)

    def defined(self, name: str) -> bool:
        try:
            self.env.lookup(name)
        except KeyError:
            return False
        return True

    # -- member access

    def member(self, node: ast.Member) -> object:
        return self.property(self.eval(node.target), node.name, node)

    def index(self, node: ast.Index) -> object:
        target = self.eval(node.target)
        key = self.eval(node.index)
        return self.property(target, key if isinstance(key, str) else to_text(key), node)

    def property(self, value: object, key: str, node) -> object:
        try:
            return _property(value, key)
        except _Fault as fault:
            self.fail(str(fault), node)

    def reference(self, ref: ast.PathRef | ast.ProtocolRef) -> object:
        if isinstance(ref, ast.ProtocolRef):
            return self.env.protocol(ref.protocol, ref.path)
        try:
            value = self.env.lookup(ref.root)
        except KeyError:
            self.fail(f"'{ref.root}' is not defined", ref)
        path = ref.root
        for segment in ref.segments:
            try:
                value = _property(value, segment)
            except _Fault:
                self.fail(f"cannot read '{segment}' of {to_text(value)}: '{path}' is {to_text(value)}", ref)
            path = f"{path}.{segment}"
        return value

    # -- operators

    def unary(self, node: ast.Unary) -> object:
        value = self.eval(node.operand)
        if node.op == "!":
            return not truthy(value)
        if node.op == "-":
            return _num(-to_number(value))
        if node.op == "+":
            return to_number(value)
        self.fail(f"the operator '{node.op}' is not part of the expression language", node)

    def binary(self, node: ast.Binary) -> object:
        op = node.op
        left = self.eval(node.left)
        # The logical operators return an operand, not a boolean, and skip the right side
        # when the left decides: `get('x') || 'default'` is the common idiom.
        if op == "&&":
            return self.eval(node.right) if truthy(left) else left
        if op == "||":
            return left if truthy(left) else self.eval(node.right)
        if op == "??":
            return self.eval(node.right) if left is None or left is UNDEFINED else left
        right = self.eval(node.right)
        if op == "===":
            return _strict_equal(left, right)
        if op == "!==":
            return not _strict_equal(left, right)
        if op == "==":
            return _loose_equal(left, right)
        if op == "!=":
            return not _loose_equal(left, right)
        if op in ("<", "<=", ">", ">="):
            return _compare(op, left, right)
        if op in ("+", "-", "*", "/", "%"):
            try:
                return _arithmetic(op, left, right)
            except _Fault as fault:
                self.fail(str(fault), node)
        self.fail(f"the operator '{op}' is not part of the expression language", node)

    def conditional(self, node: ast.Conditional) -> object:
        return self.eval(node.then) if truthy(self.eval(node.test)) else self.eval(node.otherwise)

    # -- calls: only the allowlist, looked up by name, never by attribute

    def call(self, node: ast.Call) -> object:
        callee = node.callee
        if isinstance(callee, ast.Name):
            impl = _FUNCTIONS.get(callee.name) if callee.name in B.FUNCTIONS else None
            if impl is None:
                self.fail(f"'{callee.name}' is not a function the expression language allows", callee)
            args = [self.eval(a) for a in node.args]
            return self.run(node, lambda: impl(self.env, args))
        if isinstance(callee, ast.Member):
            target = callee.target
            # `Math.max(...)`: a namespace, unless the playbook defines a name that hides it.
            if isinstance(target, ast.Name) and target.name in B.NAMESPACES and not self.defined(target.name):
                function = _NAMESPACES[target.name].get(callee.name) if callee.name in B.NAMESPACES[target.name] else None
                if function is None:
                    self.fail(f"'{target.name}.{callee.name}' is not allowed in expressions", callee)
                args = [self.eval(a) for a in node.args]
                return self.run(node, lambda: function(args))
            receiver = self.eval(target)
            method = self.method(receiver, callee)
            args = [self.eval(a) for a in node.args]
            return self.run(node, lambda: method(receiver, args))
        self.fail("only named functions and methods can be called in expressions", callee)

    def method(self, receiver: object, callee: ast.Member) -> Callable[[object, list], object]:
        name = callee.name
        if receiver is None or receiver is UNDEFINED:
            self.fail(f"cannot read '{name}' of {to_text(receiver)}", callee)
        if isinstance(receiver, str):
            allowed, impls = B.STRING_METHODS, _STRING_METHODS
        elif _is_array(receiver):
            allowed, impls = B.ARRAY_METHODS, _ARRAY_METHODS
        elif _is_number(receiver):
            allowed, impls = B.NUMBER_METHODS, _NUMBER_METHODS
        else:
            allowed, impls = {}, {}
        impl = impls.get(name) if name in allowed else None
        if impl is None:
            self.fail(f"the method '{name}' is not allowed on {_a_kind(receiver)}", callee)
        if isinstance(receiver, tuple):
            return lambda r, args: impl(list(r), args)  # type: ignore[arg-type]
        return impl

    def run(self, node: ast.Call, thunk: Callable[[], object]) -> object:
        try:
            return thunk()
        except _Fault as fault:
            self.fail(str(fault), node)


_HANDLERS: dict[type, Callable[[_Evaluator, object], object]] = {
    ast.Literal: _Evaluator.literal,
    ast.ArrayExpr: _Evaluator.array,
    ast.ObjectExpr: _Evaluator.object,
    ast.Name: _Evaluator.name,
    ast.Member: _Evaluator.member,
    ast.Index: _Evaluator.index,
    ast.Call: _Evaluator.call,
    ast.Unary: _Evaluator.unary,
    ast.Binary: _Evaluator.binary,
    ast.Conditional: _Evaluator.conditional,
    ast.PathRef: _Evaluator.reference,
    ast.ProtocolRef: _Evaluator.reference,
}


def _is_index(key: str) -> bool:
    """'0', '12': the canonical spelling of an array index ('01' and '+1' are not)."""
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0")


def _property(value: object, key: str) -> object:
    """`value.key` / `value[key]`: own dict keys, list items and `.length`, nothing else."""
    if value is None or value is UNDEFINED:
        raise _Fault(f"cannot read '{key}' of {to_text(value)}")
    if isinstance(value, dict):
        return value.get(key, UNDEFINED)
    if isinstance(value, str) or _is_array(value):
        if key == "length":
            return len(value)  # type: ignore[arg-type]
        if _is_index(key):
            i = int(key)
            return value[i] if i < len(value) else UNDEFINED  # type: ignore[index,arg-type]
    return UNDEFINED


# -- built-ins: one implementation per allowlist entry -------------------------------------------
#
# Methods take (receiver, args); functions take (env, args); namespace functions take (args).
# A missing argument is UNDEFINED, as in JavaScript; extra arguments are ignored.


def _arg(args: list, i: int) -> object:
    return args[i] if i < len(args) else UNDEFINED


def _relative(value: object, length: int, default: int) -> int:
    """A `slice`-style position: negative counts from the end, clamped to [0, length]."""
    if value is UNDEFINED:
        return default
    n = _to_integer(value)
    return int(max(length + n, 0)) if n < 0 else int(min(n, length))


def _clamp(value: object, length: int) -> int:
    return int(min(max(_to_integer(value), 0), length))


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
    count = 2**32 - 1 if limit is UNDEFINED else _to_uint32(limit)
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
    return _checked_text(s[:at] + _substitution(s, pattern, at, replacement) + s[at + len(pattern) :])


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
            _too_long()
        out.append(piece)
        done = at + len(pattern)
        at = s.find(pattern, at + step) if at + step <= len(s) else -1
    out.append(s[done:])
    return _checked_text("".join(out))


def _s_last_index_of(s: str, args: list) -> int:
    search = to_text(_arg(args, 0))
    position = to_number(_arg(args, 1))
    start = len(s) if position != position else _clamp(position, len(s))
    return s.rfind(search, 0, start + len(search))


def _pad(s: str, args: list, at_start: bool) -> str:
    target = _to_integer(_arg(args, 0))
    if target <= len(s):
        return s
    fill = " " if _arg(args, 1) is UNDEFINED else to_text(args[1])
    if fill == "":
        return s
    if target > MAX_STRING_LENGTH:
        _too_long()
    need = int(target) - len(s)
    padding = (fill * (need // len(fill) + 1))[:need]
    return padding + s if at_start else s + padding


def _s_repeat(s: str, args: list) -> str:
    count = _to_integer(_arg(args, 0))
    if count < 0 or math.isinf(count):
        raise _Fault(f"repeat count must be a non-negative finite number, got {to_text(_arg(args, 0))}")
    if len(s) * count > MAX_STRING_LENGTH:
        _too_long()
    return s * int(count)


def _s_char_at(s: str, args: list) -> str:
    i = _to_integer(_arg(args, 0))
    return s[int(i)] if 0 <= i < len(s) else ""


def _at(sequence, args: list) -> object:
    i = _to_integer(_arg(args, 0))
    if i < 0:
        i += len(sequence)
    return sequence[int(i)] if 0 <= i < len(sequence) else UNDEFINED


def _slice(sequence, args: list):
    start = _relative(_arg(args, 0), len(sequence), 0)
    end = _relative(_arg(args, 1), len(sequence), len(sequence))
    return sequence[start:end]


def _s_substring(s: str, args: list) -> str:
    start = _clamp(_arg(args, 0), len(s))
    end = len(s) if _arg(args, 1) is UNDEFINED else _clamp(args[1], len(s))
    return s[min(start, end) : max(start, end)]


def _trim(where: str) -> Callable[[str, list], str]:
    def trim(s: str, args: list) -> str:
        if where == "start":
            return s.lstrip(_JS_WHITESPACE)
        if where == "end":
            return s.rstrip(_JS_WHITESPACE)
        return s.strip(_JS_WHITESPACE)

    return trim


def _s_ends_with(s: str, args: list) -> bool:
    end = len(s) if _arg(args, 1) is UNDEFINED else _clamp(args[1], len(s))
    return s.endswith(to_text(_arg(args, 0)), 0, end)


_STRING_METHODS: dict[str, Callable[[str, list], object]] = {
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
    "concat": lambda s, a: _checked_text(s + "".join(to_text(v) for v in a)),
    "toString": lambda s, a: s,
}


def _a_join(items: list, args: list) -> str:
    sep = "," if _arg(args, 0) is UNDEFINED else to_text(args[0])
    return _checked_text(sep.join("" if v is None or v is UNDEFINED else to_text(v) for v in items))


def _from_index(value: object, length: int) -> int:
    n = _to_integer(value)
    return int(min(n, length)) if n >= 0 else int(max(length + n, 0))


def _a_includes(items: list, args: list) -> bool:
    wanted = _arg(args, 0)
    return any(_same_value_zero(v, wanted) for v in items[_from_index(_arg(args, 1), len(items)) :])


def _a_index_of(items: list, args: list) -> int:
    wanted = _arg(args, 0)
    for i in range(_from_index(_arg(args, 1), len(items)), len(items)):
        if _strict_equal(items[i], wanted):
            return i
    return -1


def _a_last_index_of(items: list, args: list) -> int:
    wanted = _arg(args, 0)
    n = len(items) - 1 if len(args) < 2 else _to_integer(args[1])
    start = min(n, len(items) - 1) if n >= 0 else len(items) + n
    if start < 0:
        return -1
    for i in range(int(start), -1, -1):
        if _strict_equal(items[i], wanted):
            return i
    return -1


def _a_concat(items: list, args: list) -> list:
    out = list(items)
    for value in args:
        if _is_array(value):
            out.extend(value)  # type: ignore[arg-type]
        else:
            out.append(value)
    return out


def _flatten(items, depth: int | float) -> list:
    out: list = []
    for value in items:
        if _is_array(value) and depth >= 1:
            out.extend(_flatten(value, depth - 1))
        else:
            out.append(value)
    return out


def _a_flat(items: list, args: list) -> list:
    depth = 1 if _arg(args, 0) is UNDEFINED else max(_to_integer(args[0]), 0)
    return _flatten(items, depth)


_ARRAY_METHODS: dict[str, Callable[[list, list], object]] = {
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


def _n_to_fixed(x: int | float, args: list) -> str:
    digits = _to_integer(_arg(args, 0))
    if not 0 <= digits <= 100:
        raise _Fault(f"toFixed() digits must be between 0 and 100, got {to_text(_arg(args, 0))}")
    if x != x or abs(x) >= 1e21:
        return _number_text(x)
    if x == 0:
        x = 0  # -0 prints without its sign, unlike -0.001
    # JavaScript rounds the exact binary value half away from zero; Python's format
    # rounds half to even, so `(2.5).toFixed(0)` would differ.
    with localcontext() as ctx:
        ctx.prec = 500
        rounded = Decimal(x).quantize(Decimal(1).scaleb(-int(digits)), rounding=ROUND_HALF_UP)
    return f"{rounded:f}"


_RADIX_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _n_to_string(x: int | float, args: list) -> str:
    radix = 10 if _arg(args, 0) is UNDEFINED else _to_integer(args[0])
    if not 2 <= radix <= 36:
        raise _Fault(f"toString() radix must be between 2 and 36, got {to_text(_arg(args, 0))}")
    if radix == 10 or not math.isfinite(x):
        return _number_text(x)
    if x != int(x):
        raise _Fault("toString() with a radix other than 10 supports only integers")
    n = abs(int(x))
    out = ""
    while True:
        n, digit = divmod(n, int(radix))
        out = _RADIX_DIGITS[digit] + out
        if n == 0:
            break
    return ("-" if x < 0 else "") + out


_NUMBER_METHODS: dict[str, Callable[[int | float, list], object]] = {
    "toFixed": _n_to_fixed,
    "toString": _n_to_string,
}


def _math(fn: Callable[[float], float]) -> Callable[[list], object]:
    def apply(args: list) -> object:
        x = to_number(_arg(args, 0))
        if x != x or math.isinf(x):
            return x  # floor/ceil/round of NaN or Infinity is itself (Python would raise)
        return _num(fn(x))

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
        return _num(pick(numbers)) if numbers else empty

    return apply


def _json_stringify(args: list) -> object:
    value, replacer, space = _arg(args, 0), _arg(args, 1), _arg(args, 2)
    if replacer is not UNDEFINED and replacer is not None:
        raise _Fault("JSON.stringify() does not support a replacer; pass null")
    if _is_number(space):
        indent = " " * int(min(max(_to_integer(space), 0), 10))
    elif isinstance(space, str):
        indent = space[:10]
    else:
        indent = ""
    try:
        text = _stringify(value, indent, "")
    except RecursionError:
        raise _Fault("JSON.stringify(): the value is nested too deeply") from None
    return text if text is UNDEFINED else _checked_text(text)  # type: ignore[arg-type]


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _json_parse(args: list) -> object:
    text = to_text(_arg(args, 0))
    try:
        return json.loads(text, parse_float=lambda s: _num(float(s)), parse_int=lambda s: _num(float(s)) if len(s) > 15 else int(s), parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise _Fault(f"JSON.parse(): {exc.msg} at position {exc.pos}") from None
    except ValueError as exc:
        raise _Fault(f"JSON.parse(): {exc}") from None
    except RecursionError:
        raise _Fault("JSON.parse(): the text is nested too deeply") from None


def _object_view(value: object, what: str) -> list:
    if value is None or value is UNDEFINED:
        raise _Fault(f"Object.{what}() cannot convert {to_text(value)} to an object")
    if isinstance(value, dict):
        pairs = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, str) or _is_array(value):
        pairs = [(str(i), v) for i, v in enumerate(value)]  # type: ignore[arg-type]
    else:
        pairs = []  # numbers and booleans have no own enumerable properties
    if what == "keys":
        return [k for k, _ in pairs]
    if what == "values":
        return [v for _, v in pairs]
    return [[k, v] for k, v in pairs]


_NAMESPACES: dict[str, dict[str, Callable[[list], object]]] = {
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
    "Array": {"isArray": lambda a: _is_array(_arg(a, 0))},
}


def _parse_int(args: list) -> object:
    text = to_text(_arg(args, 0)).lstrip(_JS_WHITESPACE)
    sign = -1 if text.startswith("-") else 1
    if text[:1] in ("+", "-"):
        text = text[1:]
    radix = 0 if _arg(args, 1) is UNDEFINED else _to_integer(args[1])
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
    return _num(sign * int(digits or "0", int(radix)))


_FLOAT_PREFIX = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)", re.ASCII)


def _parse_float(args: list) -> object:
    match = _FLOAT_PREFIX.match(to_text(_arg(args, 0)).lstrip(_JS_WHITESPACE))
    if match is None:
        return math.nan
    return _num(float(match.group().replace("Infinity", "inf")))


def _get(env: Env, args: list) -> object:
    if len(args) != 1:
        raise _Fault(f"get() takes one argument, got {len(args)}")
    path = args[0]
    if not isinstance(path, str):
        raise _Fault(f"get() needs a path string, got {_a_kind(path)}")
    if "://" in path:  # get('xe://spec') reads a protocol path, as the checker types it
        protocol, _, rest = path.partition("://")
        return env.protocol(protocol, rest)
    return env.get(path)


_FUNCTIONS: dict[str, Callable[[Env, list], object]] = {
    "String": lambda env, a: to_text(a[0]) if a else "",
    "Number": lambda env, a: _num(to_number(a[0])) if a else 0,
    "Boolean": lambda env, a: truthy(_arg(a, 0)),
    "parseInt": lambda env, a: _parse_int(a),
    "parseFloat": lambda env, a: _parse_float(a),
    "get": _get,
    "logs": lambda env, a: env.logs(),
}


# -- public entry points -----------------------------------------------------------------------------


def evaluate(expr, env: Env, *, base: int = 0) -> object:
    """The value of one expression node; `base` is where its text starts in the template."""
    try:
        return _Evaluator(env, base).eval(expr)
    except RecursionError:
        raise EvaluationError("the expression is nested too deeply to evaluate", base + expr.start, base + expr.end) from None


def resolve_path(ref: ast.PathRef | ast.ProtocolRef, env: Env, *, base: int = 0) -> object:
    """`{{ a.b.0 }}`: the root from `env.lookup`, then dict keys, list indexes and `.length`."""
    return _Evaluator(env, base).reference(ref)


def _part_value(part: ast.RefPart | ast.ExprPart, env: Env) -> object:
    if isinstance(part, ast.RefPart):
        return resolve_path(part.ref, env, base=part.base)
    return evaluate(part.expr, env, base=part.base)


def render(tmpl: ParsedTemplate | str, env: Env) -> object:
    """A template's value: one `{{ }}`/`${{ }}` keeps its type, mixed text becomes a string."""
    parsed = parse_template(tmpl) if isinstance(tmpl, str) else tmpl
    if parsed.errors:
        # The checker reports these before a run; a template built at run time can still have them.
        error = parsed.errors[0]
        raise EvaluationError(error.message, error.start, error.end)
    single = parsed.single
    if single is not None:
        return _part_value(single, env)
    pieces = []
    for part in parsed.parts:
        pieces.append(part.text if isinstance(part, ast.TextPart) else to_text(_part_value(part, env)))
    return "".join(pieces)


def materialize(value: ir.Value, env: Env) -> object:
    """An IR config value as Python data, with every template rendered."""
    if isinstance(value, ir.Lit):
        return value.value
    if isinstance(value, ir.Tmpl):
        parsed = ParsedTemplate(value.text, value.parts) if value.parts else parse_template(value.text)
        return render(parsed, env)
    if isinstance(value, ir.ListV):
        return [materialize(item, env) for item in value.items]
    if isinstance(value, ir.MapV):
        return {entry.key: materialize(entry.value, env) for entry in value.entries}
    return value  # StepsV and InputsV are steps and declarations, not data


# -- explaining a failed condition -----------------------------------------------------------------


def _shown_nodes(node) -> list:
    """Sub-expressions worth a `where` line: value chains (names, members, calls), not literals.

    A chain such as `get('tests').exitCode` is shown whole, not its `get('tests')` inside;
    arguments and index expressions within it are looked at on their own.
    """
    if isinstance(node, ast.Literal):
        return []
    if not isinstance(node, (ast.Name, ast.Member, ast.Index, ast.Call)):
        return [n for child in ast.children(node) for n in _shown_nodes(child)]
    found = [node]
    link = node
    while isinstance(link, (ast.Member, ast.Index, ast.Call)):
        if isinstance(link, ast.Call):
            found += [n for a in link.args for n in _shown_nodes(a)]
            link = link.callee
        else:
            if isinstance(link, ast.Index):
                found += _shown_nodes(link.index)
            link = link.target
    if not isinstance(link, ast.Name):  # `(a + b).length`, `[1, 2].includes(x)`
        found += _shown_nodes(link)
    return found


def show(value: object) -> str:
    """A value compactly, JSON-like, for messages: strings quoted, `undefined` by name."""
    text = _show(value)
    return text if len(text) <= MAX_SHOWN_LENGTH else text[: MAX_SHOWN_LENGTH - 1] + "…"


def _show(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if _is_array(value):
        return "[" + ", ".join(_show(v) for v in value) + "]"  # type: ignore[union-attr]
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {_show(v)}" for k, v in value.items()) + "}"
    return to_text(value)


def explain(tmpl_text: str, env: Env) -> list[tuple[str, str]]:
    """For a failed condition: (source text, shown value) of its interesting sub-expressions.

    Each source text appears once, in source order; a part whose value reads exactly like
    its source (nothing learned) is left out. A sub-expression that fails to evaluate is
    shown as `<error: message>`, since a short-circuit may have skipped it in the real run.
    """
    parsed = parse_template(tmpl_text)
    candidates: list[tuple[int, int, object, int]] = []
    for part in parsed.parts:
        if isinstance(part, ast.RefPart):
            candidates.append((part.base + part.ref.start, part.base + part.ref.end, part.ref, part.base))
        elif isinstance(part, ast.ExprPart):
            for node in _shown_nodes(part.expr):
                candidates.append((part.base + node.start, part.base + node.end, node, part.base))
    candidates.sort(key=lambda c: (c[0], -c[1]))
    seen: set[str] = set()
    lines: list[tuple[str, str]] = []
    for start, end, node, base in candidates:
        source = tmpl_text[start:end]
        if source in seen:
            continue
        seen.add(source)
        try:
            if isinstance(node, (ast.PathRef, ast.ProtocolRef)):
                shown = show(resolve_path(node, env, base=base))
            else:
                shown = show(evaluate(node, env, base=base))
        except StepError as exc:
            shown = f"<error: {exc.message}>"
        if shown != source:
            lines.append((source, shown))
    return lines
