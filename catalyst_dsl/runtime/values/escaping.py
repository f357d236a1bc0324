"""Values into scripts: by reference in bash, escaped for their context in PowerShell.

`render_script` renders a step's script. In bash (`bash`, `test`), each value becomes a
reference to an environment variable, `"${CATALYST_V_0}"`, and travels in the
environment (`Script.env`), so it is data however it is written (`syntax/shell/bash/`).
In PowerShell, `syntax/shell/` finds where every placeholder stands: where PowerShell
expands variables the value is a reference too, `${env:CATALYST_V_0}`; in single quotes
(where nothing expands) it is escaped by doubling the quote characters, the whole rule.

Values are first turned into text as everywhere else (`to_text`: numbers as JavaScript
writes them, true/false, null, arrays joined with commas, objects as JSON), then escaped.
`${{ raw(x) }}` is the author's opt-out: the text goes in unescaped.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.env import Env
from catalyst_dsl.runtime.values.evaluate import EvaluationError, materialize, part_value, template_of
from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.runtime.values.jsvalues import UNKNOWN, is_number, to_text
from catalyst_dsl.runtime.values.quoting import PS_DOUBLE, PS_HEREDOC, PS_SINGLE
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.source import LONE_SURROGATE

# syntax/shell/ (the lexers and analyses, about 4 ms of imports) is imported by the
# functions that read a script, at the first script that places a value: a run whose
# scripts are the author's text alone never needs it.
if TYPE_CHECKING:
    from catalyst_dsl.syntax.shell import Slot

# The patterns are compiled on first use, not at import: every run imports this module,
# and a what-if escapes few values, if any.
#: A number PowerShell reads as one (NaN and Infinity would be command names).
_ps_number = LazyPattern(r"-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?", re.ASCII)


def escape(value: object, slot: Slot) -> str:
    """`value` as text that stands for exactly itself in `slot` of a PowerShell script."""
    from catalyst_dsl.syntax.shell import Context

    text = to_text(value)
    _representable(text)
    context = slot.context
    if context is Context.UNSAFE:
        raise refusal(slot.problem, slot.help)
    if context in (Context.HEREDOC, Context.HEREDOC_QUOTED):
        _inside_body(text, slot)
    if context is Context.WORD:
        number = is_number(value) and not isinstance(value, bool) and _ps_number.fullmatch(text)
        return text if number else "'" + text.translate(PS_SINGLE) + "'"
    if context is Context.SINGLE:
        return text.translate(PS_SINGLE)
    if context is Context.DOUBLE:
        return text.translate(PS_DOUBLE)
    return text.translate(PS_HEREDOC) if context is Context.HEREDOC else text


def _representable(text: str) -> None:
    if "\0" in text:
        raise StepError(
            "UnsafeValue",
            "a value for a script holds a NUL character, which no shell string can hold",
            guidance="pass binary data through a file (file-write, then read it in the script)",
        )
    if not text.isascii() and LONE_SURROGATE.search(text):  # ASCII holds no surrogate: no pattern to compile
        raise StepError(
            "UnsafeValue",
            "a value for a script is not valid Unicode text (it holds a lone surrogate)",
            guidance="pass the value through a file, or fix its source",
        )


def _inside_body(text: str, slot: Slot) -> None:
    """Refuse a value that would end its here-string early (a line that starts with the
    delimiter, as PowerShell reads `'@` and `"@`)."""
    lines = text.split("\n")
    if slot.before is None or slot.after is None:
        # Another placeholder shares the line, so its whole text is not known here: any
        # line holding the delimiter might end the body.
        candidates = [slot.delimiter] if any(slot.delimiter in line for line in lines) else []
    else:
        candidates = [slot.before + lines[0], *lines[1:]]
        candidates[-1] += slot.after
    for line in candidates:
        if line.lstrip().startswith(slot.delimiter):
            raise StepError(
                "UnsafeValue",
                f"a value would end its here-document early: it holds a line '{slot.delimiter}'",
                guidance="choose a delimiter the value cannot contain, or pass the value in `env:`",
            )


class Script(str):
    """A rendered script that knows where its values are: `values` holds the (start, end)
    offsets of each escaped value, so later rewriting of the author's text (`temp://`
    paths, `actions/process.scratch_paths`) leaves the values alone; `env` holds the
    values a bash script reads by reference, by the name of their variable."""

    values: tuple[tuple[int, int], ...]
    env: dict[str, str]

    def __new__(cls, pieces: list[tuple[str, bool]], env: dict[str, str] | None = None) -> "Script":
        script = super().__new__(cls, "".join(text for text, _ in pieces))
        spans, at = [], 0
        for text, is_value in pieces:
            if is_value:
                spans.append((at, at + len(text)))
            at += len(text)
        script.values = tuple(spans)
        script.env = env or {}
        return script


def refusal(problem: str, help: str, verb: str | None = "stands") -> StepError:
    """The error of a run that meets what `catalyst check` reports as C822: a value that
    stands `problem` (`verb` None: `problem` is the whole sentence, a use of a variable)."""
    message = f"a value {verb} {problem}" if verb is not None else problem
    return StepError(
        "UnsafeTemplate",
        f"{message}; it cannot be used there",
        guidance=help + " (`catalyst check` reports this as C822)",
    )


def _refused(analysis) -> StepError | None:
    """The run's refusal of the first thing `analysis` refuses, or None."""
    refused = analysis.refusals
    if not refused:
        return None
    first = refused[0]
    return refusal(first.problem, first.help, verb="is" if first in analysis.slots else None)


