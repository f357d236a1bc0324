"""Input resolution: the values a run starts with, checked before any step runs (the playbook's `inputs:`).

For each declared input, in declaration order: the given value (coerced from text when
it comes from `-i key=value`, type-checked when a calling playbook passes it) or else the
default; then the transform; then `allowed` and every validation rule. All failures are
collected, never only the first, each with the input, the rule, a message that stands
alone and the fix. The run starts only when there are none.

Decisions the language leaves open:

- An optional input that is neither given nor defaulted is in the result with the value
  None, so `{{x}}` resolves to null instead of failing as undefined.
- A given None (a calling playbook passing null) counts as not given.
- Defaults go through the same transform and rules as given values: a default that
  breaks its own rules is reported like any other value.
- A templated default (`default: "{{feature-id}}-notes"`) is rendered by
  `render_default(value, resolved)`, where `resolved` holds the inputs declared before it;
  a rendered string is coerced like command-line text. Without a renderer the
  template's text is kept as it is and not checked (it is not the value yet).
- From text: numbers are decimal (`3`, `-2.5`, `1e3`), an integral one becomes an int,
  NaN and infinities are refused; booleans are `true/false/1/0/yes/no` in any case;
  arrays and objects are JSON only (no comma-separated lists: `a,b` could as well be
  one string).
- Typed values (from a calling playbook) are never coerced: `"3"` for a number input is
  a type error there. Tuples are accepted as arrays and come back as lists.
- `regex` rules search like JavaScript's `RegExp.test`, where real playbooks come from:
  `$` means the end of the text, so `abc\\n` does not pass `^[a-z]+$` (Python's `$` would
  let a trailing newline through).
- `minLength`/`maxLength` apply to strings and arrays, `min`/`max` to numbers. A rule
  whose value has the wrong type was reported by the compiler and is skipped here.
- Values of secret inputs never appear in messages: they show as `<secret:name>`.
"""

from __future__ import annotations

import json
import math
import re
from typing import Callable, Mapping, Sequence

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl._internal.terminal_text import safe_text
from catalyst_dsl._internal.records import factory, record
from catalyst_dsl.runtime.values.secrets import secret_placeholder
from catalyst_dsl.syntax.source import LONE_SURROGATE

#: Renders a templated default; gets the template and the inputs resolved so far.
RenderDefault = Callable[[ir.Value, Mapping[str, object]], object]


@record
class InputProblem:
    """One reason the inputs cannot start a run.

    `rule` is one of: required, type, allowed, regex, minLength, maxLength, min, max,
    undeclared (resolve_inputs); syntax, duplicate (parse_assignments).
    """

    input: str
    rule: str
    message: str
    fix: str
    code: str | None = None  # the rule's PascalCase code, when the playbook declares one


def parse_assignments(
    pairs: Sequence[str], decls: Sequence[ir.InputDecl] | None = None
) -> tuple[dict[str, str], list[InputProblem]]:
    """`-i key=value` strings as a mapping; the value is everything after the first `=`, kept as written.

    An input given twice is a problem that quotes its values when `decls` (the playbook's
    inputs, when known) declares it and not as secret; otherwise the values are not shown.
    """
    values: dict[str, str] = {}
    repeated: dict[str, list[str]] = {}
    problems: list[InputProblem] = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            if sep:  # `=value` without a name; the value is not quoted, it could be a secret
                problems.append(
                    InputProblem("", "syntax", "an -i assignment has no name before '='", "write -i name=value")
                )
            else:
                shown = safe_text(pair)  # a name can hold a newline or a terminal's escape: never as it is
                problems.append(
                    InputProblem(pair, "syntax", f"-i {shown}: no '=' and so no value", f"write -i {shown}=<value>")
                )
            continue
        if LONE_SURROGATE.search(pair):
            # Bytes that are not UTF-8 on the command line arrive as lone surrogates: no text
            # can be made of them, nor saved. The value is not quoted: it could be a secret.
            name = key if not LONE_SURROGATE.search(key) else "an -i name"
            problems.append(
                InputProblem(
                    name,
                    "syntax",
                    f"{safe_text(name)}: the value is not UTF-8 text (it holds bytes no character is made of)",
                    "pass the value as UTF-8 text",
                )
            )
            continue
        if key in values:
            if key not in repeated:
                repeated[key] = [values[key]]
                problems.append(InputProblem(key, "duplicate", "", ""))  # its words once all are counted
            repeated[key].append(value)
            continue
        values[key] = value
    if repeated:
        declared = {decl.name: decl for decl in decls} if decls is not None else {}
        problems = [
            _given_again(p.input, repeated[p.input], declared) if p.rule == "duplicate" else p for p in problems
        ]
    return values, problems


