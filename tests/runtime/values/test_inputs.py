"""Input resolution: coercion, defaults, transforms, rules, and every problem reported together."""

from __future__ import annotations

import textwrap

import pytest

from catalyst_dsl.compiler import compile_bytes
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.values.inputs import InputProblem, parse_assignments, resolve_inputs, transform, words


def declare(inputs_yaml: str) -> tuple[ir.InputDecl, ...]:
    """The input declarations of a playbook whose `inputs:` is `inputs_yaml`, compiled for real."""
    text = (
        "name: x\ndescription: d\nowner: Engineer\ninputs:\n"
        + textwrap.indent(textwrap.dedent(inputs_yaml).strip("\n"), "  ")
        + '\nsteps:\n  - file-exists: "a.txt"\n'
    )
    compiled = compile_bytes(text.encode(), "x.yaml")
    assert compiled.diagnostics == []
    return compiled.playbook.inputs


def only(problems: list[InputProblem]) -> InputProblem:
    assert len(problems) == 1, problems
    return problems[0]


NUMBER = declare("- number: n")
BOOLEAN = declare("- boolean: b")
ARRAY = declare("- array: a")
OBJECT = declare("- object: o")
STRING = declare("- string: s")
ENUM = declare("- enum: env\n  allowed: [dev, staging, production]")


# -- coercion from text ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("3", 3), ("-2.5", -2.5), ("+4", 4), (" 7 ", 7), ("3.0", 3), ("1e3", 1000), (".5", 0.5), ("-0", 0)],
)
def test_numbers_from_text(text, expected):
    values, problems = resolve_inputs(NUMBER, {"n": text}, from_text=True)
    assert problems == []
    assert values["n"] == expected
    assert type(values["n"]) is type(expected)


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "-Infinity", "1e400", "0x10", "1_000", "", "3 4"])
def test_bad_numbers_from_text(text):
    _, problems = resolve_inputs(NUMBER, {"n": text}, from_text=True)
    problem = only(problems)
    assert (problem.input, problem.rule) == ("n", "type")
    assert problem.message.startswith("n: ")
    assert "number" in problem.message
    assert problem.fix == "pass -i n=<number>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("true", True), ("FALSE", False), ("Yes", True), ("no", False), ("1", True), ("0", False), (" true ", True)],
)
def test_booleans_from_text(text, expected):
    values, problems = resolve_inputs(BOOLEAN, {"b": text}, from_text=True)
    assert problems == []
    assert values["b"] is expected


@pytest.mark.parametrize("text", ["maybe", "on", "", "2"])
def test_bad_booleans_from_text(text):
    problem = only(resolve_inputs(BOOLEAN, {"b": text}, from_text=True)[1])
    assert problem.rule == "type"
    assert problem.fix == "pass -i b=true|false"


def test_arrays_and_objects_from_text_are_json():
    values, problems = resolve_inputs(ARRAY + OBJECT, {"a": '["x", 1]', "o": '{"k": [true]}'}, from_text=True)
    assert problems == []
    assert values == {"a": ["x", 1], "o": {"k": [True]}}


def test_a_comma_separated_array_is_refused_with_a_json_fix():
    problem = only(resolve_inputs(ARRAY, {"a": "x,y"}, from_text=True)[1])
    assert problem.rule == "type"
    assert problem.message == "a: 'x,y' is not a JSON array"
    assert "JSON array" in problem.fix and "comma-separated" in problem.fix


@pytest.mark.parametrize(
    ("decls", "text"),
    [(ARRAY, '{"k": 1}'), (ARRAY, "[NaN]"), (OBJECT, "[1]"), (OBJECT, "{k: 1}"), (OBJECT, "")],
)
def test_json_of_the_wrong_shape(decls, text):
    problem = only(resolve_inputs(decls, {decls[0].name: text}, from_text=True)[1])
    assert problem.rule == "type"


def test_strings_are_kept_as_written():
    values, problems = resolve_inputs(STRING, {"s": "  true "}, from_text=True)
    assert problems == []
    assert values["s"] == "  true "


def test_enum_from_text():
    values, problems = resolve_inputs(ENUM, {"env": "dev"}, from_text=True)
    assert (values, problems) == ({"env": "dev"}, [])
    problem = only(resolve_inputs(ENUM, {"env": "Staging"}, from_text=True)[1])
    assert problem.rule == "allowed"
    assert problem.message == "env: 'Staging' is not one of: dev, staging, production"
    assert problem.fix == "did you mean 'staging'? pass -i env=dev|staging|production"