def render_script(value: ir.Value, env: Env, language: str, given: frozenset = frozenset()) -> object:
    """The script of a step with every placeholder escaped for where it stands. `given`: the
    names of the step's `env:` entries that hold a value (`ir.nodes.computed_keys`)."""
    if not isinstance(value, (ir.Tmpl, ir.ListV)) and not (given and isinstance(value, ir.Lit)):
        # No placeholder and no `env:` value: the author's text, as every branch below gives it.
        return materialize(value, env)
    from catalyst_dsl.syntax.shell import ARGV, BASH, POWERSHELL, bash_analysis, raw_argument, script_slots

    if language == ARGV:
        return render_argv(value, env)
    if isinstance(value, ir.Lit) and isinstance(value.value, str) and given and language == BASH:
        error = _refused(bash_analysis(value.value, given=given))
        if error is not None:
            raise error
        return value.value
    if not isinstance(value, ir.Tmpl) or language not in (BASH, POWERSHELL):
        return materialize(value, env)
    parsed = template_of(value)
    if parsed.errors:
        error = parsed.errors[0]
        raise EvaluationError(error.message, error.start, error.end)
    if language == BASH:
        return _by_reference(value, parsed.parts, env, given)
    slots: tuple[Slot, ...] | None = None  # lexed once a value is to be escaped (a what-if may know none)
    placed = 0
    pieces: list[tuple[str, bool]] = []
    values: dict[str, str] = {}
    for part in parsed.parts:
        if isinstance(part, ast.TextPart):
            pieces.append((part.text, False))
            continue
        got = part_value(part, env)
        if got is UNKNOWN:
            return UNKNOWN  # what-if: the script is not known until the value is
        if raw_argument(part) is not None:
            pieces.append((to_text(got), False))  # trusted: it is the author's text
        else:
            if slots is None:
                slots = script_slots(value.text, language, parsed.parts)
            reference = _ps_reference(got, slots[placed], values)
            pieces.append((reference, False) if reference is not None else (escape(got, slots[placed]), True))
        placed += 1
    return Script(pieces, values)


