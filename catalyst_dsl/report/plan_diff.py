"""What changed between two what-if plans, step by step, as Terraform shows a plan.

The golden test (pytest_plugin.py), the pull-request comment (pr_comment.py) and
`catalyst run --expect-plan` show the difference between an approved plan and today's
with this module: its entries are paired by `address` (docs/plan-format.md), never by
position, so a step inserted near the top is one added step, not a change to every step
after it. A step is added, removed or changed (with each field that differs, old -> new);
the plan-wide fields (inputs, permissions, locks, conflicts, outputs) are compared the
same way. A step that only moved (a new `path`, or a new line in an unnamed step's `step`)
is counted, not listed: a position is not something the run does.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, Mapping

from catalyst_dsl._internal.records import record
from catalyst_dsl._internal.terminal_text import safe_text
from catalyst_dsl.runtime.lifecycle.plan_data import FORMAT, UNNAMED_STEP, VERSION, walk

#: What a regenerated golden plan is made with (for the messages below).
REGENERATE = "pytest --update-golden (or catalyst run NAME --what-if --what-if-report FILE)"

#: The plan-wide fields compared, in the order they are shown; `summary` and `planHash`
#: follow from the steps, `format` and `version` are checked before anything is compared.
PLAN_FIELDS = ("inputs", "permissions", "locks", "conflicts", "outputs")
#: The fields of a step entry that say where it is, not what it does.
POSITION_FIELDS = frozenset({"path", "step", "address", "steps"})
#: Characters of one value shown in a changed field's line.
VALUE_CHARS = 100


@record
class FieldChange:
    name: str  # `change`, `config.path`, `effects[docs/a.md].diff`
    old: Any
    new: Any


@record
class StepChange:
    kind: str  # "add", "change" or "remove"
    address: str
    action: str
    path: str  # where the step is in the plan it is shown from (the new one, or the old for a removal)
    change: str  # its change type in that plan
    fields: tuple[FieldChange, ...] = ()


@record
class PlanDiff:
    steps: tuple[StepChange, ...]
    plan: tuple[FieldChange, ...]  # the plan-wide fields that differ
    moved: int  # steps that only moved

    @property
    def empty(self) -> bool:
        return not self.steps and not self.plan

    def count(self, kind: str) -> int:
        changed = len(self.plan) if kind == "change" else 0
        return changed + sum(1 for step in self.steps if step.kind == kind)


def format_problem(golden: Mapping[str, Any], shown: str) -> str | None:
    """Why `golden` cannot be compared with a plan made today (another format or version, or
    step entries that are not objects in lists), or None."""
    if golden.get("format") == FORMAT and golden.get("version") == VERSION:
        return _shape_problem(golden, shown)
    version = golden.get("version")
    written = (
        f"plan format {version}" if isinstance(version, int) and golden.get("format") == FORMAT else "no known format"
    )
    return (
        f"{shown} is in {written}, and this catalyst makes plans in format {VERSION} (its steps have stable "
        f"addresses, docs/plan-format.md); regenerate it with {REGENERATE} and review the new file"
    )


def _shape_problem(plan: Mapping[str, Any], shown: str) -> str | None:
    """Why the plan's step entries cannot be walked (a list that is not one, an entry that is
    not an object), or None: an edited or damaged file, named rather than a traceback."""
    pending = [plan.get("steps", [])]
    while pending:
        steps = pending.pop()
        if not isinstance(steps, list) or not all(isinstance(entry, dict) for entry in steps):
            return (
                f"{shown} is not a what-if plan: its `steps` (and each entry's) must be a list of objects; "
                f"regenerate it with {REGENERATE} and review the new file"
            )
        pending.extend(entry["steps"] for entry in steps if entry.get("steps") is not None)
    return None


def explain(expected_text: str, actual: Mapping[str, Any], shown: str) -> str:
    """What a reader is shown when a plan differs from the approved one in `expected_text`
    (named `shown`): its changes (render_text), or why they cannot be told."""
    try:
        expected = json.loads(expected_text)
    except ValueError:
        expected = None
    if not isinstance(expected, dict):
        return safe_text(f"{shown} is not a what-if plan (not a JSON object); make it again with {REGENERATE}") + "\n"
    problem = format_problem(expected, shown)
    if problem is not None:
        return safe_text(problem) + "\n"
    return render_text(diff_plans(expected, actual))


def diff_plans(old: Mapping[str, Any], new: Mapping[str, Any]) -> PlanDiff:
    """The difference from plan `old` (the approved one) to plan `new`, both of this format."""
    before = _entries(old)
    after = _entries(new)
    listed: list[StepChange] = []
    moved = 0
    for address, entry in after.items():
        was = before.get(address)
        if was is None:
            listed.append(_step_change("add", entry, ()))
            continue
        fields = tuple(_differences(_what_it_does(was), _what_it_does(entry)))
        if fields:
            listed.append(_step_change("change", entry, fields))
        elif (was.get("path"), was.get("step")) != (entry.get("path"), entry.get("step")):
            moved += 1
    removed = [_step_change("remove", entry, ()) for address, entry in before.items() if address not in after]
    plan = tuple(
        change for name in PLAN_FIELDS for change in _differences({name: old.get(name)}, {name: new.get(name)})
    )
    return PlanDiff(tuple(_in_place(listed, removed, list(before), list(after))), plan, moved)


def _entries(plan: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The plan's step entries by address, in plan order (nested ones after their parent)."""
    found: dict[str, Mapping[str, Any]] = {}
    for entry, _depth in walk(plan.get("steps") or ()):
        address = entry.get("address")
        found.setdefault(address if isinstance(address, str) else str(entry.get("path")), entry)
    return found