def _given_again(key: str, given: Sequence[str], declared: Mapping[str, ir.InputDecl]) -> InputProblem:
    """The input `key` given more than once: which values, unless it is (or may be) a secret."""
    times = "twice" if len(given) == 2 else f"{len(given)} times"
    name = safe_text(key)
    fix = f"pass -i {name}=... once, with the value you mean"
    decl = declared.get(key)
    if decl is None or decl.secret:
        why = "it is a secret input" if decl is not None else "it may be a secret, and no playbook says it is not"
        return InputProblem(key, "duplicate", f"the input `{name}` was given {times} (values not shown: {why})", fix)
    shown = [shown_value(decl, value) for value in given]
    listed = ", as ".join(shown[:-1]) + " and as " + shown[-1]
    return InputProblem(key, "duplicate", f"the input `{name}` was given {times}, as {listed}", fix)


def resolve_inputs(
    decls: Sequence[ir.InputDecl],
    given: Mapping[str, object],
    *,
    from_text: bool,
    render_default: RenderDefault | None = None,
) -> tuple[dict[str, object], list[InputProblem]]:
    """The value of every declared input, in declaration order, and every problem found.

    `from_text`: the values are command-line strings to coerce; otherwise they are typed
    values passed by a calling playbook. When problems are returned the values are for
    reporting only.
    """
    resolver = _Resolver(from_text, render_default)
    for decl in decls:
        resolver.resolve(decl, given)
    declared = [d.name for d in decls]
    for name in given:
        if name not in resolver.values:
            from catalyst_dsl.diagnostics.suggest import suggest  # only for a name no input has

            hint = suggest(name, declared)
            if hint:
                fix = hint
            elif declared:
                fix = f"the inputs are: {', '.join(declared)}"
            else:
                fix = "this playbook declares no inputs; remove it"
            resolver.problems.append(
                InputProblem(name, "undeclared", f"{safe_text(name)}: the playbook declares no input of that name", fix)
            )
    return resolver.values, resolver.problems


# -- resolution ----------------------------------------------------------------------------


@record(frozen=False)
class _Resolver:
    from_text: bool
    render_default: RenderDefault | None
    values: dict[str, object] = factory(dict)
    problems: list[InputProblem] = factory(list)

    def resolve(self, decl: ir.InputDecl, given: Mapping[str, object]) -> None:
        raw = given.get(decl.name)
        if raw is not None:
            from_default = False
            value, error = (
                _coerce_text(decl, raw) if self.from_text and isinstance(raw, str) else _check_typed(decl, raw)
            )
        elif decl.default is not None:
            from_default = True
            templated = _has_template(decl.default)
            if templated and self.render_default is None:
                self.values[decl.name] = self._default(decl.default)
                return
            raw = self._default(decl.default)
            text_like = templated and isinstance(raw, str) and decl.type not in ("string", "enum")
            value, error = _coerce_text(decl, raw) if text_like else _check_typed(decl, raw)
        else:
            self.values[decl.name] = None
            if decl.required:
                self._problem(decl, "required", f"{decl.name}: the input is required and was not given", None, None)
            return
        if error is not None:
            self.values[decl.name] = raw
            self._problem(
                decl, "type", f"{decl.name}: {shown_value(decl, raw, from_default)} {error}", None, None, from_default
            )
            return
        if decl.transform and isinstance(value, str):
            value = transform(value, decl.transform)
        self.values[decl.name] = value
        self._check_allowed(decl, value, from_default)
        for rule in decl.validation:
            failure = _check_rule(rule, value)
            if failure is not None:
                complaint, hint = failure
                message = f"{decl.name}: {shown_value(decl, value, from_default)} {complaint}"
                if rule.message:
                    message += f" ({rule.message})"
                self._problem(decl, rule.kind, message, hint, rule.code, from_default)

    def _default(self, value: ir.Value) -> object:
        """A default as plain data; templates rendered, or as their text when there is no renderer."""
        if isinstance(value, ir.Lit):
            return value.value
        if isinstance(value, ir.ListV):
            return [self._default(item) for item in value.items]
        if isinstance(value, ir.MapV):
            return {e.key: self._default(e.value) for e in value.entries}
        if isinstance(value, ir.Tmpl):
            return value.text if self.render_default is None else self.render_default(value, dict(self.values))
        raise TypeError(f"an input default cannot be a {type(value).__name__}")

    def _check_allowed(self, decl: ir.InputDecl, value: object, from_default: bool) -> None:
        if decl.allowed is None or any(_same(value, a) for a in decl.allowed):
            return
        choices = [str(a) for a in decl.allowed]
        message = f"{decl.name}: {shown_value(decl, value, from_default)} is not one of: {', '.join(choices)}"
        hint = "|".join(choices)
        from catalyst_dsl.diagnostics.suggest import suggest  # only for a value not allowed

        close = suggest(value, choices) if isinstance(value, str) and not decl.secret else None
        self._problem(decl, "allowed", message, hint, None, from_default, close)

    def _problem(
        self,
        decl: ir.InputDecl,
        rule: str,
        message: str,
        hint: str | None,
        code: str | None,
        from_default: bool = False,
        extra: str | None = None,
    ) -> None:
        """Record a problem; `hint` is what to write as the value in the fix (None: the declared type's)."""
        hint = hint or _hint(decl, self.from_text)
        fix = (
            f"pass -i {decl.name}={hint}"
            if self.from_text
            else f"pass {decl.name}: {hint} in the calling step's inputs"
        )
        if from_default:
            fix = f"fix the playbook's default, or {fix}"
        if extra:
            fix = f"{extra} {fix}"
        self.problems.append(InputProblem(decl.name, rule, message, fix, code))