def test_a_string_with_allowed_values_is_an_enum():
    decls = declare("- string: color\n  allowed: [red, green]")
    assert resolve_inputs(decls, {"color": "green"}, from_text=True)[1] == []
    assert only(resolve_inputs(decls, {"color": "blue"}, from_text=True)[1]).rule == "allowed"


def test_allowed_numbers_compare_by_value_and_not_true_for_one():
    decls = declare("- number: level\n  allowed: [1, 2, 3]")
    assert resolve_inputs(decls, {"level": "2.0"}, from_text=True) == ({"level": 2}, [])
    assert only(resolve_inputs(decls, {"level": "4"}, from_text=True)[1]).fix == "pass -i level=1|2|3"
    # True == 1 in Python; a boolean is still no number here.
    assert only(resolve_inputs(decls, {"level": True}, from_text=False)[1]).rule == "type"


# -- typed values (from a calling playbook) ---------------------------------------------------


@pytest.mark.parametrize(
    ("decls", "value"),
    [
        (STRING, 3),
        (NUMBER, "3"),
        (NUMBER, True),
        (NUMBER, float("nan")),
        (NUMBER, float("inf")),
        (BOOLEAN, 1),
        (BOOLEAN, "true"),
        (ARRAY, "a,b"),
        (ARRAY, {"a": 1}),
        (OBJECT, ["k"]),
        (OBJECT, {1: "v"}),
        (ENUM, 1),
    ],
)
def test_typed_values_are_never_coerced(decls, value):
    name = decls[0].name
    problem = only(resolve_inputs(decls, {name: value}, from_text=False)[1])
    assert (problem.input, problem.rule) == (name, "type")
    assert problem.fix.startswith(f"pass {name}: ")
    assert problem.fix.endswith("in the calling step's inputs")


def test_typed_values_that_fit():
    decls = STRING + NUMBER + BOOLEAN + ARRAY + OBJECT + ENUM
    given = {"s": "x", "n": 2.5, "b": False, "a": ("p", "q"), "o": {"k": 1}, "env": "dev"}
    values, problems = resolve_inputs(decls, given, from_text=False)
    assert problems == []
    assert values == {"s": "x", "n": 2.5, "b": False, "a": ["p", "q"], "o": {"k": 1}, "env": "dev"}


def test_a_typed_string_is_not_coerced_even_when_it_looks_like_text_input():
    values, problems = resolve_inputs(BOOLEAN, {"b": "yes"}, from_text=False)
    assert only(problems).message == "b: 'yes' is not a boolean"


# -- defaults, absence, order ----------------------------------------------------------------

DEFAULTS = declare(
    """
    - number: retry-count
      default: 3
    - boolean: dry-run
      default: false
    - enum: environment
      allowed: [dev, staging]
      default: staging
    - array: tags
      default: [a, b]
    - object: meta
      default: {k: 1, l: [true]}
    - string: note
    """
)


def test_literal_defaults_become_plain_values_in_declaration_order():
    values, problems = resolve_inputs(DEFAULTS, {}, from_text=True)
    assert problems == []
    assert list(values) == ["retry-count", "dry-run", "environment", "tags", "meta", "note"]
    assert values == {
        "retry-count": 3,
        "dry-run": False,
        "environment": "staging",
        "tags": ["a", "b"],
        "meta": {"k": 1, "l": [True]},
        "note": None,
    }


def test_given_values_win_over_defaults():
    values, _ = resolve_inputs(DEFAULTS, {"note": "hi", "dry-run": "true", "retry-count": "5"}, from_text=True)
    assert values["dry-run"] is True and values["retry-count"] == 5 and values["note"] == "hi"


def test_a_given_none_counts_as_not_given():
    values, problems = resolve_inputs(DEFAULTS, {"retry-count": None, "note": None}, from_text=False)
    assert problems == []
    assert values["retry-count"] == 3 and values["note"] is None


def test_required_inputs():
    decls = declare(
        """
        - string: feature-id
          required: true
        - number: depth
          required: true
          default: 2
        """
    )
    values, problems = resolve_inputs(decls, {}, from_text=True)
    assert values == {"feature-id": None, "depth": 2}
    assert only(problems) == InputProblem(
        "feature-id", "required", "feature-id: the input is required and was not given", "pass -i feature-id=<text>"
    )
    typed = only(resolve_inputs(decls, {}, from_text=False)[1])
    assert typed.fix == "pass feature-id: <text> in the calling step's inputs"


