"""Step checks at run time: whether each predicate of a `requires:` or `ensures:` holds.

Files are read through the gateway, as a `file-read` step reads them: inside the project,
the run's scratch space or the resources, never elsewhere; in a what-if they are the files
as the earlier steps would have left them. A `command-output` program is run through the
gateway too, confined like a step's program, with no shell and no writes of its own.
"""

from __future__ import annotations

from typing import Any, Callable

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.actions.context import read_target
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.gateway import FileTooLarge
from catalyst_dsl.runtime.values.jsvalues import UNKNOWN, as_json_data, contains_unknown
from catalyst_dsl.runtime.engine.scope import RunEnv

#: Files larger than this are not searched by `file-contains` (as file-read refuses them).
MAX_CHECKED_BYTES = 50 * 1024 * 1024


@record
class Outcome:
    """One predicate tried: whether it holds (None: a what-if cannot know) and what it said."""

    check: ir.Check
    holds: bool | None
    shown: str  # the predicate with its values, as messages and plans show it
    why: str = ""


def failing(checks: ir.Checks, env: RunEnv, timeout: float | None) -> Outcome | None:
    """The first predicate that does not hold, or None when all do."""
    for check in checks.checks:
        outcome = evaluate(check, env, timeout)
        if outcome.holds is False:
            return outcome
    return None


def enforce(checks: ir.Checks | None, env: RunEnv, when: str, timeout: float | None) -> None:
    """Fail the step when one of the checks does not hold, with that check's own code or
    else the checks' code."""
    if checks is None:
        return
    failed = failing(checks, env, timeout)
    if failed is not None:
        index = checks.checks.index(failed.check)
        said = _said(failed.check, env)
        raise StepError(
            failed.check.code or checks.code,
            said
            or f"{when} check {index + 1} does not hold: {failed.shown}" + (f" ({failed.why})" if failed.why else ""),
            guidance="address what it says, then start a new run (a resume meets the same answer)"
            if said
            else f"the step's `{when}:` lists what must hold "
            + ("before it runs" if when == "requires" else "once it has run"),
            metadata={"check": index, "predicate": failed.check.kind, "when": when},
        )


def _said(check: ir.Check, env: RunEnv) -> str | None:
    """The check's own words for its failure (a dialect's, such as a rejected approval's
    reviewer and note), or None to show the predicate; words that cannot be filled in
    give way to the predicate rather than hiding the failure."""
    if check.message is None:
        return None
    from catalyst_dsl.runtime.values.evaluate import materialize, to_text

    try:
        return to_text(materialize(check.message, env)) or None
    except (StepError, LookupError, ValueError, TypeError):
        return None


