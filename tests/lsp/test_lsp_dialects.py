"""Completion over stdio in kai playbooks: keys, policies, models, conditions, triggers,
all from kai's own tables."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp
from tests.helpers.lsp_session import session

from catalyst_dsl.dialects.cleo import vocabulary as cleo
from catalyst_dsl.dialects.kai import model as kai

HEAD = """name: ship
description: Ships a feature
steps:
  - id: spec
    command: /speckit.specify
"""


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / ".playbooks" / "playbooks"
    folder.mkdir(parents=True)
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    for name in ("speckit.specify", "speckit.plan", "review"):
        (commands / f"{name}.md").write_text("Do it.\n", encoding="utf-8")
    (folder / "ship.yaml").write_text(
        "name: ship\nargs:\n  - name: ticket\n    description: the ticket\n"
        + HEAD[len("name: ship\n") :]
        + "    autonomy: auto\n    error_policy: stop\n",
        encoding="utf-8",
    )
    return tmp_path


async def _session(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / ".playbooks" / "playbooks" / "ship.yaml")
        last = HEAD.count("\n")

        # Keys: at the top level, in a step (beside its first key and below it), in an arg.
        editor.change(uri, HEAD + "ver")
        assert await editor.complete(uri, last, 3) == ["version"]
        editor.change(uri, HEAD + "    error")
        assert await editor.complete(uri, last, 9) == ["error_policy"]
        editor.change(uri, HEAD + "  - ")
        assert await editor.complete(uri, last, 4) == list(kai.STEP_KEYS)
        editor.change(uri, "name: ship\nargs:\n  - name: feature\n    req")
        assert await editor.complete(uri, 3, 7) == ["required"]

        # Values of autonomy, error_policy and model.
        editor.change(uri, HEAD + "    autonomy: gate")
        assert await editor.complete(uri, last, 18) == ["gate_on_breaking", "gate_always"]
        editor.change(uri, HEAD + "    error_policy: ")
        assert await editor.complete(uri, last, 18) == list(kai.ERROR_POLICIES)
        editor.change(uri, HEAD + "    model: 'h")
        assert await editor.complete(uri, last, 13) == ["haiku"]
        # A key that takes no listed value offers nothing.
        editor.change(uri, HEAD + "    parallel_group: ")
        assert await editor.complete(uri, last, 20) == []

        # Condition names under pre/postconditions, trigger names under escalation_triggers.
        editor.change(uri, HEAD + "    postconditions:\n      - spec")
        assert await editor.complete(uri, last + 1, 12) == ["spec_exists"]
        editor.change(uri, HEAD + "    escalation_triggers:\n      - ")
        assert await editor.complete(uri, last + 1, 8) == list(kai.TRIGGERS)

        # Slash commands the project keeps, after `command: /`.
        editor.change(uri, HEAD + "  - id: plan\n    command: /speckit.")
        assert await editor.complete(uri, last + 1, 22) == ["speckit.plan", "speckit.specify"]
        # Inside `{{ }}`: the declared args and kai's implicit `feature`, from the last
        # version checked that compiled.
        with_arg = "name: ship\nargs:\n  - name: ticket\n    description: the ticket\n" + HEAD[len("name: ship\n") :]
        editor.change(uri, with_arg + "    autonomy: auto\n    error_policy: stop\n")
        await editor.settled(uri)  # checked: the last version that compiled
        editor.change(uri, with_arg + "    args: '{{ ")
        assert await editor.complete(uri, with_arg.count("\n"), 14) == ["ticket", "feature"]
        editor.change(uri, with_arg + "    args: '{{ ti")
        assert await editor.complete(uri, with_arg.count("\n"), 16) == ["ticket"]


def test_completion_in_kai_playbooks(tmp_path: Path) -> None:
    asyncio.run(_session(_project(tmp_path)))


CANTBOOK = """version: "1.0"
name: fix-loop
description: Implement and validate
inputs:
  - name: ticket
    required: true
nodes:
  - id: implement
    type: agentic
    skill: ct-task-executor
  - id: validate
    type: deterministic
    command: make