def _has_template(value: ir.Value) -> bool:
    if isinstance(value, ir.Tmpl):
        return True
    if isinstance(value, ir.ListV):
        return any(_has_template(i) for i in value.items)
    if isinstance(value, ir.MapV):
        return any(_has_template(e.value) for e in value.entries)
    return False


# -- types -----------------------------------------------------------------------------------

#: An integer's and a decimal's text (compiled when a number input is first given as text).
_INTEGER = LazyPattern(r"[+-]?[0-9]+")
_DECIMAL = LazyPattern(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


_BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def _coerce_text(decl: ir.InputDecl, text: str) -> tuple[object, str | None]:
    """`text` read as the declared type; the value and None, or None and what is wrong."""
    kind = decl.type
    if kind in ("string", "enum"):
        return text, None
    if kind == "number":
        stripped = text.strip()
        if len(stripped) > MAX_NUMBER_DIGITS:
            return None, f"has more than {MAX_NUMBER_DIGITS} characters, too many for a number"
        if _INTEGER.fullmatch(stripped):
            return int(stripped), None
        if _DECIMAL.fullmatch(stripped):
            number = float(stripped)
            if not math.isfinite(number):
                return None, "is too large a number"
            return (int(number) if number.is_integer() else number), None
        return None, "is not a number"
    if kind == "boolean":
        value = _BOOLEANS.get(text.strip().lower())
        return (None, "is not a boolean (true/false, yes/no, 1/0)") if value is None else (value, None)
    if kind in ("array", "object"):
        try:
            value = json.loads(text, parse_constant=_refuse_constant)
        except RecursionError:
            return None, f"is nested too deeply (at most {MAX_DEPTH} levels)"
        except ValueError:
            return None, f"is not a JSON {kind}"
        if _depth(value) > MAX_DEPTH:
            return None, f"is nested too deeply (at most {MAX_DEPTH} levels)"
        return _check_typed(decl, value)
    if kind == "any":
        # Untyped: JSON when the text is JSON (a number, a list, an object…), else the text.
        try:
            value = json.loads(text, parse_constant=_refuse_constant)
        except (ValueError, RecursionError):
            return text, None
        if _depth(value) > MAX_DEPTH:
            return None, f"is nested too deeply (at most {MAX_DEPTH} levels)"
        return value, None
    return text, None


#: Limits on values from the command line: beyond them a value is a mistake or an attack,
#: and would only fail later (a snapshot cannot hold it) with a worse message.
MAX_NUMBER_DIGITS = 300
MAX_DEPTH = 64


def _depth(value: object) -> int:
    """How deeply lists and objects nest in `value` (iteratively: no recursion limit)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        current, level = pending.pop()
        if isinstance(current, (list, dict)):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                return level
            pending.extend((item, level + 1) for item in (current.values() if isinstance(current, dict) else current))
    return deepest


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def _check_typed(decl: ir.InputDecl, value: object) -> tuple[object, str | None]:
    """`value` if it has the declared type (arrays as lists); else None and what is wrong."""
    kind = decl.type
    if kind in ("string", "enum"):
        ok = isinstance(value, str)
    elif kind == "number":
        if isinstance(value, float) and not math.isfinite(value):
            return None, "is not a finite number"
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind == "boolean":
        ok = isinstance(value, bool)
    elif kind == "array":
        ok = isinstance(value, (list, tuple))
        value = list(value) if ok else value  # type: ignore[arg-type]
    elif kind == "object":
        ok = isinstance(value, Mapping) and all(isinstance(k, str) for k in value)
        value = dict(value) if ok else value  # type: ignore[arg-type]
    else:
        ok = True
    if ok:
        return value, None
    article = "an" if kind[0] in "aeiou" else "a"
    return None, f"is not {article} {'string' if kind == 'enum' else kind}"


def _same(a: object, b: object) -> bool:
    """Equality that does not take True for 1."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


# -- rules -----------------------------------------------------------------------------------


def _check_rule(rule: ir.Rule, value: object) -> tuple[str, str] | None:
    """None when `value` passes `rule` (or the rule does not apply to it); else what is wrong and a hint for the fix."""
    limit = rule.value
    if rule.kind == "regex":
        if not isinstance(value, str) or not isinstance(limit, str):
            return None
        from catalyst_dsl.syntax.regex import PatternError, compile_pattern

        try:
            pattern = compile_pattern(limit)
        except PatternError as exc:
            return f"cannot be checked: the playbook's regex cannot be used ({exc.message})", "<value>"
        return None if pattern.search(value) else (f"does not match {limit}", f"<text matching {limit}>")
    if not isinstance(limit, (int, float)) or isinstance(limit, bool):
        return None
    if rule.kind in ("minLength", "maxLength"):
        if isinstance(value, str):
            size, unit, hint = len(value), "characters", "<text of {} {} characters>"
        elif isinstance(value, list):
            size, unit, hint = len(value), "items", "<JSON array of {} {} items>"
        else:
            return None
        if rule.kind == "minLength" and size < limit:
            return f"has {size} {unit}, fewer than the minimum {_num(limit)}", hint.format("at least", f"{_num(limit)}")
        if rule.kind == "maxLength" and size > limit:
            return f"has {size} {unit}, more than the maximum {_num(limit)}", hint.format("at most", f"{_num(limit)}")
        return None
    if rule.kind in ("min", "max"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        if rule.kind == "min" and value < limit:
            return f"is less than the minimum {_num(limit)}", f"<number >= {_num(limit)}>"
        if rule.kind == "max" and value > limit:
            return f"is greater than the maximum {_num(limit)}", f"<number <= {_num(limit)}>"
    return None


# -- transforms ------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """The words of `text`: split at spaces, underscores and hyphens, and where case changes.

    `My Feature_ID` -> My, Feature, ID; `XMLHttpRequest` -> XML, Http, Request; digits stay
    with what precedes them (`v2Api` -> v2, Api). Other characters are kept: `a.b!` stays one
    word, for the validation rules to judge rather than to be silently dropped.
    """
    found: list[str] = []
    for chunk in re.split(r"[\s_-]+", text):
        start = 0
        for i in range(1, len(chunk)):
            prev, c = chunk[i - 1], chunk[i]
            after = chunk[i + 1] if i + 1 < len(chunk) else ""
            if c.isupper() and (prev.islower() or prev.isdigit() or (prev.isupper() and after.islower())):
                found.append(chunk[start:i])
                start = i
        if chunk:
            found.append(chunk[start:])
    return found


def transform(text: str, how: str) -> str:
    """`text` in kebab-case, snake-case or camel-case."""
    parts = words(text)
    if how == "kebab-case":
        return "-".join(p.lower() for p in parts)
    if how == "snake-case":
        return "_".join(p.lower() for p in parts)
    if how == "camel-case":
        return "".join(p.lower() if n == 0 else p[:1].upper() + p[1:].lower() for n, p in enumerate(parts))
    raise ValueError(f"unknown transform '{how}'")


# -- messages --------------------------------------------------------------------------------


def shown_value(decl: ir.InputDecl, value: object, from_default: bool = False) -> str:
    """`value` as a message quotes it, its control characters escaped (a newline in a
    value given with -i cannot forge a line of the error); a secret's placeholder instead
    of its value."""
    if decl.secret:
        text = secret_placeholder(decl.name)
    elif isinstance(value, str):
        text = "'" + (value if len(value) <= 60 else value[:59] + "…") + "'"
    else:
        text = json.dumps(value, default=str, ensure_ascii=False)
        text = text if len(text) <= 60 else text[:59] + "…"
    text = safe_text(text)
    return f"the default {text}" if from_default else text


def _hint(decl: ir.InputDecl, from_text: bool) -> str:
    """What to write after `name=` (or `name:`) for a value of the declared type."""
    if decl.allowed:
        return "|".join(str(a) for a in decl.allowed)
    if from_text and decl.type == "array":
        return """'["a", "b"]' (a JSON array; comma-separated lists are not read)"""
    if from_text and decl.type == "object":
        return """'{"key": "value"}' (a JSON object)"""
    return {
        "number": "<number>",
        "boolean": "true|false",
        "array": "[a, b]",
        "object": "{key: value}",
        "any": "<JSON or text>",
    }.get(decl.type, "<text>")


def _num(n: int | float) -> str:
    """A rule's limit as written: 50, not 50.0 or 5e+01."""
    return str(int(n)) if isinstance(n, int) or n.is_integer() else repr(n)