def evaluate(check: ir.Check, env: RunEnv, timeout: float | None = None, *, simulated: bool = False) -> Outcome:
    """Whether `check` holds. `simulated` (a what-if): a program is never started, so
    what it would print is not known."""
    from catalyst_dsl.runtime.values.evaluate import materialize, to_text, truthy

    if check.kind in COMBINATORS:
        return _combined(check, [evaluate(c, env, timeout, simulated=simulated) for c in check.checks])
    args: dict[str, Any] = {e.key: materialize(e.value, env) for e in check.args.entries}
    if check.kind == "expression":
        text = check.args.entries[0].value
        shown = text.text if isinstance(text, ir.Tmpl) else str(args["expression"])
        value = args["expression"]
        return Outcome(check, None if value is UNKNOWN else truthy(value), shown)
    if contains_unknown(args):
        return Outcome(check, None, f"{check.kind} of a value the plan cannot know")
    if check.kind == "json-schema":
        return _json_schema(check, args)
    if check.kind == "command-output":
        argv = [to_text(a) for a in args.get("argv") or []]
        if simulated:
            return Outcome(check, None, "command-output: " + " ".join(argv), "a what-if never starts a program")
        return _command_output(check, argv, args, env, timeout)
    path = to_text(args["path"])
    data = _read(env, path)
    if check.kind == "file-exists":
        return Outcome(check, data is not None, f"file-exists: {path}", "" if data is not None else "no such file")
    pattern = to_text(args["regex"])
    shown = f"file-contains: {path} ~ /{pattern}/"
    if data is None:
        return Outcome(check, False, shown, "no such file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Outcome(check, False, shown, "not UTF-8 text")
    found = _compiled(pattern, shown).search(text) is not None
    return Outcome(check, found, shown, "" if found else "no match")


#: Predicates made of others, in three-valued logic: a what-if may not know one part.
COMBINATORS = ("all", "any", "not")


def _combined(check: ir.Check, parts: list[Outcome]) -> Outcome:
    """`all`, `any` or `not` of the parts' outcomes (every part is evaluated: a check with
    side effects has none, and the message names each part's result)."""
    shown = f"{check.kind}({', '.join(p.shown for p in parts)})"
    values = [p.holds for p in parts]
    if check.kind == "not":
        holds = None if values[0] is None else not values[0]
        return Outcome(check, holds, shown, "it holds" if holds is False else "")
    if check.kind == "all":
        holds = False if False in values else None if None in values else True
        failed = next((p for p in parts if p.holds is False), None)
        return Outcome(
            check, holds, shown, f"{failed.shown}: {failed.why or 'does not hold'}" if failed is not None else ""
        )
    holds = True if True in values else None if None in values else False
    return Outcome(check, holds, shown, "none holds" if holds is False else "")


def _command_output(check: ir.Check, argv: list[str], args: dict, env: RunEnv, timeout: float | None) -> Outcome:
    from catalyst_dsl.runtime.values.evaluate import to_text

    expect, match = args.get("expect"), args.get("match")
    shown = (
        "command-output: "
        + " ".join(argv)
        + (f" = {to_text(expect)!r}" if expect is not None else f" ~ /{to_text(match)}/")
    )
    if not argv:
        raise StepError("InvalidConfig", "a command-output check needs at least the program name in argv")
    import shutil  # here, where a program is run: shutil loads zlib, bz2 and lzma (about 1.5 ms of every what-if)

    if shutil.which(argv[0]) is None and "/" not in argv[0]:
        raise StepError(
            "ConditionUnavailable",
            f"the program `{argv[0]}` of a check is not installed or not on PATH",
            guidance="install it, or check something else; a check that cannot run is not false",
        )
    outcome = env.gateway.run_process(
        argv, declared_writes=(), cwd=None, env={}, timeout=timeout, on_output=lambda stream, line: None
    )
    if outcome.timed_out:
        raise StepError("StepTimeout", f"the check `{' '.join(argv)}` was stopped after the step's timeout")
    if outcome.exit_code != 0:
        return Outcome(check, False, shown, f"it exited with code {outcome.exit_code}")
    if expect is not None:
        holds = outcome.stdout.rstrip() == to_text(expect).rstrip()
    else:
        holds = _compiled(to_text(match), shown).search(outcome.stdout) is not None
    return Outcome(check, holds, shown, "" if holds else f"it printed {_short(outcome.stdout)!r}")


def _json_schema(check: ir.Check, args: dict) -> Outcome:
    from catalyst_dsl.json_schemas import SchemaUnusable, problems

    value = check.args.get("value")
    shown = "json-schema: " + (value.text if isinstance(value, ir.Tmpl) else _short(repr(args.get("value"))))
    try:
        found = problems(as_json_data(args.get("schema")), as_json_data(args.get("value")))
    except SchemaUnusable as error:
        raise StepError("InvalidConfig", f"the schema of {shown} cannot be used: {error}") from None
    if not found:
        return Outcome(check, True, shown)
    (where, message), more = found[0], len(found) - 1
    return Outcome(check, False, shown, f"at {where}: {message}" + (f" (and {more} more)" if more else ""))


def _read(env: RunEnv, written: str) -> bytes | None:
    try:
        return env.gateway.read_file(read_target(env.gateway, written), MAX_CHECKED_BYTES)
    except FileTooLarge:
        raise StepError(
            "FileTooLarge", f"'{written}' is larger than {MAX_CHECKED_BYTES // 1024 // 1024} MiB, too large to check"
        ) from None
    except (IsADirectoryError, NotADirectoryError):
        return None
    except OSError as error:
        raise StepError("FileReadError", f"cannot read '{written}' for a check: {error.strerror or error}") from None


def _compiled(pattern: str, shown: str):
    from catalyst_dsl.syntax.regex import PatternError, compile_pattern

    try:
        return compile_pattern(pattern)
    except PatternError as error:
        raise StepError("InvalidConfig", f"the pattern of {shown} cannot be used: {error.message}") from None


def _short(text: str, width: int = 60) -> str:
    text = text.strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def plan_view(outcomes: list[tuple[str, Outcome]], shown: Callable[[Any], Any]) -> list[dict[str, Any]]:
    """The checks as a what-if plan lists them: when, the predicate, and whether it holds now."""
    return [
        {"when": when, "check": shown(o.shown), "holds": "unknown" if o.holds is None else o.holds}
        for when, o in outcomes
    ]