"""


async def _cleo_session(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / "fix.cantbook")
        last = CANTBOOK.count("\n")

        # Top-level keys, node keys by the node's type, node types.
        editor.change(uri, CANTBOOK + "err")
        assert await editor.complete(uri, last, 3) == ["error_handlers"]
        editor.change(uri, CANTBOOK + "    time")
        assert await editor.complete(uri, last, 8) == ["timeout_ms"]
        editor.change(uri, CANTBOOK + "  - id: review\n    type: approval\n    p")
        assert await editor.complete(uri, last + 2, 5) == ["prompt", "policy"]
        editor.change(uri, CANTBOOK + "  - id: review\n    type: ")
        assert await editor.complete(uri, last + 1, 10) == list(cleo.NODE_TYPES)

        # Node ids under `depends`, after `inject_into`, `from` and `to`.
        editor.change(uri, CANTBOOK + "    depends:\n      - ")
        assert await editor.complete(uri, last + 1, 8) == ["implement"]  # not `validate` itself
        editor.change(uri, CANTBOOK + "    on_failure:\n      inject_into: im")
        assert await editor.complete(uri, last + 1, 21) == ["implement"]
        editor.change(uri, CANTBOOK + "edges:\n  - from: implement\n    to: v")
        assert await editor.complete(uri, last + 2, 9) == ["validate"]
        editor.change(uri, CANTBOOK + "edges:\n  - from: implement\n    ")
        # `from` is written in this edge already.
        assert await editor.complete(uri, last + 2, 4) == [k for k in cleo.EDGE_KEYS if k != "from"]

        # Handlers: their keys, events and actions.
        editor.change(uri, CANTBOOK + "error_handlers:\n  - on: iter")
        assert await editor.complete(uri, last + 1, 11) == ["iteration_cap_exceeded"]
        editor.change(uri, CANTBOOK + "error_handlers:\n  - on: agentic_timeout\n    action: ")
        assert await editor.complete(uri, last + 2, 12) == list(cleo.HANDLER_ACTIONS)

        # Input names inside `{{ }}`, from the last version that compiled.
        editor.change(uri, CANTBOOK)
        editor.change(uri, CANTBOOK + "    args: ['{{ ti")
        assert await editor.complete(uri, last, 16) == ["ticket"]


def test_completion_in_cleo_cantbooks(tmp_path: Path) -> None:
    (tmp_path / "fix.cantbook").write_text(CANTBOOK, encoding="utf-8")
    asyncio.run(_cleo_session(tmp_path))


async def _outlines(project: Path) -> None:
    async with session(project) as editor:

        def outline(uri):
            return editor.client.text_document_document_symbol_async(
                lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            )

        book = editor.open(project / "fix.cantbook")
        assert [(s.name, s.detail, s.range.start.line) for s in await outline(book)] == [
            ("implement", "agentic", 7),
            ("validate", "deterministic", 10),
        ]
        playbook = editor.open(project / ".playbooks" / "playbooks" / "ship.yaml")
        assert [(s.name, s.range.start.line) for s in await outline(playbook)] == [("spec", 6)]


def test_outline_of_kai_steps_and_cleo_nodes(tmp_path: Path) -> None:
    (tmp_path / "fix.cantbook").write_text(CANTBOOK, encoding="utf-8")
    asyncio.run(_outlines(_project(tmp_path)))


async def _quick_fixes(project: Path) -> None:
    from tests.lsp.test_lsp_code_actions import _actions, _apply

    async with session(project) as editor:
        cases = [
            (
                project / ".playbooks" / "playbooks" / "ship.yaml",
                HEAD + "    autonomy: gate_alway\n    error_policy: stop\n",
                "gate_alway",
                "gate_always",
            ),
            (
                project / "fix.cantbook",
                CANTBOOK.replace("type: deterministic", "type: determinstic"),
                "determinstic",
                "deterministic",
            ),
        ]
        for path, text, wrong, right in cases:
            uri = editor.open(path)
            editor.change(uri, text)
            found = await editor.until(uri, lambda ds: any(wrong in d.message for d in ds))
            mistake = next(d for d in found if wrong in d.message)
            fixes = [
                a
                for a in await _actions(editor, uri, mistake)
                if a.kind == lsp.CodeActionKind.QuickFix and a.is_preferred
            ]
            assert fixes, f"no did-you-mean fix for {wrong}"
            fixed = _apply(text, fixes[0].edit, uri)
            assert fixed == text.replace(wrong, right)
            editor.change(uri, fixed)
            await editor.until(uri, lambda ds: not any(wrong in d.message for d in ds))


def test_did_you_mean_quick_fixes_in_kai_and_cleo(tmp_path: Path) -> None:
    (tmp_path / "fix.cantbook").write_text(CANTBOOK, encoding="utf-8")
    asyncio.run(_quick_fixes(_project(tmp_path)))


async def _hovers(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / ".playbooks" / "playbooks" / "ship.yaml")
        text = HEAD + (
            "    autonomy: auto\n    error_policy: stop\n    preconditions: [spec_exists]\n"
            "    postconditions:\n      - qa_verdict_pass\n"
        )
        editor.change(uri, text)
        last = HEAD.count("\n")

        async def hover(line, character):
            found = await editor.client.text_document_hover_async(
                lsp.HoverParams(
                    text_document=lsp.TextDocumentIdentifier(uri=uri),
                    position=lsp.Position(line=line, character=character),
                )
            )
            return found.contents.value if found is not None else None

        assert (
            await hover(last + 2, 22)
            == "**spec_exists** (kai condition) holds when:\n\n- the file `specs/{{feature}}/spec.md` exists"
        )
        verdict = await hover(last + 4, 10)
        assert verdict.startswith("**qa_verdict_pass** (kai condition) holds when:\n\n- any of\n")
        assert "  - the file `.qa/{{feature}}/verdict.yaml` matches `verdict:[ \\t]*PASS\\b`" in verdict
        assert (
            await hover(last, 14)
            == "**auto** (kai autonomy) lowers to:\n\n- the step runs with no checkpoint of its own"
        )  # no condition


def test_hover_of_kai_conditions(tmp_path: Path) -> None:
    asyncio.run(_hovers(_project(tmp_path)))
