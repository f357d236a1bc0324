"""What-if plans (docs/plan-format.md) shown: text and Markdown reports (their differences: plan_diff.py).

The plan dict comes from the what-if (runtime/lifecycle/planner.py), with its canonical
JSON, hash and counts (runtime/lifecycle/plan_data.py); nothing here changes what it
says, only how it is shown. The Markdown report is the Jinja2 template
`templates/plan.md.j2`, fed a small view prepared here: the limits that keep a
pull-request comment short for a 100-step plan are applied in Python, the layout in
the template.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Mapping, Sequence

from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl._internal.terminal_text import safe_text
from catalyst_dsl._internal.markdown_text import code_span as md_code, fence
from catalyst_dsl.runtime.lifecycle.plan_data import CHANGE_TYPES, count_changes, predicted_failure, walk

#: The mark of each change type, after Terraform's.
SYMBOLS = {
    "create": "+",
    "modify": "~",
    "delete": "-",
    "unknown": "?",
    "no-op": "=",
    "read": "=",
    "skipped": "↷",
    "would-pause": "⏸",
    "refused": "✗",
}
#: The mark of a change type this version does not know (a plan from a newer engine).
OTHER_SYMBOL = "•"


# -- walking and counting -------------------------------------------------------------------------------------


def summary_counts(plan: Mapping[str, Any]) -> str:
    """`2 to create, 1 to modify, 0 to delete, 3 unknown, 1 would pause` (and `, N refused` when any are)."""
    counts = {**dict.fromkeys(CHANGE_TYPES, 0), **(plan.get("summary") or count_changes(plan.get("steps") or ()))}
    parts = [
        f"{counts['create']} to create",
        f"{counts['modify']} to modify",
        f"{counts['delete']} to delete",
        f"{counts['unknown']} unknown",
        f"{counts['would-pause']} would pause",
    ]
    if counts["refused"]:
        parts.append(f"{counts['refused']} refused")
    return ", ".join(parts)


def summary_line(plan: Mapping[str, Any]) -> str:
    return f"Plan: {summary_counts(plan)}."


def _short_json(value: Any, limit: int) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _lines(text: str | None) -> list[str]:
    return text.splitlines() if text else []


# -- text --------------------------------------------------------------------------------------------------------


#: Lines of an AI step's prompt a terminal plan shows (the JSON plan has all of it).
PROMPT_LINES = 8


def render_text(plan: Mapping[str, Any]) -> str:
    """The plan for a terminal: what it runs as, one line per step with its mark, details under it, the summary.

    Every line is made safe for the terminal (file contents and names may hold escape
    sequences); the whole plan is shown, diffs included: the terminal has no length limit.
    """

    playbook = plan["playbook"]
    lines = [f"What-if plan for {playbook['name']} ({playbook['file']})"]
    inputs = plan.get("inputs") or {}
    if inputs:
        lines.append("  inputs: " + ", ".join(f"{name}={_short_json(inputs[name], 60)}" for name in sorted(inputs)))
    allowed = (plan.get("permissions") or {}).get("allowedWritePaths")
    lines.append("  may write: " + ("anywhere in the project" if allowed is None else ", ".join(allowed) or "nothing"))
    if plan.get("locks"):
        lines.append("  locks: " + ", ".join(plan["locks"]))
    for conflict in plan.get("conflicts") or ():
        lines.append(f"  conflict: {conflict['resource']} is held by live run {conflict['run']}")
    lines.append("")
    steps = plan.get("steps") or ()
    for step in steps:
        _text_step(step, "", lines)
    if not steps:
        lines.append("(no steps)")
    lines += ["", summary_line(plan)]
    failing = predicted_failure(plan)
    if failing is not None:
        lines.append(f"A run would fail at {failing['step']}: {failing['fails']['code']}.")
    return "".join(safe_text(line) + "\n" for line in lines)


def _text_step(step: Mapping[str, Any], pad: str, lines: list[str]) -> None:
    change = step["change"]
    head = f"{pad}{SYMBOLS.get(change, OTHER_SYMBOL)} {step['step']} ({step['action']})"
    if change not in SYMBOLS:
        head += f" [{change}]"
    if step.get("conditional"):
        head += " [conditional]"
    lines.append(head)
    inner = pad + "    "
    lines += [f"{inner}# {line}" for line in _lines(step.get("reason"))]
    approval = step.get("approval")
    if approval:
        roles = ", ".join(approval.get("roles") or ())
        message = _lines(approval.get("message"))
        lines.append(f"{inner}approval{' by ' + roles if roles else ''}" + (f": {message[0]}" if message else ""))
        lines += [f"{inner}  {line}" for line in message[1:]]
    confinement = step.get("confinement")
    if confinement:
        may, never = ", ".join(confinement["mayWrite"]), ", ".join(confinement["neverWrites"])
        lines.append(f"{inner}confined: may write {may}; never {never}")
    for check in step.get("checks") or ():
        holds = {True: "holds", False: "does not hold"}.get(check["holds"], "unknown now")
        lines.append(f"{inner}{check['when']}: {' '.join(_lines(check['check']))} ({holds})")
    for write in step.get("writes") or ():
        if write.get("allowed") is False:
            lines.append(f"{inner}{SYMBOLS['refused']} {write['path']}: {write.get('refusal') or 'refused'}")
    if step.get("request"):
        lines.append(f"{inner}request: {_short_json(step['request'], 160)}")
    prompt = _lines(step.get("prompt"))
    if prompt:
        shown = prompt[:PROMPT_LINES] + (
            [f"… ({len(prompt) - PROMPT_LINES} more lines)"] if len(prompt) > PROMPT_LINES else []
        )
        lines.append(f"{inner}prompt: {shown[0]}")
        lines += [f"{inner}        {line}" for line in shown[1:]]
    for effect in step.get("effects") or ():
        line = f"{inner}{SYMBOLS.get(effect['change'], OTHER_SYMBOL)} {effect['path']}"
        lines.append(line + (f"  # {' '.join(_lines(effect['reason']))}" if effect.get("reason") else ""))
        lines += [f"{inner}    {diff_line}" for diff_line in _lines(effect.get("diff"))]
    for child in step.get("steps") or ():
        _text_step(child, inner, lines)


# -- Markdown --------------------------------------------------------------------------------------------------

#: The limits that keep a pull-request comment readable, and far under GitHub's 65,536
#: characters: a reviewer reads the attention list and the table; the JSON plan has the rest.
MD_ATTENTION_EACH = 20  # steps listed per kind under "Needs attention"
MD_DIFF_BUDGET = 200  # lines of diff blocks (each block costs its lines plus 6)
MD_DIFF_EACH = 60  # lines shown of one diff
MD_DIFF_BLOCK = 6  # lines a diff block adds around its diff
MD_HIDDEN_NAMED = 20  # files named in the "not shown" line
MD_LINE_CHARS = 200  # characters of one diff line
MD_TEXT_CHARS = 300  # characters of a reason or an approval message
MD_NAME_CHARS = 80  # characters of a step name
MD_TABLE_OPEN = 30  # the step table starts open up to this many rows
MD_TABLE_ROWS = 200  # rows of the step table (a row is up to about 250 characters)

#: What needs a reviewer first, in this order: what destroys or fails, what the plan
#: cannot know, what waits for a person.
ATTENTION = (("refused", "refused"), ("delete", "delete"), ("unknown", "unknown"), ("would-pause", "would pause"))


def render_markdown(plan: Mapping[str, Any], marker: bool = True, playbook: Any = None) -> str:
    """The plan as a pull-request comment (GitHub-flavoured Markdown); the same plan gives the same bytes.
    `marker=False`: without the hidden first line, for a comment that has its own (pr_comment.py).
    `playbook`: the planned playbook's IR, whose Mermaid flow of the steps the plan acts in
    (report/graph) is shown under "Flow", which GitHub draws; or, when GitHub would refuse
    to draw it, the command that draws it."""
    view = markdown_view(plan)
    if not marker:
        view["marker"] = None
    view["flow"] = view["flow_note"] = None
    paths = acting_paths(plan) if playbook is not None else []
    if paths:
        from catalyst_dsl.report.graph import mermaid_flow

        flow = mermaid_flow(playbook, only=paths)
        if flow is None:
            view["flow_note"] = too_large_to_draw(str((plan.get("playbook") or {}).get("file") or "PLAYBOOK"), None)
        else:
            view["flow"] = flow if flow.endswith("\n") else flow + "\n"
    return _environment().get_template("plan.md.j2").render(view=view)


def too_large_to_draw(playbook_file: str, steps: int | None) -> str:
    """The sentence said in place of a Mermaid flow GitHub would refuse to draw, with the
    command that draws it; `steps`: how many steps it was to show, when that is known."""
    import shlex

    from catalyst_dsl.report.graph import MERMAID_MAX_ARROWS, MERMAID_MAX_TEXT

    # Quoted for the shell: the command is meant to be pasted, and a file name may hold a
    # space, a `;` or a `$(...)`.
    command = md_code(f"catalyst graph {shlex.quote(playbook_file)} --format svg -o flow.svg")
    counted = f"{steps} steps changed; " if steps is not None else ""
    return (
        f"Too large for GitHub's Mermaid to draw ({counted}it draws at most {MERMAID_MAX_ARROWS} arrows"
        f" and {MERMAID_MAX_TEXT:,} characters): {command} draws the whole flow.\n"
    )


#: The changes of a step entry that do nothing a reviewer weighs: left out of the flow.
_QUIET_CHANGES = frozenset({"no-op", "read", "skipped"})


def acting_paths(plan: Mapping[str, Any]) -> list[str]:
    """The paths of the plan's steps that would change something, pause, or cannot be known."""
    return [
        str(entry["path"])
        for entry, _depth in walk(plan.get("steps") or ())
        if entry.get("change") not in _QUIET_CHANGES and isinstance(entry.get("path"), str)
    ]