TEMPLATED = declare(
    """
    - string: feature-id
    - string: notes
      default: "{{feature-id}}-notes"
      validation: [{maxLength: 3}]
    - number: retries
      default: "{{feature-id}}"
    """
)


def test_templated_defaults_without_a_renderer_keep_their_text_unchecked():
    values, problems = resolve_inputs(TEMPLATED, {"feature-id": "f"}, from_text=True)
    assert problems == []
    assert values == {"feature-id": "f", "notes": "{{feature-id}}-notes", "retries": "{{feature-id}}"}


def test_templated_defaults_are_rendered_with_the_inputs_before_them():
    seen = []

    def render(value, resolved):
        seen.append(dict(resolved))
        return value.text.replace("{{feature-id}}", resolved["feature-id"])

    values, problems = resolve_inputs(TEMPLATED, {"feature-id": "7"}, from_text=True, render_default=render)
    assert values == {"feature-id": "7", "notes": "7-notes", "retries": 7}  # rendered text coerced to the number
    assert seen == [{"feature-id": "7"}, {"feature-id": "7", "notes": "7-notes"}]
    problem = only(problems)
    assert (problem.input, problem.rule) == ("notes", "maxLength")
    assert problem.message == "notes: the default '7-notes' has 7 characters, more than the maximum 3"
    assert problem.fix == "fix the playbook's default, or pass -i notes=<text of at most 3 characters>"


def test_transform_applies_to_defaults():
    decls = declare("- string: name\n  transform: camel-case\n  default: my name")
    assert resolve_inputs(decls, {}, from_text=True) == ({"name": "myName"}, [])


def test_a_default_that_breaks_its_rules_is_reported():
    decls = declare("- number: retries\n  default: 3\n  validation: [{min: 5}]")
    problem = only(resolve_inputs(decls, {}, from_text=True)[1])
    assert problem.message == "retries: the default 3 is less than the minimum 5"
    assert problem.fix == "fix the playbook's default, or pass -i retries=<number >= 5>"


# -- transforms ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kebab", "snake", "camel"),
    [
        ("My Feature_ID", "my-feature-id", "my_feature_id", "myFeatureId"),
        ("myFeatureId", "my-feature-id", "my_feature_id", "myFeatureId"),
        ("my-feature-id", "my-feature-id", "my_feature_id", "myFeatureId"),
        ("XMLHttpRequest", "xml-http-request", "xml_http_request", "xmlHttpRequest"),
        ("v2Api  tool", "v2-api-tool", "v2_api_tool", "v2ApiTool"),
        ("  __a--b  ", "a-b", "a_b", "aB"),
        ("ÉtéFort", "été-fort", "été_fort", "étéFort"),
        ("a.b!", "a.b!", "a.b!", "a.b!"),
        ("", "", "", ""),
    ],
)
def test_transforms(text, kebab, snake, camel):
    assert (transform(text, "kebab-case"), transform(text, "snake-case"), transform(text, "camel-case")) == (
        kebab,
        snake,
        camel,
    )


def test_words():
    assert words("My Feature_ID") == ["My", "Feature", "ID"]
    with pytest.raises(ValueError):
        transform("x", "title-case")


def test_transform_runs_before_validation_and_allowed():
    decls = declare(
        """
        - string: feature-id
          transform: kebab-case
          validation:
            - regex: "^[a-z0-9-]+$"
        - enum: mode
          allowed: [fast_mode, slow_mode]
          transform: snake-case
        """
    )
    values, problems = resolve_inputs(decls, {"feature-id": "My Feature_ID", "mode": "Fast Mode"}, from_text=True)
    assert problems == []
    assert values == {"feature-id": "my-feature-id", "mode": "fast_mode"}


# -- validation rules ------------------------------------------------------------------------

RULES = declare(
    """
    - string: feature-id
      validation:
        - regex: "^[a-z0-9-]+$"
          code: InvalidFeatureId
          message: must be kebab-case
        - minLength: 3
          maxLength: 5
    - number: retries
      validation: [{min: 1, max: 10, code: BadRetries}]
    - array: tags
      validation: [{minLength: 1, maxLength: 2, message: one or two tags}]
    - string: plain
      validation: [{regex: "^a"}]
    """
)


