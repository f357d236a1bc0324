"""Hover, go to definition and find references in kai playbooks and cleo cantbooks, and
kai completion's written keys and flow lists, over stdio with pygls's client."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp
from tests.helpers.lsp_session import session, where

from catalyst_dsl.dialects.kai import model as kai

KAI = """name: ship
description: Ships a feature
version: "1.0"
args:
  - name: ticket
    description: the ticket to ship
    required: false
steps:
  - id: spec
    command: /speckit.specify
    args: "{{ticket}} for {{ feature }}"
    autonomy: gate_on_breaking
    error_policy: retry_once
    model: sonnet
    postconditions: [spec_exists]
    escalation_triggers: [subagent_error]
    parallel_group: docs
  - id: plan
    command: /speckit.plan
    args: "{{ ticket }}"
    autonomy: skip
    error_policy: gate
    parallel_group: docs
"""

CANTBOOK = """version: "1.0"
name: fix-loop
inputs:
  - name: ticket
    required: true
    description: The ticket to fix
nodes:
  - id: implement
    type: agentic
    description: Implements the fix
    skill: ct-task-executor
    inputs:
      task: "Fix {{ ticket }} ({{inputs.ticket}})"
  - id: ok
    type: approval
    prompt: Run the tests?
    policy: permissive
  - id: validate
    type: deterministic
    command: make
    args: [test]
    depends: [implement]
    on_failure:
      inject_into: implement
    requires:
      from: implement
edges:
  - from: implement
    to: ok
  - from: ok
    to: validate
error_handlers:
  - on: contract_violation
    action: hitl_escalate
