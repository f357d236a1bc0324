"""kai's conditions (A4.4) as the language's step checks: a precondition is a `requires:`
check, postconditions and triggers are `ensures:` checks with kai's error codes.
"""

from __future__ import annotations

from catalyst_dsl.dialects.kai.model import KaiStep
from catalyst_dsl.dialects.kai.templates import Template
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.source import Span


def _feature_path(before: str, after: str, span: Span | None) -> ir.Tmpl:
    """`before{{feature}}after`: a path of a condition (A4.4), rooted at the run's feature."""
    from catalyst_dsl.ir import types as t

    return Template().add_text(before).add_ref("feature").add_text(after).done(span, t.STRING)


#: `verdict:` followed by PASS or FAIL as a word (A4.4: not PASSED, not PASS_WITH…).
VERDICT = r"verdict:[ \t]*{}\b"


def _exists(before: str, after: str, span: Span | None) -> ir.Check:
    return ir.Check(
        "file-exists", ir.MapV((ir.Entry("path", _feature_path(before, after, span), span=span),), span=span), span=span
    )


def _contains(before: str, after: str, pattern: str, span: Span | None) -> ir.Check:
    entries = (
        ir.Entry("path", _feature_path(before, after, span), span=span),
        ir.Entry("regex", ir.Lit(pattern, span=span), span=span),
    )
    return ir.Check("file-contains", ir.MapV(entries, span=span), span=span)


def _verdict_says(word: str, span: Span | None) -> ir.Check:
    """The QA verdict says `word`: `verdict.yaml`, or `verdict.md` when there is no
    `verdict.yaml` (A4.4, K-D16)."""
    pattern = VERDICT.format(word)
    fallback = ir.Check(
        "all",
        ir.MapV(()),
        span=span,
        checks=(
            ir.Check("not", ir.MapV(()), span=span, checks=(_exists(".qa/", "/verdict.yaml", span),)),
            _contains(".qa/", "/verdict.md", pattern, span),
        ),
    )
    return ir.Check("any", ir.MapV(()), span=span, checks=(_contains(".qa/", "/verdict.yaml", pattern, span), fallback))


def condition_check(name: str, span: Span | None) -> ir.Check | None:
    """The predicate of one kai condition (A4.4), or None for a name kai does not know
    (reported by the reader)."""
    if name == "spec_exists":
        return _exists("specs/", "/spec.md", span)
    if name == "plan_exists":
        return _exists("specs/", "/plan.md", span)
    if name == "tasks_exists":
        return _exists("specs/", "/tasks.md", span)
    if name == "agreement_exists":
        return _exists(".agreements/", "/agreement.yaml", span)
    if name == "agreement_pass":
        return _contains(".agreements/", "/check-report.md", VERDICT.format("PASS"), span)
    if name == "qa_plan_exists":
        return ir.Check(
            "any",
            ir.MapV(()),
            span=span,
            checks=(_exists(".qa/", "/test-plan.md", span), _exists(".qa/", "/_index.yaml", span)),
        )
    if name == "qa_verdict_pass":
        return _verdict_says("PASS", span)
    if name == "pr_created":
        from catalyst_dsl.ir import types as t

        # `--head=F` is one argument: a feature starting with `-` cannot be read as an option.
        argv = (
            ir.Lit("gh"),
            ir.Lit("pr"),
            ir.Lit("list"),
            Template().add_text("--head=").add_ref("feature").done(span, t.STRING),
            ir.Lit("--json"),
            ir.Lit("number"),
            ir.Lit("--jq"),
            ir.Lit("length"),
        )
        entries = (
            ir.Entry("argv", ir.ListV(argv, span=span), span=span),
            ir.Entry("match", ir.Lit(r"^[1-9][0-9]*\s*$", span=span), span=span),
        )
        return ir.Check("command-output", ir.MapV(entries, span=span), span=span)
    return None


def _breaking(span: Span | None) -> ir.Check:
    """The agreement check ran and did not pass (A4.4's `breaking`)."""
    return ir.Check(
        "all",
        ir.MapV(()),
        span=span,
        checks=(
            _exists(".agreements/", "/check-report.md", span),
            ir.Check("not", ir.MapV(()), span=span, checks=(condition_check("agreement_pass", span),)),
        ),
    )


def _not(check: ir.Check, code: str | None = None) -> ir.Check:
    return ir.Check("not", ir.MapV(()), span=check.span, checks=(check,), code=code)


def requires(step: KaiStep) -> ir.Checks | None:
    checks = tuple(c for n in step.preconditions if (c := condition_check(n.text, n.span)) is not None)
    return ir.Checks(checks, "PreconditionFailed", span=step.preconditions[0].span) if checks else None


def ensures(step: KaiStep) -> ir.Checks | None:
    """The postconditions, and before them the signals that name a failure more precisely
    (A4.8: `VerdictFailed`, `AgreementBreaking` before `PostconditionFailed`).

    A signal listed as a trigger fails the step only when a postcondition fails too (a
    step fails by its agent or its postconditions, never by a signal alone): `any(all
    postconditions, not signal)`. `gate_on_breaking` asks whenever the agreement breaks,
    failed or not (A4.3 step 6)."""
    posts = tuple(c for n in step.postconditions if (c := condition_check(n.text, n.span)) is not None)
    span = step.postconditions[0].span if step.postconditions else step.span
    checks: list[ir.Check] = []
    if step.autonomy is not None and step.autonomy.text == "gate_on_breaking":
        checks.append(_not(_breaking(step.autonomy.span), "AgreementBreaking"))
    triggers = {t.text for t in step.triggers}
    if posts:
        everything = ir.Check("all", ir.MapV(()), span=span, checks=posts)
        signals = (
            ("verdict_fail", "VerdictFailed", _verdict_says("FAIL", span)),
            ("agreement_breaking", "AgreementBreaking", _breaking(span)),
        )
        for trigger, code, signal in signals:
            if trigger in triggers:
                checks.append(ir.Check("any", ir.MapV(()), span=span, checks=(everything, _not(signal)), code=code))
    checks.extend(posts)
    # Only postconditions say that an interrupted step got its work done (A4.11, K-D11).
    return ir.Checks(tuple(checks), "PostconditionFailed", span=span, recovers=bool(posts)) if checks else None