@pytest.mark.parametrize(
    ("given", "rule", "message", "fix", "code"),
    [
        (
            {"feature-id": "Abc"},
            "regex",
            "feature-id: 'Abc' does not match ^[a-z0-9-]+$ (must be kebab-case)",
            "pass -i feature-id=<text matching ^[a-z0-9-]+$>",
            "InvalidFeatureId",
        ),
        (
            {"feature-id": "ab"},
            "minLength",
            "feature-id: 'ab' has 2 characters, fewer than the minimum 3",
            "pass -i feature-id=<text of at least 3 characters>",
            None,
        ),
        (
            {"feature-id": "abcdef"},
            "maxLength",
            "feature-id: 'abcdef' has 6 characters, more than the maximum 5",
            "pass -i feature-id=<text of at most 5 characters>",
            None,
        ),
        (
            {"retries": "0"},
            "min",
            "retries: 0 is less than the minimum 1",
            "pass -i retries=<number >= 1>",
            "BadRetries",
        ),
        (
            {"retries": "10.5"},
            "max",
            "retries: 10.5 is greater than the maximum 10",
            "pass -i retries=<number <= 10>",
            "BadRetries",
        ),
        (
            {"tags": "[]"},
            "minLength",
            "tags: [] has 0 items, fewer than the minimum 1 (one or two tags)",
            "pass -i tags=<JSON array of at least 1 items>",
            None,
        ),
        (
            {"tags": "[1, 2, 3]"},
            "maxLength",
            "tags: [1, 2, 3] has 3 items, more than the maximum 2 (one or two tags)",
            "pass -i tags=<JSON array of at most 2 items>",
            None,
        ),
        ({"plain": "b"}, "regex", "plain: 'b' does not match ^a", "pass -i plain=<text matching ^a>", None),
    ],
)
def test_each_rule(given, rule, message, fix, code):
    problem = only(resolve_inputs(RULES, given, from_text=True)[1])
    assert problem == InputProblem(next(iter(given)), rule, message, fix, code)


@pytest.mark.parametrize(
    "given",
    [
        {"feature-id": "abc"},
        {"feature-id": "ab-de"},
        {"retries": "1"},
        {"retries": "10"},
        {"tags": '["x", "y"]'},
        {"plain": "a!"},
    ],
)
def test_values_on_the_limits_pass(given):
    assert resolve_inputs(RULES, given, from_text=True)[1] == []


def test_dollar_is_the_end_of_the_text_as_in_javascript():
    problem = only(resolve_inputs(RULES, {"feature-id": "abc\n"}, from_text=True)[1])
    assert problem.rule == "regex"


@pytest.mark.parametrize(
    ("pattern", "value", "passes"),
    [
        ("^[$]+$", "$$", True),
        ("^a\\$$", "a$", True),
        ("^[]$]$", "$", True),
        ("(?m)^a$", "a\nb", True),
        ("^a$", "a\n", False),
    ],
)
def test_dollar_rewriting_keeps_literal_dollars(pattern, value, passes):
    decls = declare(f"- string: s\n  validation: [{{regex: '{pattern}'}}]")
    assert (resolve_inputs(decls, {"s": value}, from_text=True)[1] == []) is passes


def test_a_pattern_that_would_backtrack_for_ever_is_matched_in_linear_time():
    # Python's own engine takes seconds per character added here (2**n paths); RE2 one pass.
    decls = declare("- string: s\n  validation: [{regex: '^(a+)+$'}]")
    problems = resolve_inputs(decls, {"s": "a" * 64 + "b"}, from_text=True)[1]
    assert [p.rule for p in problems] == ["regex"]
    assert resolve_inputs(decls, {"s": "a" * 64}, from_text=True)[1] == []


def test_a_pattern_linear_matching_cannot_take_is_reported_not_run():
    # `catalyst check` refuses it (C304); an IR made elsewhere still never runs it.
    decls = (ir.InputDecl("s", "string", validation=(ir.Rule("regex", "^(?=a).*$"),)),)
    [problem] = resolve_inputs(decls, {"s": "a"}, from_text=True)[1]
    assert "lookahead" in problem.message


def test_rules_for_other_types_do_not_apply():
    decls = (
        ir.InputDecl("s", "string", validation=(ir.Rule("min", 3), ir.Rule("minLength", "3"), ir.Rule("max", True))),
    )
    assert resolve_inputs(decls, {"s": "a"}, from_text=True) == ({"s": "a"}, [])


# -- everything together ----------------------------------------------------------------------

EVERYTHING = declare(
    """
    - string: feature-id
      required: true
      validation:
        - regex: "^[a-z0-9-]+$"
          code: InvalidFeatureId
        - minLength: 3
    - number: retry-count
      validation: [{min: 1}]
    - boolean: dry-run
    - enum: environment
      allowed: [dev, staging, production]
    - string: owner
      required: true
    - string: api-token
      secret: true
      validation: [{minLength: 10}]
    """
)


