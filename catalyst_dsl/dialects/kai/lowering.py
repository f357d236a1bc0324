"""A read kai playbook lowered into the IR (A5): its inputs, one AI step per kai step with
its checks, gates and error policy, and parallel groups.
"""

from __future__ import annotations

import os

from catalyst_dsl.diagnostics.ids import FILE_NAME_MISMATCH, KAI_PROJECT_GRANT
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.kai.conditions import ensures, requires
from catalyst_dsl.dialects.kai.model import (
    AGENT_TOOLS,
    COMMAND,
    DIALECT,
    FEATURE_PATTERN,
    GRANTS,
    KAI_NAME,
    TRIGGER_CODES,
    KaiDocument,
    KaiStep,
)
from catalyst_dsl.dialects.kai.templates import Template, references
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.source import SourceFile


def lower(document: KaiDocument, source: SourceFile, sink: DiagnosticSink) -> ir.Playbook:
    inputs = _inputs(document)
    declared = {i.name for i in inputs}
    lowered = [_step(step, declared) for step in document.steps]
    steps = _parallel(document.steps, lowered)
    at = document.name.span if document.name is not None else document.span
    # In its folder kai addresses a playbook by its file stem and never compares it with
    # `name` (A1); a kai file elsewhere is named by `name`, like a native one.
    stem = os.path.basename(source.path).rsplit(".", 1)[0]
    in_folder = _in_kai_folder(source.path)
    written = document.name.text if document.name is not None and KAI_NAME.match(document.name.text) else None
    name = stem if in_folder or written is None else written
    if in_folder and written is not None and written != stem:
        sink.report(
            FILE_NAME_MISMATCH,
            f"the playbook '{document.name.text}' is in the file '{os.path.basename(source.path)}'",
            document.name.span,
            help=f"kai runs it as '{stem}': rename the file to {document.name.text}.yaml"
            + (f", or the playbook to '{stem}'" if KAI_NAME.match(stem) else ""),
        )
    sink.report(
        KAI_PROJECT_GRANT,
        "the steps' agents may write anywhere in the project (kai gives them every tool):"
        " the playbook is granted the project root",
        at,
        help="this is what kai does; review the steps' commands before running it",
    )
    return ir.Playbook(
        name=name,
        description=document.description,
        owner=None,
        dialect=DIALECT,
        file=source.path,
        inputs=inputs,
        allowed_write_paths=tuple(ir.Lit(p, span=at) for p in GRANTS),
        steps=steps,
        one_run_per=("feature",),
        span=document.span,
    )


def _in_kai_folder(path: str) -> bool:
    from catalyst_dsl.dialects import registry

    dialect = registry.by_place(path)
    return dialect is not None and dialect.name == DIALECT


def _inputs(document: KaiDocument) -> tuple[ir.InputDecl, ...]:
    feature_rule = ir.Rule(
        "regex",
        FEATURE_PATTERN,
        "InvalidFeature",
        "the feature is one path segment: letters, digits, '.', '_' and '-', not '.' or '..'",
    )
    inputs = []
    for arg in document.args:
        rules = (feature_rule,) if arg.name == "feature" else ()
        # `feature` roots every condition's path: the run always needs it (A4.1).
        required = arg.required or arg.name == "feature"
        # An optional arg that is not given is empty text in the command (A4.1).
        default = None if required else ir.Lit("", span=arg.span)
        inputs.append(
            ir.InputDecl(
                arg.name, "string", arg.description or None, required, default, validation=rules, span=arg.span
            )
        )
    if all(a.name != "feature" for a in document.args):
        inputs.append(
            ir.InputDecl(
                "feature",
                "string",
                "the feature the run works on (kai's implicit argument)",
                True,
                validation=(feature_rule,),
                span=document.span,
            )
        )
    return tuple(inputs)


