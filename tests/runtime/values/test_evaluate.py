"""The runtime evaluator: JavaScript-like values for `{{ }}` and `${{ }}`."""

from __future__ import annotations

import math

import pytest

from catalyst_dsl import expr_builtins as B
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.values import evaluate as ev
from catalyst_dsl.runtime.values import jsbuiltins
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.evaluate import (
    UNDEFINED,
    EvaluationError,
    evaluate,
    explain,
    materialize,
    render,
    resolve_path,
    to_text,
    truthy,
)
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.expr.templates import parse_template


class DictEnv:
    """A tiny Env over a dict; records `get` calls to observe short-circuits."""

    def __init__(self, values: dict | None = None, logs: list | None = None) -> None:
        self.values = values or {}
        self.entries = logs or []
        self.got: list[str] = []

    def lookup(self, name: str) -> object:
        return self.values[name]

    def get(self, path: str) -> object:
        self.got.append(path)
        value: object = self.values
        for segment in path.split("."):
            if isinstance(value, dict) and segment in value:
                value = value[segment]
            elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
                value = value[int(segment)]
            else:
                return UNDEFINED
        return value

    def logs(self) -> list[dict]:
        return self.entries

    def protocol(self, protocol: str, path: str) -> object:
        if path == "missing":
            raise StepError("FileNotFound", f"{protocol}://{path} does not exist")
        return f"<{protocol}:{path}>"

    def read(self, protocol: str, path: str) -> object:
        return UNDEFINED if path == "missing" else f"<{protocol}:{path}>"


ENV_VALUES = {
    "n": 3,
    "f": 2.0,
    "pi": 3.14,
    "s": "Hello",
    "flag": True,
    "off": False,
    "nothing": None,
    "items": ["a", "b", "c"],
    "nums": [3, 1, 2],
    "obj": {"a": 1, "b": {"c": [10, 20]}, "length": 7},
    "pr-info": {"head": {"ref": "main"}},
    "coverage": 84.2,
    "tests": {"exitCode": 0},
}


@pytest.fixture
def env() -> DictEnv:
    return DictEnv(dict(ENV_VALUES), logs=[{"level": "info", "message": "hi"}])


def run(expr: str, env: DictEnv | None = None) -> object:
    """Evaluate `${{ expr }}` as a single template, so the value keeps its type."""
    return render("${{ " + expr + " }}", env if env is not None else DictEnv(dict(ENV_VALUES)))


def fails(expr: str, env: DictEnv | None = None) -> EvaluationError:
    text = "${{ " + expr + " }}"
    with pytest.raises(EvaluationError) as info:
        render(text, env if env is not None else DictEnv(dict(ENV_VALUES)))
    info.value.source = text[info.value.start : info.value.end]  # type: ignore[attr-defined]
    return info.value