def test_all_problems_are_reported_together():
    given = {
        "feature-id": "A!",
        "retry-count": "0",
        "dry-run": "perhaps",
        "environment": "prod",
        "api-token": "hunter2",
        "envirnoment": "dev",
    }
    values, problems = resolve_inputs(EVERYTHING, given, from_text=True)
    assert [(p.input, p.rule) for p in problems] == [
        ("feature-id", "regex"),
        ("feature-id", "minLength"),
        ("retry-count", "min"),
        ("dry-run", "type"),
        ("environment", "allowed"),
        ("owner", "required"),
        ("api-token", "minLength"),
        ("envirnoment", "undeclared"),
    ]
    assert problems[0].code == "InvalidFeatureId"
    assert "envirnoment" not in values


def test_secret_values_never_appear_in_problems():
    _, problems = resolve_inputs(
        EVERYTHING, {"feature-id": "abc", "owner": "o", "api-token": "hunter2"}, from_text=True
    )
    problem = only(problems)
    assert problem.message == "api-token: <secret:api-token> has 7 characters, fewer than the minimum 10"
    assert "hunter2" not in problem.message + problem.fix


def test_undeclared_inputs():
    problem = only(resolve_inputs(EVERYTHING, {"feature-id": "abc", "owner": "o", "featur-id": "x"}, from_text=True)[1])
    assert problem == InputProblem(
        "featur-id",
        "undeclared",
        "featur-id: the playbook declares no input of that name",
        "did you mean 'feature-id'?",
    )
    far = only(resolve_inputs(STRING, {"zzz": "1"}, from_text=True)[1])
    assert far.fix == "the inputs are: s"
    none = only(resolve_inputs((), {"x": "1"}, from_text=False)[1])
    assert none.fix == "this playbook declares no inputs; remove it"


# -- -i key=value --------------------------------------------------------------------------------


def test_parse_assignments():
    values, problems = parse_assignments(["a=1", "url=https://x?y=z", "empty="])
    assert (values, problems) == ({"a": "1", "url": "https://x?y=z", "empty": ""}, [])


def test_parse_assignment_problems():
    values, problems = parse_assignments(["flag", "=hunter2", "a=1", "a=2", "a=3"])
    assert values == {"a": "1"}
    assert problems == [
        InputProblem("flag", "syntax", "-i flag: no '=' and so no value", "write -i flag=<value>"),
        InputProblem("", "syntax", "an -i assignment has no name before '='", "write -i name=value"),
        InputProblem(
            "a",
            "duplicate",
            "the input `a` was given 3 times (values not shown: it may be a secret, and no playbook says it is not)",
            "pass -i a=... once, with the value you mean",
        ),
    ]
    assert not any("hunter2" in p.message or "2" in p.message for p in problems)


def test_an_input_given_twice_is_named_with_its_values_unless_it_is_secret():
    decls = declare(
        """
        - string: a
        - string: token
          secret: true
        """
    )
    values, problems = parse_assignments(["a=b", "token=s1", "a=c", "token=s2", "x=1", "x=2"], decls)
    assert values == {"a": "b", "token": "s1", "x": "1"}
    assert [p.message for p in problems] == [
        "the input `a` was given twice, as 'b' and as 'c'",
        "the input `token` was given twice (values not shown: it is a secret input)",
        "the input `x` was given twice (values not shown: it may be a secret, and no playbook says it is not)",
    ]
    assert all(p.rule == "duplicate" and p.fix.startswith(f"pass -i {p.input}=... once") for p in problems)


# -- the untyped input (`any`) ----------------------------------------------------------------------

ANY = declare("- any: v")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3", 3),
        ("[1, \"x\"]", [1, "x"]),
        ('{"k": null}', {"k": None}),
        ("hello world", "hello world"),
        ('"3"', "3"),
        ("", ""),
        ("[1,", "[1,"),
    ],
)
def test_an_any_input_from_text_is_json_when_it_is_json_else_the_text(text, expected):
    values, problems = resolve_inputs(ANY, {"v": text}, from_text=True)
    assert problems == []
    assert values["v"] == expected and type(values["v"]) is type(expected)


def test_an_any_input_takes_any_value_and_still_refuses_json_nested_too_deeply():
    assert resolve_inputs(ANY, {"v": {"a": [1, True]}}, from_text=False)[0]["v"] == {"a": [1, True]}
    problem = only(resolve_inputs(ANY, {"v": "[" * 70 + "]" * 70}, from_text=True)[1])
    assert "nested too deeply" in problem.message