"""


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / ".playbooks" / "playbooks"
    folder.mkdir(parents=True)
    (folder / "ship.yaml").write_text(KAI, encoding="utf-8")
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "speckit.specify.md").write_text(
        "---\ndescription: Write the spec\n---\nWrite the spec of $ARGUMENTS.\n", encoding="utf-8"
    )
    (tmp_path / "fix.cantbook").write_text(CANTBOOK, encoding="utf-8")
    return tmp_path


def _at(text: str, needle: str, into: int = 1) -> tuple[int, int]:
    """The (line, character) `into` characters into the first `needle` of `text`."""
    offset = text.index(needle) + into
    return text.count("\n", 0, offset), offset - text.rfind("\n", 0, offset) - 1


class _Requests:
    def __init__(self, editor, uri: str) -> None:
        self.client, self.uri = editor.client, uri

    def _doc(self):
        return lsp.TextDocumentIdentifier(uri=self.uri)

    async def hover(self, line: int, character: int) -> str | None:
        found = await self.client.text_document_hover_async(
            lsp.HoverParams(text_document=self._doc(), position=lsp.Position(line=line, character=character))
        )
        return found.contents.value if found is not None else None

    async def definition(self, line: int, character: int):
        found = await self.client.text_document_definition_async(
            lsp.DefinitionParams(text_document=self._doc(), position=lsp.Position(line=line, character=character))
        )
        return where(found) if isinstance(found, lsp.Location) else found

    async def references(self, line: int, character: int, declaration: bool = True) -> list:
        found = await self.client.text_document_references_async(
            lsp.ReferenceParams(
                text_document=self._doc(),
                position=lsp.Position(line=line, character=character),
                context=lsp.ReferenceContext(include_declaration=declaration),
            )
        )
        return [where(f) for f in found or []]


async def _kai(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / ".playbooks" / "playbooks" / "ship.yaml")
        ask = _Requests(editor, uri)

        # Hover: an arg in `{{ }}` (what it lowers to: optional, empty by default), kai's
        # implicit `feature`, the autonomy, error policy, trigger and model as lowered, the
        # command's file.
        assert (
            await ask.hover(*_at(KAI, "{{ticket", 3))
            == "**ticket** (kai arg, optional, default empty text)\n\nthe ticket to ship"
        )
        assert (
            await ask.hover(*_at(KAI, "{{ feature", 4))
            == "**feature** (kai arg, required)\n\nthe feature the run works on (kai's implicit argument)"
        )
        assert await ask.hover(*_at(KAI, "gate_on_breaking")) == (
            "**gate_on_breaking** (kai autonomy) lowers to:\n\n"
            "- a check after the step failing with `AgreementBreaking`, handled by `Inquire`"
        )
        editor.change(uri, KAI.replace("autonomy: skip", "autonomy: gate_always"))
        assert (
            await ask.hover(*_at(KAI, "skip"))
            == "**gate_always** (kai autonomy) lowers to:\n\n- a checkpoint before the step, `policy: human`"
        )
        editor.change(uri, KAI)
        assert (
            await ask.hover(*_at(KAI, "skip"))
            == "**skip** (kai autonomy) lowers to:\n\n- `condition: false`: the step never runs"
        )
        policy = await ask.hover(*_at(KAI, "retry_once"))
        assert policy.startswith(
            "**retry_once** (kai error policy) lowers to the step's error policy:\n\n"
            "- any error: `Stop after 1 retry`\n- `PreconditionFailed`: `Suspend`"
        )
        assert await ask.hover(*_at(KAI, "subagent_error")) == (
            "**subagent_error** (kai escalation trigger): "
            "the step failing with `AIAdapterError` or `AIAdapterUnavailable` or `StepTimeout` "
            "is handled by `Inquire`, before the error policy"
        )
        assert (await ask.hover(*_at(KAI, "sonnet"))).startswith("**sonnet** (kai model)")
        assert await ask.hover(*_at(KAI, "/speckit.specify", 0)) == (
            "**/speckit.specify** (slash command): `.claude/commands/speckit.specify.md`\n\n"
            "```markdown\n---\ndescription: Write the spec\n---\nWrite the spec of $ARGUMENTS.\n```"
        )
        assert (
            await ask.hover(*_at(KAI, "/speckit.plan"))
            == "**/speckit.plan** (slash command): no file for it in the project's `.claude/commands/`"
        )

        # Go to definition: `{{ ticket }}` -> its declaration (from the start and the end of
        # the name); the command -> its file, when there is one.
        declared = ("ship.yaml", *_at(KAI, "ticket", 0), _at(KAI, "ticket", 0)[1] + len("ticket"))
        assert await ask.definition(*_at(KAI, "{{ticket", 2)) == declared[:3] + (declared[3],)
        assert await ask.definition(*_at(KAI, "{{ ticket }}", 9)) == declared
        assert await ask.definition(*_at(KAI, "/speckit.specify")) == ("speckit.specify.md", 0, 0, 0)
        assert await ask.definition(*_at(KAI, "/speckit.plan")) is None  # no file
        assert await ask.definition(*_at(KAI, "{{ feature", 4)) is None  # declared nowhere

        # Find references: from the declaration or a use, every `{{ ticket }}`; the members
        # of a parallel group (kai names steps by id nowhere: the group is what they share).
        uses = [
            ("ship.yaml", *_at(KAI, "{{ticket", 2), _at(KAI, "{{ticket", 2)[1] + 6),
            ("ship.yaml", *_at(KAI, "{{ ticket", 3), _at(KAI, "{{ ticket", 3)[1] + 6),
        ]
        assert await ask.references(*_at(KAI, "ticket", 2)) == [declared, *uses]
        assert await ask.references(*_at(KAI, "{{ ticket", 4), declaration=False) == uses
        assert [r[1] for r in await ask.references(*_at(KAI, "docs"))] == [
            KAI[: KAI.index("docs")].count("\n"),
            KAI[: KAI.rindex("docs")].count("\n"),
        ]
        assert await ask.references(*_at(KAI, "description")) == []


def test_hover_definition_and_references_in_kai(tmp_path: Path) -> None:
    asyncio.run(_kai(_project(tmp_path)))


async def _cleo(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / "fix.cantbook")
        ask = _Requests(editor, uri)

        # Hover: a node type (the action it lowers to, its keys), a node id where it is
        # named, an input in `{{ }}`, the approval policy as lowered, a handler.
        agentic = await ask.hover(*_at(CANTBOOK, "agentic"))
        assert agentic.startswith("**agentic** (cleo node type): lowered to the `ai-prompt` action\n\nSend a prompt")
        assert agentic.endswith("`allowed_skills`, `allowed_tools`")
        assert (
            await ask.hover(*_at(CANTBOOK, "from: implement", 7))
            == "**implement** (cleo agentic node, line 8)\n\nImplements the fix"
        )
        assert (
            await ask.hover(*_at(CANTBOOK, "{{ ticket", 3)) == "**ticket** (cleo input, required)\n\nThe ticket to fix"
        )
        editor.change(uri, CANTBOOK.replace("    required: true\n", "    default: 3\n"))
        assert (
            await ask.hover(*_at(CANTBOOK, "{{ ticket", 3))
            == "**ticket** (cleo input, optional, default `3`)\n\nThe ticket to fix"
        )
        editor.change(uri, CANTBOOK)
        assert await ask.hover(*_at(CANTBOOK, "permissive")) == (
            "**permissive** (cleo approval policy): the gate passes by itself "
            "when cleo's 10 default rules approve every command "
            "up to the next gate (`make test`); else a person answers it"
        )
        assert (
            await ask.hover(*_at(CANTBOOK, "contract_violation"))
            == "**contract_violation** (cleo handler event): the error `ContractViolation`, handled by `Inquire`"
        )
        assert (
            await ask.hover(*_at(CANTBOOK, "hitl_escalate"))
            == "**hitl_escalate** (cleo handler action): the error policy action `Inquire` for `ContractViolation`"
        )

        # Go to definition of a node id from `to:`, `depends:` and `inject_into:`; of an input
        # from `{{ ticket }}` and `{{ inputs.ticket }}`.
        implement = (
            "fix.cantbook",
            *_at(CANTBOOK, "implement", 0),
            _at(CANTBOOK, "implement", 0)[1] + len("implement"),
        )
        for needle in ("[implement]", "inject_into: implement", "  from: implement", "- from: implement"):
            assert await ask.definition(*_at(CANTBOOK, needle, len(needle) - 2)) == implement
        ticket = ("fix.cantbook", *_at(CANTBOOK, "ticket", 0), _at(CANTBOOK, "ticket", 0)[1] + 6)
        assert await ask.definition(*_at(CANTBOOK, "{{ ticket", 3)) == ticket
        assert await ask.definition(*_at(CANTBOOK, "inputs.ticket", 8)) == ticket

        # Find references: from a node's id, every place naming it; from an input, its `{{ }}`.
        found = await ask.references(*_at(CANTBOOK, "implement", 0))
        assert [r[1] for r in found] == [
            7,
            21,
            23,
            25,
            27,
        ]  # its id, `depends`, `inject_into`, `requires.from`, an edge's `from`
        assert [r[1:] for r in await ask.references(*_at(CANTBOOK, "ticket", 1), declaration=False)] == [
            (*_at(CANTBOOK, "{{ ticket", 3), _at(CANTBOOK, "{{ ticket", 3)[1] + 6),
            (*_at(CANTBOOK, "inputs.ticket", 7), _at(CANTBOOK, "inputs.ticket", 7)[1] + 6),
        ]


def test_hover_definition_and_references_in_cleo(tmp_path: Path) -> None:
    asyncio.run(_cleo(_project(tmp_path)))


async def _edges(project: Path) -> None:
    """Every position of an empty file, a file that does not parse and a half-written one:
    no request raises, and nothing is made up."""
    async with session(project) as editor:
        for path, texts in (
            (
                project / ".playbooks" / "playbooks" / "ship.yaml",
                ("", "steps: [\n  - id: 'x\n", KAI[:200], "\ufeff- 1\n", KAI),
            ),
            (project / "fix.cantbook", ("", "nodes: {\n", CANTBOOK[:150], "version: 1\nnodes: 3\n", CANTBOOK)),
        ):
            uri = editor.open(path)
            ask = _Requests(editor, uri)
            for text in texts:
                editor.change(uri, text)
                lines = text.split("\n")
                for line in range(len(lines) + 1):
                    for character in range(0, len(lines[line]) + 2 if line < len(lines) else 1, 3):
                        await ask.hover(line, character)
                        await ask.definition(line, character)
                        await ask.references(line, character)
            editor.change(uri, "")
            assert (
                await ask.hover(0, 0) is None
                and await ask.definition(0, 0) is None
                and await ask.references(0, 0) == []
            )
        assert "Traceback" not in editor.log
    assert "Traceback" not in editor.log and "Error" not in editor.log


def test_no_position_raises_in_kai_and_cleo_files(tmp_path: Path) -> None:
    asyncio.run(_edges(_project(tmp_path)))


async def _completion(project: Path) -> None:
    async with session(project) as editor:
        uri = editor.open(project / ".playbooks" / "playbooks" / "ship.yaml")
        head = KAI[: KAI.index("    args: \"{{ticket")]
        # A key written in the step, above or below the cursor, is not offered again.
        editor.change(uri, head + "    \n    autonomy: auto\n")
        offered = await editor.complete(uri, head.count("\n"), 4)
        assert offered == [k for k in kai.STEP_KEYS if k not in ("id", "command", "autonomy")]
        # ...but a key of the next step is (it is another mapping).
        editor.change(uri, head + "    autonomy: auto\n  - id: plan\n    ")
        assert "autonomy" in await editor.complete(uri, head.count("\n") + 2, 4)
        # In flow lists: condition and trigger names, less those listed already.
        editor.change(uri, head + "    preconditions: [spec_exists, pl")
        assert await editor.complete(uri, head.count("\n"), 35) == ["plan_exists"]
        editor.change(uri, head + "    escalation_triggers: [verdict_fail, ")
        assert await editor.complete(uri, head.count("\n"), 40) == [t for t in kai.TRIGGERS if t != "verdict_fail"]
        editor.change(uri, head + "    postconditions: ['qa")
        assert await editor.complete(uri, head.count("\n"), 24) == ["qa_plan_exists", "qa_verdict_pass"]
        # A flow list of a key that takes no names offers nothing.
        editor.change(uri, head + "    command: [")
        assert await editor.complete(uri, head.count("\n"), 14) == []

        # In a cantbook: node ids in a `depends` flow list (less those listed and the node's
        # own: a cycle); an edge's keys less those written.
        book = editor.open(project / "fix.cantbook")
        nodes = CANTBOOK[: CANTBOOK.index("edges:")]
        editor.change(book, nodes + "  - id: report\n    type: approval\n    depends: [implement, ")
        assert await editor.complete(book, nodes.count("\n") + 2, 31) == ["ok", "validate"]
        editor.change(book, nodes + "edges:\n  - from: ok\n    \n    when: {exists: x}\n")
        assert await editor.complete(book, nodes.count("\n") + 2, 4) == ["to", "contract"]


def test_kai_completion_of_unwritten_keys_and_in_flow_lists(tmp_path: Path) -> None:
    asyncio.run(_completion(_project(tmp_path)))
