"""Completion over stdio in kai playbooks: keys, policies, models, conditions, triggers,
all from kai's own tables."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsp_session import session

from catalyst_dsl.dialects import kai

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
    (folder / "ship.yaml").write_text("name: ship\nargs:\n  - name: ticket\n    description: the ticket\n" + HEAD[len("name: ship\n"):] + "    autonomy: auto\n    error_policy: stop\n", encoding="utf-8")
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
        # version that compiled.
        with_arg = "name: ship\nargs:\n  - name: ticket\n    description: the ticket\n" + HEAD[len("name: ship\n"):]
        editor.change(uri, with_arg + "    autonomy: auto\n    error_policy: stop\n")
        editor.change(uri, with_arg + "    args: '{{ ")
        assert await editor.complete(uri, with_arg.count("\n"), 14) == ["ticket", "feature"]
        editor.change(uri, with_arg + "    args: '{{ ti")
        assert await editor.complete(uri, with_arg.count("\n"), 16) == ["ticket"]


def test_completion_in_kai_playbooks(tmp_path: Path) -> None:
    asyncio.run(_session(_project(tmp_path)))