def _step(step: KaiStep, declared: set[str]) -> ir.Step:
    from catalyst_dsl.ir import types as t

    span = step.span
    entries = [
        ir.Entry("prompt", Template().add_text("Feature: ").add_ref("feature").done(span, t.STRING), span=span),
        ir.Entry("tools", ir.ListV(tuple(ir.Lit(tool) for tool in AGENT_TOOLS)), span=span),
    ]
    if step.command is not None and COMMAND.match(step.command.text):  # else reported by the reader
        entries.insert(0, ir.Entry("command", _command(step, declared), span=step.command.span))
    if step.model is not None:
        entries.append(ir.Entry("model", ir.Lit(step.model.text, span=step.model.span), span=step.model.span))
    condition = ir.Lit(False, span=step.autonomy.span) if step.skipped else None
    gate = None
    if step.autonomy is not None and step.autonomy.text == "gate_always":
        # The author asked for a person before this step: autonomous mode does not answer (A4.5, C-3).
        gate = ir.Gate(
            "before", options=ir.GATE_OPTIONS, policy=ir.Lit("human", span=step.autonomy.span), span=step.autonomy.span
        )
    return ir.Step(
        action="ai-prompt",
        config=ir.MapV(tuple(entries), span=span),
        name=step.id.text if step.id else None,
        condition=condition,
        error_policy=_policy(step),
        gate=gate,
        approved=True,
        requires=requires(step),
        ensures=ensures(step),
        span=span,
        action_span=step.command.span if step.command else span,
        name_span=step.id.span if step.id else None,
    )


def _command(step: KaiStep, declared: set[str]) -> ir.Tmpl:
    """`<command> <args>` (A4.6): the args' `{{ name }}` as references to the inputs."""
    from catalyst_dsl.ir import types as t

    built = Template().add_text(step.command.text)
    args = step.args.text.strip() if step.args is not None else ""
    if args:
        built.add_text(" ")
        offset = len(step.args.text) - len(step.args.text.lstrip())
        cursor = 0
        for ref in references(step.args, None):
            start, end = ref.start - offset, ref.end - offset
            built.add_text(args[cursor:start])
            # An undeclared name is reported already; it stays as text, as kai leaves it.
            built.add_ref(ref.name) if ref.name in declared else built.add_text(args[start:end])
            cursor = end
        built.add_text(args[cursor:])
    # At the command, where a missing command file is reported (C635).
    return built.done(step.command.span, t.STRING)


def _policy(step: KaiStep) -> ir.ErrorPolicy | None:
    """A false precondition pauses the run, outside the error policy (A4.3 step 2); the
    triggers come before the policy (A4.8); `gate_on_breaking` always asks."""
    if step.error_policy is None:
        return None
    span = step.error_policy.span
    default = {
        "stop": ir.PolicyAction("Stop", span=span),
        "retry_once": ir.PolicyAction("Stop", 1, span=span),
        "gate": ir.PolicyAction("Inquire", span=span),
    }[step.error_policy.text]
    by_code = [("PreconditionFailed", ir.PolicyAction("Suspend", span=span))]
    if step.autonomy is not None and step.autonomy.text == "gate_on_breaking":
        by_code.append(("AgreementBreaking", ir.PolicyAction("Inquire", span=step.autonomy.span)))
    by_code += [
        (code, ir.PolicyAction("Inquire", span=t.span)) for t in step.triggers for code in TRIGGER_CODES[t.text]
    ]
    return ir.ErrorPolicy(default=default, by_code=tuple(by_code), span=span)


def _parallel(kai_steps: tuple[KaiStep, ...], lowered: list[ir.Step]) -> tuple[ir.Step, ...]:
    """A maximal run of consecutive steps with one `parallel_group` becomes a `parallel` step (A4.7)."""
    result: list[ir.Step] = []
    index = 0
    while index < len(lowered):
        group = kai_steps[index].group
        end = index + 1
        while (
            group is not None
            and end < len(lowered)
            and kai_steps[end].group is not None
            and kai_steps[end].group.text == group.text
        ):
            end += 1
        if end - index > 1:
            members = tuple(lowered[index:end])
            result.append(
                ir.Step(
                    action="parallel",
                    config=ir.MapV(
                        (ir.Entry("steps", ir.StepsV(members, span=group.span), span=group.span),), span=group.span
                    ),
                    span=group.span,
                    action_span=group.span,
                )
            )
        else:
            result.append(lowered[index])
        index = end
    return tuple(result)