@functools.cache
def _environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("catalyst_dsl.report", "templates"),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(md=md_text, code=md_code, html=md_html)
    return env


#: In a marker, percent-encoded: `%` itself, a `-` before another (an HTML comment cannot
#: hold `--`), `<`, `>` and ASCII white space; every other character is itself.
_MARKER_ENCODED = LazyPattern(r"%|-(?=-)|[<>\t\n\v\f\r ]")


def marker_text(file: str) -> str:
    """A file's path as a report's hidden marker (`<!-- catalyst-plan FILE -->`) holds it, so
    that a sticky comment is found again: never able to close the HTML comment, and two
    paths never give one marker (`a--b` and `a-b` used to)."""
    return _MARKER_ENCODED.sub(lambda m: f"%{ord(m.group()):02X}", file)


def markdown_view(plan: Mapping[str, Any]) -> dict[str, Any]:
    """What the Markdown template shows, cut to the limits above; strings are raw (the template escapes)."""
    playbook = plan["playbook"]
    entries = list(walk(plan.get("steps") or ()))
    inputs = plan.get("inputs") or {}
    hash_ = plan.get("planHash")
    return {
        "marker": marker_text(playbook["file"]),
        "name": playbook["name"],
        "file": playbook["file"],
        "counts": summary_counts(plan),
        "inputs": [{"name": name, "value": _short_json(inputs[name], 60)} for name in sorted(inputs)],
        "hash": hash_[:12] if hash_ else None,
        "attention": _attention([step for step, _depth in entries]),
        "conflicts": list(plan.get("conflicts") or ()),
        "rows": [
            {
                "path": step["path"],
                "step": clip(step["step"], MD_NAME_CHARS),
                "action": step["action"],
                "change": step["change"],
                "symbol": SYMBOLS.get(step["change"], OTHER_SYMBOL),
                "conditional": bool(step.get("conditional")),
                "depth": depth,
            }
            for step, depth in entries[:MD_TABLE_ROWS]
        ],
        "rows_more": max(0, len(entries) - MD_TABLE_ROWS),
        "step_count": len(entries),
        "confined": [
            {
                "path": step["path"],
                "step": clip(step["step"], MD_NAME_CHARS),
                "may": step["confinement"]["mayWrite"],
                "never": step["confinement"]["neverWrites"],
            }
            for step, _depth in entries
            if step.get("confinement")
        ],
        "table_open": len(entries) <= MD_TABLE_OPEN,
        **_diff_blocks([step for step, _depth in entries]),
    }


