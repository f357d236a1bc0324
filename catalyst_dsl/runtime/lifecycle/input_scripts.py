"""Inputs validated by a script (`validation: [{script: ...}]`, docs/language.md).

The script is JavaScript, run with node as a `script` step is: the body of an async
function whose `get('value')` (and `get('<input name>')`) reads the input's value. The rule
holds when the script returns a truthy value. It runs when a run starts, once the inputs'
other rules pass, before any lock is taken or step runs, confined like every step's
program: it may write nowhere but its own temp folder. The value reaches it on stdin as
JSON, never as code. A what-if starts no program: its plan lists each script it would run.
"""

from __future__ import annotations

from typing import Any, Mapping

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.inputs import InputProblem, shown_value
from catalyst_dsl.runtime.values.jsvalues import truthy

#: The rule's key, in `validation:` as in the IR.
SCRIPT = "script"
#: How long one validation script may run, in seconds.
TIMEOUT_SECONDS = 60.0


def script_rules(playbook: ir.Playbook) -> list[tuple[ir.InputDecl, int, ir.Rule]]:
    """Each input's script rules: (the input, the rule's place in its `validation`, the rule)."""
    return [
        (decl, k, rule) for decl in playbook.inputs for k, rule in enumerate(decl.validation) if rule.kind == SCRIPT
    ]


def plan_scripts(playbook: ir.Playbook, recorder) -> None:
    """The plan's entries for the scripts a run would start before its steps: unknown, since
    a what-if starts no program."""
    for decl, k, rule in script_rules(playbook):
        entry = recorder.open(f"inputs/{decl.name}/validation/{k}", f"{decl.name} (validation script)", SCRIPT)
        entry["config"] = {"code": rule.value}
        entry["change"] = "unknown"
        entry["reason"] = (
            f"validates the input {decl.name} before any step runs; a what-if starts no program, "
            "so whether the value passes is not known"
        )


def check_scripts(context, playbook: ir.Playbook, values: Mapping[str, Any], from_text: bool) -> list[InputProblem]:
    """The problems the inputs' scripts find, each script run once with its input's value."""
    rules = [(d, k, r) for d, k, r in script_rules(playbook) if values.get(d.name) is not None]
    if not rules:
        return []
    import shutil  # here: a run whose inputs have no script does not load it

    node = shutil.which("node")
    if node is None:
        return [
            InputProblem(
                decl.name,
                SCRIPT,
                f"{decl.name}: its validation script cannot run: node is not installed (or not on PATH)",
                "install Node.js, or remove the script rule",
            )
            for decl, _, _ in rules
        ]
    scratch = context.state_dir / "tmp" / "input-validation"
    gateway = context.new_gateway(playbook, [], scratch, context.options.performer or context.real_performer(None))
    problems = []
    try:
        for decl, k, rule in rules:
            problem = _checked(context, gateway, node, decl, k, rule, values[decl.name], from_text)
            if problem is not None:
                problems.append(problem)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return problems


def _checked(context, gateway, node: str, decl: ir.InputDecl, k: int, rule: ir.Rule, value, from_text: bool):
    from catalyst_dsl.runtime.actions.script import outcome_of, run_javascript

    said: list[str] = []  # what the script printed, shown only when it fails
    try:
        outcome, reports = run_javascript(
            gateway,
            node,
            str(rule.value),
            {"value": value, decl.name: value},
            declared_writes=(),
            cwd=None,
            env={},
            timeout=TIMEOUT_SECONDS,
            on_output=lambda stream, line: said.append(line),
        )
        if outcome.timed_out:
            raise StepError("StepTimeout", f"it ran longer than {TIMEOUT_SECONDS:g}s")
        passed = truthy(outcome_of(outcome, reports)["result"])
    except StepError as error:
        message = f"{decl.name}: its validation script (rule {k + 1}) failed: {error.message}"
        return InputProblem(decl.name, SCRIPT, context.masker.mask_text(message), "fix the script", rule.code)
    if passed:
        return None
    message = f"{decl.name}: {shown_value(decl, value)} does not pass its validation script (rule {k + 1})"
    if rule.message:
        message += f" ({rule.message})"
    where = f"-i {decl.name}=<a value the script accepts>" if from_text else f"{decl.name} a value the script accepts"
    return InputProblem(decl.name, SCRIPT, context.masker.mask_text(message), f"pass {where}", rule.code)