def same(a: object, b: object) -> bool:
    """Equality that also tells int from bool and matches NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


# -- literals ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("1", 1),
        ("1.5", 1.5),
        ("1.0", 1),  # integral numbers are kept as int
        ("'x'", "x"),
        ("'it\\'s'", "it's"),
        ('"a\\nb"', "a\nb"),
        ("true", True),
        ("false", False),
        ("null", None),
        ("[1, 'a', null]", [1, "a", None]),
        ("{a: 1, 'b c': [true]}", {"a": 1, "b c": [True]}),
        ("{a: 1, a: 2}", {"a": 2}),
    ],
)
def test_literals(expr, expected):
    assert run(expr) == expected
    assert type(run(expr)) is type(expected)


def test_undefined_literal_is_the_sentinel():
    assert run("undefined") is UNDEFINED
    assert repr(UNDEFINED) == "undefined"
    assert not UNDEFINED


# -- operators -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("2 + 3", 5),
        ("10 / 4", 2.5),
        ("4 / 2", 2),
        ("0.1 + 0.2", 0.30000000000000004),
        ("7 % 3", 1),
        ("-7 % 3", -1),  # the sign follows the dividend, as in JavaScript
        ("7 % -3", 1),
        ("5.5 % 2", 1.5),
        ("2 * 3", 6),
        ("2 - 5", -3),
        ("'a' + 1", "a1"),
        ("1 + 'a'", "1a"),
        ("1 + 2 + 'a'", "3a"),
        ("'a' + 1 + 2", "a12"),
        ("'x' + null", "xnull"),
        ("'x' + undefined", "xundefined"),
        ("'x' + true", "xtrue"),
        ("'v' + 2.0", "v2"),
        ("[1, 2] + ''", "1,2"),
        ("1 + true", 2),
        ("1 + null", 1),
        ("'3' * '4'", 12),
        ("'10' - 1", 9),
        ("-'3'", -3),
        ("+'42'", 42),
        ("+''", 0),
        ("-get('n')", -3),
        ("!0", True),
        ("!'x'", False),
        ("!![]", True),
        ("!!{}", True),
        ("1 < 2 ? 'yes' : 'no'", "yes"),
        ("0 ? 'yes' : 'no'", "no"),
        ("2 * (3 + 4)", 14),
    ],
)
def test_arithmetic_and_coercion(expr, expected):
    assert same(run(expr), expected)


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("1 / 0", math.inf),
        ("-1 / 0", -math.inf),
        ("0 / 0", math.nan),
        ("5 % 0", math.nan),
        ("undefined + 1", math.nan),
        ("'abc' * 2", math.nan),
        ("{} - 1", math.nan),
    ],
)
def test_arithmetic_like_javascript_at_the_edges(expr, expected):
    assert same(run(expr), expected)


def test_large_integers_become_floats_like_javascript_numbers():
    assert run("9007199254740992 * 2") == 2**54
    assert isinstance(run("9007199254740992 * 2"), float)
    assert run("'' + 1e21") == "1e+21"
    assert run("'' + 123456789 * 1000000000000") == "123456789000000000000"
    assert run("'' + 0.000001") == "0.000001"
    assert run("'' + 0.0000001") == "1e-7"
    assert run("'' + 1e300 * 1e300") == "Infinity"


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("1 == 1", True),
        ("1 == '1'", True),
        ("'1.0' == 1", True),
        ("0 == ''", True),
        ("null == undefined", True),
        ("null == 0", False),
        ("undefined == false", False),
        ("true == 1", True),
        ("true == '1'", True),
        ("false == 0", True),
        ("'a' == 'a'", True),
        ("[1,2] == '1,2'", True),
        ("'a' != 'b'", True),
        ("1 != '1'", False),
        ("1 === 1", True),
        ("1 === 1.0", True),
        ("1 === '1'", False),
        ("true === 1", False),
        ("null === undefined", False),
        ("undefined === undefined", True),
        ("'a' !== 'a'", False),
        ("1 !== '1'", True),
        ("0/0 == 0/0", False),
        ("0/0 === 0/0", False),
        ("[1] === [1]", False),  # arrays are equal only to themselves
        ("get('items') === get('items')", True),
        ("get('flag') === true", True),
        ("get('flag') === 1", False),
        ("get('flag') == 1", True),
    ],
)
def test_loose_and_strict_equality(expr, expected):
    assert run(expr) is expected


def test_python_true_is_not_strictly_equal_to_one():
    env = DictEnv({"t": True, "one": 1})
    assert run("get('t') === get('one')", env) is False
    assert run("get('t') == get('one')", env) is True
    assert run("[get('one')].includes(get('t'))", env) is False
    assert run("[get('t')].indexOf(1)", env) == -1


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("1 < 2", True),
        ("2 <= 2", True),
        ("3 > 4", False),
        ("4 >= 4.0", True),
        ("'a' < 'b'", True),
        ("'B' < 'a'", True),
        ("'10' < '9'", True),  # two strings compare as text
        ("'10' < 9", False),  # a number on either side compares as numbers
        ("null < 1", True),
        ("undefined < 1", False),
        ("'abc' < 1", False),
        ("'abc' >= 1", False),
        ("get('coverage') >= 90", False),
    ],
)
def test_comparisons(expr, expected):
    assert run(expr) is expected


def test_logical_operators_return_operands_and_short_circuit():
    env = DictEnv({"x": 0})
    assert run("0 || 'fallback'", env) == "fallback"
    assert run("'set' || get('boom')", env) == "set"
    assert run("0 && get('boom')", env) == 0
    assert run("'' && 1", env) == ""
    assert run("1 && 'last'", env) == "last"
    assert env.got == []  # the right side was never evaluated
    assert run("false || get('x')", env) == 0
    assert env.got == ["x"]


def test_short_circuit_skips_failing_right_side():
    assert run("false && get('nothing').x") is False
    assert run("true || missing_name") is True


def test_nullish_coalescing_only_replaces_null_and_undefined():
    assert run("null ?? 'd'") == "d"
    assert run("undefined ?? 'd'") == "d"
    assert run("get('no.such') ?? 5") == 5
    assert run("0 ?? 5") == 0
    assert run("'' ?? 5") == ""
    assert run("false ?? 5") is False
    env = DictEnv()
    assert run("1 ?? get('boom')", env) == 1
    assert env.got == []


# -- names, members, indexes --------------------------------------------------------------------------


def test_names_members_and_indexes(env):
    assert run("n", env) == 3
    assert run("obj.a", env) == 1
    assert run("obj.b.c[1]", env) == 20
    assert run("obj['b']['c'][0]", env) == 10
    assert run("items[0]", env) == "a"
    assert run("items[2 - 1]", env) == "b"
    assert run("items['1']", env) == "b"
    assert run("items.length", env) == 3
    assert run("s.length", env) == 5
    assert run("s[1]", env) == "e"
    assert run("obj.length", env) == 7  # an object's own key, not a length
    assert run("({'1': 'one'})[1]", env) == "one"


def test_missing_members_are_undefined(env):
    assert run("obj.zzz", env) is UNDEFINED
    assert run("items[5]", env) is UNDEFINED
    assert run("items[-1]", env) is UNDEFINED
    assert run("items.foo", env) is UNDEFINED
    assert run("s[99]", env) is UNDEFINED
    assert run("n.x", env) is UNDEFINED
    assert run("flag.x", env) is UNDEFINED
    assert run("get('missing')", env) is UNDEFINED


def test_python_attributes_are_never_reached(env):
    assert run("obj.__class__", env) is UNDEFINED
    assert run("s.__len__", env) is UNDEFINED
    assert run("items.append", env) is UNDEFINED
    assert "not allowed" in fails("s.upper()", env).message
    assert "not allowed" in fails("items.append(1)", env).message
    assert "not allowed" in fails("obj.keys()", env).message
    assert "not allowed" in fails("s.__class__()", env).message
    assert "not allowed" in fails("(1).__add__(2)", env).message


def test_reading_a_member_of_undefined_points_at_the_member(env):
    error = fails("get('nope').exitCode == 0", env)
    assert error.message == "cannot read 'exitCode' of undefined"
    assert error.source == "get('nope').exitCode"
    assert error.code == "ExpressionError"
    assert isinstance(error, StepError)


def test_reading_a_member_of_null(env):
    error = fails("1 + nothing['x']", env)
    assert error.message == "cannot read 'x' of null"
    assert error.source == "nothing['x']"
    error = fails("nothing.trim()", env)
    assert error.message == "cannot read 'trim' of null"
    assert error.source == "nothing.trim"


def test_offsets_are_in_the_template_text(env):
    text = "before ${{ n + missing }} after"
    with pytest.raises(EvaluationError) as info:
        render(text, env)
    assert text[info.value.start : info.value.end] == "missing"
    assert info.value.message == "'missing' is not defined"
    assert info.value.metadata == {"start": info.value.start, "end": info.value.end}


def test_namespaces_and_functions_are_not_values(env):
    assert fails("Math", env).message == "'Math' can only be called"
    assert fails("get", env).message == "'get' can only be called"


def test_a_defined_name_hides_a_namespace():
    env = DictEnv({"Math": {"max": 1}})
    assert run("Math.max", env) == 1
    assert "not allowed on an object" in fails("Math.max(1, 2)", env).message


# -- methods -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("'AbC'.toLowerCase()", "abc"),
        ("'AbC'.toUpperCase()", "ABC"),
        ("'  x \\n'.trim()", "x"),
        ("'\\u00a0x'.trim()", "x"),
        ("'  x  '.trimStart()", "x  "),
        ("'  x  '.trimEnd()", "  x"),
        ("'a,b,,c'.split(',')", ["a", "b", "", "c"]),
        ("'a,b,c'.split(',', 2)", ["a", "b"]),
        ("'abc'.split('')", ["a", "b", "c"]),
        ("'abc'.split()", ["abc"]),
        ("''.split(',')", [""]),
        ("''.split('')", []),
        ("'a b'.split(' ', 0)", []),
        ("'feature'.includes('eat')", True),
        ("'feature'.includes('f', 1)", False),
        ("'feature'.startsWith('feat')", True),
        ("'feature'.startsWith('eat', 1)", True),
        ("'feature'.endsWith('ure')", True),
        ("'feature'.endsWith('feat', 4)", True),
        ("'a-a-a'.replace('a', 'b')", "b-a-a"),
        ("'a-a-a'.replace('x', 'b')", "a-a-a"),
        ("'price'.replace('price', '$$5 $&')", "$5 price"),
        ("'ab'.replace('b', '[$`|$\\']')", "a[a|]"),
        ("'a-a-a'.replaceAll('a', 'b')", "b-b-b"),
        ("'aaa'.replaceAll('aa', 'b')", "ba"),
        ("'ab'.replaceAll('', '-')", "-a-b-"),
        ("'hello'.slice(1, 3)", "el"),
        ("'hello'.slice(-3)", "llo"),
        ("'hello'.slice(-3, -1)", "ll"),
        ("'hello'.slice(10)", ""),
        ("'hello'.substring(3, 1)", "el"),
        ("'hello'.substring(-2, 2)", "he"),
        ("'hello'.indexOf('l')", 2),
        ("'hello'.indexOf('l', 3)", 3),
        ("'hello'.indexOf('z')", -1),
        ("'hello'.indexOf('', 99)", 5),
        ("'hello'.lastIndexOf('l')", 3),
        ("'hello'.lastIndexOf('l', 2)", 2),
        ("'hello'.lastIndexOf('h', -5)", 0),
        ("'5'.padStart(3, '0')", "005"),
        ("'5'.padStart(6, 'ab')", "ababa5"),
        ("'abc'.padStart(2)", "abc"),
        ("'5'.padStart(3)", "  5"),
        ("'5'.padEnd(3, '.')", "5.."),
        ("'ab'.repeat(3)", "ababab"),
        ("'ab'.repeat(0)", ""),
        ("'abc'.charAt(1)", "b"),
        ("'abc'.charAt(9)", ""),
        ("'abc'.at(-1)", "c"),
        ("'abc'.at(0)", "a"),
        ("'a'.concat('b', 1, null)", "ab1null"),
        ("'x'.toString()", "x"),
    ],
)
def test_string_methods(expr, expected):
    assert run(expr) == expected
    assert type(run(expr)) is type(expected)


def test_string_at_out_of_range_is_undefined():
    assert run("'abc'.at(3)") is UNDEFINED
    assert run("'abc'.at(-4)") is UNDEFINED


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("[1, 2, 3].join()", "1,2,3"),
        ("[1, null, undefined, 'x'].join('-')", "1---x"),
        ("[[1, 2], [3]].join(';')", "1,2;3"),
        ("[1, 2, 3].includes(2)", True),
        ("[1, 2, 3].includes('2')", False),
        ("[0/0].includes(0/0)", True),
        ("[1, 2, 3].includes(1, 1)", False),
        ("[1, 2, 1].indexOf(1)", 0),
        ("[1, 2, 1].indexOf(1, 1)", 2),
        ("[1, 2, 1].indexOf(1, -1)", 2),
        ("[0/0].indexOf(0/0)", -1),
        ("[1, 2, 1].lastIndexOf(1)", 2),
        ("[1, 2, 1].lastIndexOf(1, 1)", 0),
        ("[1, 2, 1].lastIndexOf(3)", -1),
        ("[1, 2, 3, 4].slice(1, -1)", [2, 3]),
        ("[1, 2, 3].slice(-2)", [2, 3]),
        ("[1].concat(2, [3, [4]])", [1, 2, 3, [4]]),
        ("[1, 2, 3].at(-1)", 3),
        ("[1, [2, [3, [4]]]].flat()", [1, 2, [3, [4]]]),
        ("[1, [2, [3, [4]]]].flat(2)", [1, 2, 3, [4]]),
        ("[1, [2]].flat(0)", [1, [2]]),
        ("[1, 'a', true].toString()", "1,a,true"),
        ("get('items').length > 2 && get('items').includes('b')", True),
    ],
)
def test_array_methods(expr, expected):
    assert run(expr) == expected
    assert type(run(expr)) is type(expected)


def test_array_at_out_of_range_and_slice_copies(env):
    assert run("[].at(0)") is UNDEFINED
    copy = run("items.slice()", env)
    assert copy == ["a", "b", "c"] and copy is not env.values["items"]


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("(3.14159).toFixed(2)", "3.14"),
        ("(2.5).toFixed(0)", "3"),
        ("(-2.5).toFixed(0)", "-3"),
        ("(1.005).toFixed(2)", "1.00"),  # the binary value is just below 1.005
        ("(5).toFixed(2)", "5.00"),
        ("(84.2).toFixed()", "84"),
        ("(0/0).toFixed(2)", "NaN"),
        ("(255).toString()", "255"),
        ("(255).toString(16)", "ff"),
        ("(-5).toString(2)", "-101"),
        ("(2.0).toString()", "2"),
        ("get('pi').toFixed(1)", "3.1"),
    ],
)
def test_number_methods(expr, expected):
    assert run(expr) == expected


def test_method_errors():
    assert fails("(1).toFixed(101)").message.startswith("toFixed() digits must be between 0 and 100")
    assert fails("'a'.repeat(-1)").message.startswith("repeat count")
    assert fails("true.toString()").message == "the method 'toString' is not allowed on a boolean"
    error = fails("'x'.nope(1)")
    assert error.message == "the method 'nope' is not allowed on a string"
    assert error.source == "'x'.nope"


def test_every_allowlisted_name_has_exactly_one_implementation():
    assert set(jsbuiltins.STRING_METHODS) == set(B.STRING_METHODS)
    assert set(jsbuiltins.ARRAY_METHODS) == set(B.ARRAY_METHODS)
    assert set(jsbuiltins.NUMBER_METHODS) == set(B.NUMBER_METHODS)
    assert set(jsbuiltins.FUNCTIONS) == set(B.FUNCTIONS)
    assert {ns: set(fns) for ns, fns in jsbuiltins.NAMESPACES.items()} == {
        ns: set(fns) for ns, fns in B.NAMESPACES.items()
    }


# -- namespaces and functions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("Math.min(3, 1, 2)", 1),
        ("Math.max(3, '7', 2)", 7),
        ("Math.max()", -math.inf),
        ("Math.min()", math.inf),
        ("Math.max(1, 'x')", math.nan),
        ("Math.round(2.5)", 3),
        ("Math.round(-2.5)", -2),
        ("Math.round(2.4)", 2),
        ("Math.floor(-1.5)", -2),
        ("Math.ceil(1.2)", 2),
        ("Math.abs(-4)", 4),
        ("Math.floor(1 / 0)", math.inf),
        ("Math.round('x')", math.nan),
        ("JSON.stringify({a: [1, 2.0, 'x'], b: null, c: undefined})", '{"a":[1,2,"x"],"b":null}'),
        ("JSON.stringify([undefined, 1 / 0])", "[null,null]"),
        ("JSON.stringify('é\"')", '"é\\""'),
        ("JSON.stringify({a: {}}, null, 2)", '{\n  "a": {}\n}'),
        ("JSON.stringify([1], null, '--')", "[\n--1\n]"),
        ("JSON.parse('{\"a\": [1, 2.0, true, null]}')", {"a": [1, 2, True, None]}),
        ("JSON.parse('3')", 3),
        ("JSON.parse(' \"s\" ')", "s"),
        ("Object.keys({b: 1, a: 2})", ["b", "a"]),
        ("Object.values({b: 1, a: 2})", [1, 2]),
        ("Object.entries({b: 1})", [["b", 1]]),
        ("Object.keys(['x', 'y'])", ["0", "1"]),
        ("Object.keys(5)", []),
        ("Array.isArray([1])", True),
        ("Array.isArray('a')", False),
        ("Array.isArray()", False),
    ],
)
def test_namespaces(expr, expected):
    result = run(expr)
    assert same(result, expected) or (isinstance(expected, (list, dict)) and result == expected)


def test_json_stringify_of_undefined_is_undefined():
    assert run("JSON.stringify(undefined)") is UNDEFINED


def test_namespace_errors():
    error = fails("JSON.parse('{bad')")
    assert error.message.startswith("JSON.parse(): ")
    assert error.source == "JSON.parse('{bad')"
    assert fails("JSON.parse('NaN')").message.startswith("JSON.parse(): ")
    assert fails("Object.keys(null)").message == "Object.keys() cannot convert null to an object"
    assert fails("Math.pow(2, 3)").message == "'Math.pow' is not allowed in expressions"
    assert fails("JSON.stringify(1, [])").message.startswith("JSON.stringify() does not support a replacer")


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("String(1.0)", "1"),
        ("String(null)", "null"),
        ("String(undefined)", "undefined"),
        ("String([1, [2, 3]])", "1,2,3"),
        ("String({a: 1})", '{"a":1}'),
        ("String(true)", "true"),
        ("String()", ""),
        ("Number('42')", 42),
        ("Number(' 4.5 ')", 4.5),
        ("Number('')", 0),
        ("Number('abc')", math.nan),
        ("Number('1_000')", math.nan),
        ("Number('0x10')", 16),
        ("Number('0b101')", 5),
        ("Number('-Infinity')", -math.inf),
        ("Number('inf')", math.nan),
        ("Number(true)", 1),
        ("Number(null)", 0),
        ("Number(undefined)", math.nan),
        ("Number([])", 0),
        ("Number(['7'])", 7),
        ("Number({})", math.nan),
        ("Number()", 0),
        ("Boolean('')", False),
        ("Boolean('0')", True),
        ("Boolean(0/0)", False),
        ("Boolean([])", True),
        ("Boolean()", False),
        ("parseInt('42px')", 42),
        ("parseInt('  -17')", -17),
        ("parseInt('0x1A')", 26),
        ("parseInt('ff', 16)", 255),
        ("parseInt('101', 2)", 5),
        ("parseInt('3.9')", 3),
        ("parseInt('px')", math.nan),
        ("parseInt('5', 1)", math.nan),
        ("parseFloat('3.14abc')", 3.14),
        ("parseFloat('  .5')", 0.5),
        ("parseFloat('1e3')", 1000),
        ("parseFloat('1e')", 1),
        ("parseFloat('-Infinity')", -math.inf),
        ("parseFloat('abc')", math.nan),
    ],
)
def test_global_functions(expr, expected):
    assert same(run(expr), expected)


def test_get_and_logs(env):
    assert run("get('tests').exitCode", env) == 0
    assert run("get('obj.b.c.1')", env) == 20
    assert run("get('pr-info.head.ref')", env) == "main"
    assert run("get('xe://features/x/spec')", env) == "<xe:features/x/spec>"
    assert run("logs()", env) == [{"level": "info", "message": "hi"}]
    assert run("logs().length", env) == 1
    assert fails("get()", env).message == "get() takes one argument, got 0"
    assert fails("get('a', 'b')", env).message == "get() takes one argument, got 2"
    assert fails("get(1)", env).message == "get() needs a path string, got a number"


def test_functions_outside_the_allowlist_are_refused(env):
    error = fails("eval('1')", env)
    assert error.message == "'eval' is not a function the expression language allows"
    assert error.source == "eval"
    assert fails("items[0]('x')", env).message == "only named functions and methods can be called in expressions"


def test_growth_is_bounded():
    assert "longer than 10 MB" in fails("'ab'.repeat(6000000)").message
    assert "longer than 10 MB" in fails("'a'.padStart(20000000)").message
    assert "longer than 10 MB" in fails("'a'.padEnd(1 / 0)").message
    assert "longer than 10 MB" in fails("'x'.repeat(6000000).replaceAll('', '-')").message
    assert "longer than 10 MB" in fails("'x'.repeat(6000000) + 'x'.repeat(6000000)").message
    assert "non-negative finite" in fails("'a'.repeat(1 / 0)").message
    assert len(run("'ab'.repeat(1000)")) == 2000


def test_deep_nesting_is_an_error_not_a_crash():
    node: object = ast.Literal(1, "number", start=0, end=1)
    for _ in range(20000):
        node = ast.Unary("-", node, start=0, end=1)
    with pytest.raises(EvaluationError, match="nested too deeply"):
        evaluate(node, DictEnv())


# -- truthiness and text -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (0, False),
        (0.0, False),
        (math.nan, False),
        ("", False),
        (None, False),
        (UNDEFINED, False),
        (False, False),
        (1, True),
        (-0.5, True),
        ("0", True),
        ("false", True),
        ([], True),
        ({}, True),
        (True, True),
    ],
)
def test_truthy(value, expected):
    assert truthy(value) is expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (True, "true"),
        (False, "false"),
        (None, "null"),
        (UNDEFINED, "undefined"),
        (3, "3"),
        (2.0, "2"),
        (-0.0, "0"),
        (2.5, "2.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.5e-7, "1.5e-7"),
        (123e-20, "1.23e-18"),
        (0.000123, "0.000123"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
        (10**22, "1e+22"),
        ([1, None, [2, UNDEFINED], "x"], "1,,2,,x"),
        ({"a": [1, 2.0], "b": "é"}, '{"a":[1,2],"b":"é"}'),
        ("text", "text"),
    ],
)
def test_to_text_is_javascript_string(value, expected):
    assert to_text(value) == expected


# -- templates -------------------------------------------------------------------------------------------------------


def test_single_template_keeps_the_type(env):
    assert render("{{n}}", env) == 3
    assert isinstance(render("{{ n }}", env), int)
    assert render("{{flag}}", env) is True
    assert render("{{items}}", env) == ["a", "b", "c"]
    assert render("{{nothing}}", env) is None
    assert render("${{ n + 1 }}", env) == 4
    assert render("${{ get('obj') }}", env) is env.values["obj"]


def test_mixed_text_becomes_a_string(env):
    assert render("n={{n}}", env) == "n=3"
    assert render("{{flag}} and {{off}}", env) == "true and false"
    assert render("f={{f}}", env) == "f=2"
    assert render("pi={{pi}}", env) == "pi=3.14"
    assert render("v={{nothing}}", env) == "v=null"
    assert render("items: {{items}}", env) == "items: a,b,c"
    assert render("obj: {{obj.b}}", env) == 'obj: {"c":[10,20]}'
    assert render("{{n}}{{n}}", env) == "33"
    assert render("ratio ${{ 1 / 4 }}!", env) == "ratio 0.25!"
    assert render("missing: ${{ get('nope') }}", env) == "missing: undefined"


def test_references_with_dashes_indexes_and_length(env):
    assert render("{{pr-info.head.ref}}", env) == "main"
    assert render("{{items.0}}", env) == "a"
    assert render("{{items.length}}", env) == 3
    assert render("{{s.length}}", env) == 5
    assert render("{{obj.b.c.1}}", env) == 20
    assert render("{{obj.zzz}}", env) is UNDEFINED
    assert render("{{items.9}}", env) is UNDEFINED
    assert render("{{items.01}}", env) is UNDEFINED  # not an index's spelling


def test_reference_errors(env):
    with pytest.raises(EvaluationError) as info:
        render("x {{ obj.zzz.deeper }}", env)
    assert info.value.message == "cannot read 'deeper' of undefined: 'obj.zzz' is undefined"
    assert "x {{ obj.zzz.deeper }}"[info.value.start : info.value.end] == "obj.zzz.deeper"
    with pytest.raises(EvaluationError, match="'ghost' is not defined"):
        render("{{ghost}}", env)


def test_resolve_path_directly(env):
    ref = parse_template("{{obj.b.c.0}}").single.ref
    assert resolve_path(ref, env) == 10


def test_protocol_references(env):
    assert render("{{xe://features/x/spec}}", env) == "<xe:features/x/spec>"
    assert render("see {{catalyst://templates/y}}", env) == "see <catalyst:templates/y>"
    with pytest.raises(StepError, match="does not exist"):
        render("{{xe://missing}}", env)


def test_plain_text_and_escapes(env):
    assert render("plain text", env) == "plain text"
    assert render("", env) == ""
    assert render("\\{{n}} is {{n}}", env) == "{{n}} is 3"
    assert render("\\{{ literal \\}}", env) == "{{ literal }}"
    assert render("cost: \\${{ 1 }}", env) == "cost: ${{ 1 }}"
    assert render("a } b { c", env) == "a } b { c"


def test_render_accepts_a_parsed_template(env):
    assert render(parse_template("n is {{n}}"), env) == "n is 3"


def test_template_syntax_errors_are_evaluation_errors(env):
    with pytest.raises(EvaluationError) as info:
        render("x ${{ 1 + }}", env)
    assert info.value.code == "ExpressionError"


# -- materialize -------------------------------------------------------------------------------------------------------


def _tmpl(text: str) -> ir.Tmpl:
    return ir.Tmpl(text, parse_template(text).parts)


def test_materialize_values(env):
    value = ir.MapV(
        (
            ir.Entry("count", _tmpl("{{n}}")),
            ir.Entry("label", _tmpl("n={{n}}")),
            ir.Entry("fixed", ir.Lit(5)),
            ir.Entry("list", ir.ListV((ir.Lit("a"), _tmpl("${{ n * 2 }}"), ir.Lit(None)))),
            ir.Entry("nested", ir.MapV((ir.Entry("ok", _tmpl("{{flag}}")),))),
        )
    )
    assert materialize(value, env) == {
        "count": 3,
        "label": "n=3",
        "fixed": 5,
        "list": ["a", 6, None],
        "nested": {"ok": True},
    }


def test_materialize_parses_a_template_without_parts(env):
    assert materialize(ir.Tmpl("${{ n + 1 }}"), env) == 4


def test_materialize_leaves_steps_and_inputs_alone(env):
    steps = ir.StepsV(())
    inputs = ir.InputsV(())
    assert materialize(steps, env) is steps
    assert materialize(inputs, env) is inputs


# -- explain -----------------------------------------------------------------------------------------------------------


def test_explain_the_documented_example(env):
    text = "${{ get('coverage') >= 90 && get('tests').exitCode == 0 }}"
    assert render(text, env) is False
    assert explain(text, env) == [("get('coverage')", "84.2"), ("get('tests').exitCode", "0")]


def test_explain_shows_each_source_once_in_order(env):
    text = "${{ n > 5 || (s.length > 10 && n < 0) || items.includes(s) }}"
    assert explain(text, env) == [("n", "3"), ("s.length", "5"), ("items.includes(s)", "false"), ("s", '"Hello"')]


def test_explain_renders_values_compactly(env):
    text = "${{ get('obj').b && get('nope') && items && s == 'x' && get('f') }}"
    assert explain(text, env) == [
        ("get('obj').b", '{"c": [10, 20]}'),
        ("get('nope')", "undefined"),
        ("items", '["a", "b", "c"]'),
        ("s", '"Hello"'),
        ("get('f')", "2"),
    ]


def test_explain_shows_arguments_and_errors(env):
    text = "${{ Math.max(n, get('nope').x) > 1 }}"
    assert explain(text, env) == [
        ("Math.max(n, get('nope').x)", "<error: cannot read 'x' of undefined>"),
        ("n", "3"),
        ("get('nope').x", "<error: cannot read 'x' of undefined>"),
    ]


def test_explain_references_and_literal_only_conditions(env):
    assert explain("{{off}}", env) == [("off", "false")]
    assert explain("${{ 1 > 2 }}", env) == []
    assert explain("${{ !flag }}", env) == [("flag", "true")]


def test_explain_cuts_long_values():
    env = DictEnv({"big": "x" * 1000})
    ((source, shown),) = explain("${{ big == 'y' }}", env)
    assert source == "big"
    assert len(shown) == ev.MAX_SHOWN_LENGTH and shown.endswith("…")