def _step_change(kind: str, entry: Mapping[str, Any], fields: tuple[FieldChange, ...]) -> StepChange:
    return StepChange(
        kind,
        str(entry.get("address") or entry.get("path")),
        str(entry.get("action")),
        str(entry.get("path")),
        str(entry.get("change")),
        fields,
    )


def _in_place(
    listed: list[StepChange], removed: list[StepChange], old_order: list[str], new_order: list[str]
) -> Iterator[StepChange]:
    """The changes in the new plan's order, each removed step after the step it followed in the old plan."""
    kept = set(new_order)
    after: dict[str | None, list[StepChange]] = {}
    removed_at = {step.address: step for step in removed}
    previous: str | None = None
    for address in old_order:
        if address in removed_at:
            after.setdefault(previous, []).append(removed_at[address])
        elif address in kept:
            previous = address
    by_address = {step.address: step for step in listed}
    yield from after.get(None, ())
    for address in new_order:
        if address in by_address:
            yield by_address[address]
        yield from after.get(address, ())


def _what_it_does(entry: Mapping[str, Any]) -> dict[str, Any]:
    fields = {key: value for key, value in entry.items() if key not in POSITION_FIELDS}
    own = entry.get("step")
    if isinstance(own, str) and UNNAMED_STEP.match(own):
        # An unnamed step's name is its action and line (`file-write@8`), which a line added
        # above it changes; where the plan quotes it (the message of its gate), it is the
        # step's own name, not a change.
        fields = _without_name(fields, own)
    return fields


def _without_name(value: Any, name: str, pattern: re.Pattern | None = None) -> Any:
    """`value` with the step's own name (as a whole: `shell@1`, never within `shell@12`) as `<this step>`."""
    if pattern is None:
        pattern = re.compile(r"(?<![\w-])" + re.escape(name) + r"(?!\d)")
    if isinstance(value, str):
        return pattern.sub("<this step>", value) if name in value else value
    if isinstance(value, dict):
        return {key: _without_name(item, name, pattern) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_name(item, name, pattern) for item in value]
    return value


def _differences(old: Any, new: Any, name: str = "") -> Iterator[FieldChange]:
    """The leaves that differ, named by their path: objects by key, lists of file entries by
    their file (`effects[docs/a.md]`), other lists as a whole."""
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            yield from _differences(old.get(key, _ABSENT), new.get(key, _ABSENT), f"{name}.{key}" if name else key)
        return
    if _by_file(old) and _by_file(new):
        old_files = {item["path"]: item for item in old}
        new_files = {item["path"]: item for item in new}
        for file in [*new_files, *(f for f in old_files if f not in new_files)]:
            yield from _differences(old_files.get(file, _ABSENT), new_files.get(file, _ABSENT), f"{name}[{file}]")
        return
    yield FieldChange(name, None if old is _ABSENT else old, None if new is _ABSENT else new)