def _ps_reference(value: object, slot: Slot, values: dict[str, str]) -> str | None:
    """A PowerShell value by reference, `${env:CATALYST_V_n}`, where PowerShell expands a
    variable (a bare argument, double quotes, an expandable here-string); None where it
    does not (single quotes) or where the value is a number that stays one, so `escape`
    writes it. The value goes to `values`, the script's environment."""
    from catalyst_dsl.syntax.shell import Context
    from catalyst_dsl.syntax.shell.bash.findings import REFERENCE

    if slot.context not in (Context.WORD, Context.DOUBLE, Context.HEREDOC):
        return None
    text = to_text(value)
    if slot.context is Context.WORD and is_number(value) and not isinstance(value, bool) and _ps_number.fullmatch(text):
        return None
    _representable(text)
    name = REFERENCE.format(len(values))
    values[name] = text
    return "${env:" + name + "}"


def _by_reference(value: ir.Tmpl, parts: tuple[ast.Part, ...], env: Env, given: frozenset = frozenset()) -> object:
    """A bash script with each value as a reference and the values in `Script.env`."""
    from catalyst_dsl.syntax.shell import bash_analysis, raw_argument
    from catalyst_dsl.syntax.shell.bash.findings import REFERENCE

    raw: list[str] = []
    values: dict[str, str] = {}
    for part in parts:
        if isinstance(part, ast.TextPart):
            continue
        got = part_value(part, env)
        if got is UNKNOWN:
            return UNKNOWN  # what-if: the script is not known until the value is
        if raw_argument(part) is not None:
            raw.append(to_text(got))  # trusted: it is the author's text
        else:
            text = to_text(got)
            _representable(text)
            values[REFERENCE.format(len(values))] = text
    analysis = bash_analysis(value.text, parts, tuple(raw), given)
    for slot, text in zip(analysis.slots, values.values()):
        if slot.option_of and text.startswith("-"):
            raise _option_value(slot.option_of)
    error = _refused(analysis)
    if error is not None:
        raise error
    if analysis.script is None and not values:  # no value placed: the author's text, raw parts included
        return Script([(_joined(parts, raw), False)])
    return Script([(analysis.script, False)], values)


class Argv(list):
    """The words of an argv step, with the values its `bash -c` code reads by reference."""

    env: dict[str, str]

    def __init__(self, words: list, env: dict[str, str]) -> None:
        super().__init__(words)
        self.env = env


def render_argv(value: ir.Value, env: Env) -> object:
    """An argv step's words. Each word is one argument, so a value is data, unless the
    program reads that argument as code or a program to run (`syntax/shell/programs`):
    there it is refused; the code of `bash -c` gets its values by reference."""
    if not isinstance(value, ir.ListV):
        return materialize(value, env)
    from catalyst_dsl.syntax.shell.bash.refs import argv_analysis
    from catalyst_dsl.syntax.shell.programs.options import option_program

    words, refused, code = argv_analysis(map(ir.text_or_parts, value.items))
    out: list = []
    values: dict[str, str] = {}
    for i, item in enumerate(value.items):
        if i == code and isinstance(item, ir.Tmpl):
            rendered = _by_reference(item, template_of(item).parts, env)
            if rendered is UNKNOWN:
                return UNKNOWN
            out.append(str(rendered))
            values.update(getattr(rendered, "env", {}))
            continue
        if isinstance(item, ir.Tmpl) and i in refused:
            raise refusal(
                refused[i],
                "a value cannot be code or name the program that runs: pass it as an argument "
                "of the program, or in `env:`",
                verb="is",
            )
        word = materialize(item, env)
        if isinstance(item, ir.Tmpl) and isinstance(word, str) and word.startswith("-") and words[i] is None:
            program = option_program(words, i)
            if program is not None:
                raise _option_value(program)
        out.append(word)
    return Argv(out, values)


def _option_value(program: str) -> StepError:
    return StepError(
        "UnsafeValue",
        f"a value starting with '-' would be read by `{program}` as an option, and some of its options run programs",
        guidance=f"write `--` before the value in the script (`{program} ... -- {{{{ v }}}}`), "
        "or check the value first",
    )


def _joined(parts: tuple[ast.Part, ...], raw: list[str]) -> str:
    texts = iter(raw)
    return "".join(p.text if isinstance(p, ast.TextPart) else next(texts) for p in parts)