def _attention_kind(step: Mapping[str, Any]) -> str | None:
    """The one kind a step is listed under, the most serious first; None when it needs no attention."""
    change = step["change"]
    if change == "refused" or any(w.get("allowed") is False for w in step.get("writes") or ()):
        return "refused"
    if change == "delete" or any(e.get("change") == "delete" for e in step.get("effects") or ()):
        return "delete"
    return change if change in ("unknown", "would-pause") else None


def _attention(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    kinds: dict[str, list[Mapping[str, Any]]] = {kind: [] for kind, _label in ATTENTION}
    for step in steps:
        kind = _attention_kind(step)
        if kind is not None:
            kinds[kind].append(step)
    groups = []
    for kind, label in ATTENTION:
        found = kinds[kind]
        if not found:
            continue
        entries = []
        for step in found[:MD_ATTENTION_EACH]:
            approval = step.get("approval") or {}
            entries.append(
                {
                    "path": step["path"],
                    "step": clip(step["step"], MD_NAME_CHARS),
                    "action": step["action"],
                    "conditional": bool(step.get("conditional")),
                    "reason": clip(step.get("reason"), MD_TEXT_CHARS),
                    "deletes": [e["path"] for e in step.get("effects") or () if e.get("change") == "delete"],
                    "refusals": [
                        {"path": w["path"], "refusal": clip(w.get("refusal"), MD_TEXT_CHARS)}
                        for w in step.get("writes") or ()
                        if w.get("allowed") is False
                    ],
                    "roles": list(approval.get("roles") or ()),
                    "message": clip(approval.get("message"), MD_TEXT_CHARS),
                }
            )
        groups.append({"kind": kind, "label": label, "entries": entries, "more": len(found) - len(entries)})
    return groups


def _diff_blocks(steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The file changes shown as diffs, in plan order while the budget lasts, and the files past it."""
    budget = MD_DIFF_BUDGET
    shown: list[dict[str, Any]] = []
    hidden: list[str] = []
    for step in steps:
        for effect in step.get("effects") or ():
            if not effect.get("diff"):
                continue
            lines = effect["diff"].splitlines()
            take = min(len(lines), MD_DIFF_EACH, budget - MD_DIFF_BLOCK)
            if take < min(len(lines), 3):  # a diff cut to a line or two says nothing
                budget = 0
                hidden.append(effect["path"])
                continue
            budget -= take + MD_DIFF_BLOCK
            text = "\n".join(clip(line, MD_LINE_CHARS) for line in lines[:take])
            shown.append(
                {
                    "file": effect["path"],
                    "change": effect["change"],
                    "symbol": SYMBOLS.get(effect["change"], OTHER_SYMBOL),
                    "path": step["path"],
                    "step": clip(step["step"], MD_NAME_CHARS),
                    "diff": text,
                    "fence": fence(text),
                    "cut": len(lines) - take,
                }
            )
    return {"diffs": shown, "hidden": hidden[:MD_HIDDEN_NAMED], "hidden_more": max(0, len(hidden) - MD_HIDDEN_NAMED)}


def clip(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


#: Characters with a meaning in GitHub Markdown inline text; `|` ends a table cell.
_MD_SPECIAL = LazyPattern(r"([\\`*_\[\]<>|~&#])")


#: `@name` and `#12` (`owner/repo#12` too) that GitHub would read as a mention or a reference:
#: a backslash does not stop it (it reads them after the Markdown), so the comment would
#: notify whoever a playbook's text names, or mark another repository's issue as referenced.
_GITHUB_LINKS = LazyPattern(r"([@#])(?=[A-Za-z0-9])")
#: Between the sign and the name: drawn as nothing, it keeps GitHub from reading a link.
ZERO_WIDTH_SPACE = "\u200b"


def md_text(text: str | None) -> str:
    """`text` shown as it is in Markdown (in a table cell too): specials escaped, newlines as
    `<br>`, no mention or issue reference."""
    if not text:
        return ""
    escaped = _GITHUB_LINKS.sub(r"\1" + ZERO_WIDTH_SPACE, _MD_SPECIAL.sub(r"\\\1", text))
    # Controls written as escapes (`\u202e`): a bidi control would show the text around it reordered.
    return "<br>".join(safe_text(line) for line in escaped.splitlines())


def md_html(text: str | None) -> str:
    """`text` inside an HTML tag of the Markdown (a `<summary>`): escaped, and on one line,
    since a blank line ends the HTML block and what follows would be read as Markdown."""
    import html

    # Text, not an attribute: quotes stay, so no `&#x27;` whose `#` would look like a reference.
    shown = safe_text(" ".join((text or "").splitlines()))
    return _GITHUB_LINKS.sub(r"\1" + ZERO_WIDTH_SPACE, html.escape(shown, quote=False))