#: A field one of the two plans does not have (shown as null).
_ABSENT = object()


def _by_file(value: Any) -> bool:
    """A list of entries that each name a distinct file (`effects`, `writes`)."""
    if not isinstance(value, list) or not all(isinstance(i, dict) and isinstance(i.get("path"), str) for i in value):
        return False
    return len({item["path"] for item in value}) == len(value)


# -- shown ----------------------------------------------------------------------------------------------------

SYMBOLS = {"add": "+", "change": "~", "remove": "-"}


def summary_line(diff: PlanDiff) -> str:
    return f"Plan: {diff.count('add')} to add, {diff.count('change')} to change, {diff.count('remove')} to remove."


def render_text(diff: PlanDiff) -> str:
    """The difference as lines, each step's first with its mark at the start (`+`, `~`, `-`), so
    that a `diff` code block colours them; the summary line last. Addresses and file names
    are the playbook's text, so a control character in them is written as its escape
    (`\\x1b`): the lines go to a terminal (pytest, `--expect-plan`) as they are; a Markdown
    fence is the caller's to make."""
    lines: list[str] = []
    for step in diff.steps:
        lines += _step_lines(step)
    for field in diff.plan:
        lines.append("~ " + _field_lines(field).lstrip())
    if diff.moved:
        lines.append(f"  ({diff.moved} step{'s' if diff.moved != 1 else ''} only moved: same address, new position)")
    if diff.empty:
        lines.append("  (no change to what the run would do)")
    lines += ["", summary_line(diff)]
    return "".join(safe_text(line) + "\n" for line in lines)


def _step_lines(step: StepChange) -> list[str]:
    mark, head = SYMBOLS[step.kind], f"{step.address} ({step.action})"
    if step.kind == "add":
        return [f"{mark} {head} will be added at {step.path}: {step.change}"]
    if step.kind == "remove":
        return [f"{mark} {head} removed (was {step.change})"]
    return [f"{mark} {head} changed:", *(_field_lines(field) for field in step.fields)]


def _field_lines(field: FieldChange) -> str:
    old, new = field.old, field.new
    if isinstance(old, str) and isinstance(new, str) and ("\n" in old or "\n" in new):
        # Text of several lines (a prompt, a file's diff): its first line that differs.
        old_lines, new_lines = old.splitlines(), new.splitlines()
        at = next(
            (i for i, pair in enumerate(zip(old_lines, new_lines)) if pair[0] != pair[1]),
            min(len(old_lines), len(new_lines)),
        )
        old_line = old_lines[at] if at < len(old_lines) else None
        new_line = new_lines[at] if at < len(new_lines) else None
        return f"    {field.name}, line {at + 1}: {_pair(old_line, new_line)}"
    if isinstance(old, list) and isinstance(new, list) and (len(old) > 1 or len(new) > 1):
        # A list (locks, outputs): what came in and what went, not two lists cut alike.
        added = [item for item in new if item not in old]
        gone = [item for item in old if item not in new]
        if added or gone:
            parts = [f"+ {_value(item)}" for item in added] + [f"- {_value(item)}" for item in gone]
            return f"    {field.name}: {', '.join(parts)}"
    return f"    {field.name}: {_pair(old, new)}"


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _pair(old: Any, new: Any) -> str:
    """`old -> new`, each cut to VALUE_CHARS around where they first differ: two long
    values that differ near their ends were cut before the difference and looked alike."""
    before = json.dumps(old, ensure_ascii=False, sort_keys=True)
    after = json.dumps(new, ensure_ascii=False, sort_keys=True)
    if len(before) <= VALUE_CHARS and len(after) <= VALUE_CHARS:
        return f"{before} -> {after}"
    same = 0
    for a, b in zip(before, after):
        if a != b:
            break
        same += 1
    start = max(0, same - VALUE_CHARS // 4)  # a little of what they share, for context
    return f"{_window(before, start)} -> {_window(after, start)}"


def _window(text: str, start: int) -> str:
    shown = text[start : start + VALUE_CHARS - 2]
    return ("…" if start else "") + shown + ("…" if start + len(shown) < len(text) else "")
