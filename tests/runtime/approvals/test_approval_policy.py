"""Approval policies judged over commands: cleo's default rules give its decisions, the
require-human rules win over auto-approve ones, and values never approve."""

from __future__ import annotations

import pytest

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir.approval_rules import DEFAULT_RULES
from catalyst_dsl.runtime.approvals.policy import Command, policy_of, step_commands


def _policy(rules, commands=None) -> ir.MapV:
    entries = [
        ir.Entry(
            "rules",
            ir.ListV(
                tuple(
                    ir.MapV(
                        (ir.Entry("action", ir.Lit(a)), ir.Entry("reason", ir.Lit(r)), ir.Entry("pattern", ir.Lit(p)))
                    )
                    for a, r, p in rules
                )
            ),
        )
    ]
    if commands is not None:
        entries.append(ir.Entry("commands", ir.ListV(tuple(commands))))
    return ir.MapV(tuple(entries))


DEFAULTS = policy_of(_policy(DEFAULT_RULES))


@pytest.mark.parametrize(
    "command, passes, reason",
    [
        ("pnpm test --filter api", True, "safe-qa-tool"),
        ("pnpm run test", True, "safe-qa-tool"),
        ("pnpm tsc --noEmit", True, "safe-qa-tool"),
        ("cleo show T12", True, "safe-cleo-read"),
        ("cleo list", True, "safe-cleo-read"),
        ("pnpm test && npm publish", False, "publish"),
        ("pnpm test; git push origin main", False, "push"),
        ("git tag v1.2.0", False, "tag"),
        ("gh release create v1", False, "release"),
        ("gh workflow run deploy.yml", False, "workflow-trigger"),
        ("pnpm test && RM -RF dist", False, "destructive"),
        ("psql -c 'DROP TABLE users'", False, "destructive"),
        ("curl -s https://example.com/hook", False, "external-api"),
        ("scp build.tgz deploy@host:/srv", False, "remote-access"),
        ("cleo add task", False, "default"),
        ("echo pnpm test", False, "default"),  # auto-approve rules read the start of the command
        ("ls", False, "default"),
    ],
)
def test_the_default_rules_decide_as_cleo_does(command, passes, reason):
    verdict = DEFAULTS.judge([Command(command)])
    assert verdict.passes is passes
    assert f"({reason})" in verdict.reason if passes else f"rule {reason} asks" in verdict.reason


def test_a_pause_passes_only_when_every_command_is_auto_approved():
    assert DEFAULTS.judge([Command("pnpm test"), Command("cleo verify")]).passes
    assert not DEFAULTS.judge([Command("pnpm test"), Command("make")]).passes
    assert not DEFAULTS.judge([]).passes  # nothing to judge: a person decides


def test_a_command_holding_a_placeholder_never_passes():
    step = ir.Step(
        "command", ir.MapV((ir.Entry("argv", ir.ListV((ir.Lit("pnpm"), ir.Lit("test"), ir.Tmpl("{{suite}}")))),))
    )
    [command] = step_commands(step)
    assert command == Command("pnpm test {{suite}}", fixed=False)
    assert "known only at run time" in DEFAULTS.judge([command]).reason and not DEFAULTS.judge([command]).passes


def test_a_policy_not_written_out_asks_for_a_person():
    assert policy_of(ir.Tmpl("${{ inputs.policy }}")).kind == "human"
    assert policy_of(ir.Lit("human")).kind == "human"
    assert policy_of(None) is None
    listed = policy_of(_policy(DEFAULT_RULES, [ir.Lit("pnpm test"), ir.Tmpl("{{cmd}}")]))
    assert listed.commands == (Command("pnpm test"), Command("{{cmd}}", fixed=False))
    assert not listed.judge(listed.commands).passes


def test_rules_project_takes_the_approval_rules_setting():
    value = ir.MapV((ir.Entry("rules", ir.Lit("project")),))
    mine = ({"action": "auto-approve", "reason": "our-lint", "pattern": "^make lint$"},)
    assert policy_of(value, mine).judge([Command("make lint")]).passes
    assert not policy_of(value, mine).judge([Command("make deploy")]).passes
    assert not policy_of(value).judge([Command("make lint")]).passes  # no setting: no rule approves anything


def test_the_approval_rules_setting_is_checked_when_read(tmp_path):
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import read_config

    settings = tmp_path / "catalyst.toml"
    settings.write_text('[[approval-rules]]\naction = "auto-approve"\nreason = "lint"\npattern = "^make lint$"\n')
    sink = DiagnosticSink()
    assert read_config(settings, sink).approval_rules == (
        {"action": "auto-approve", "reason": "lint", "pattern": "^make lint$"},
    )
    assert not sink.items
    for bad, said in (
        ('action = "allow"\nreason = "x"\npattern = "a"', "'allow' is not an action"),
        ('action = "auto-approve"\nreason = "x"\npattern = "(a"', "cannot be used"),
        ('action = "auto-approve"\nreason = "x"', "three strings"),
    ):
        settings.write_text(f"[[approval-rules]]\n{bad}\n")
        sink = DiagnosticSink()
        assert read_config(settings, sink).approval_rules == ()
        assert [d.code for d in sink.items] == ["C801"] and said in sink.items[0].message, sink.items[0].message
