"""Slash commands an `ai-prompt` step names (`/speckit.plan 001-login`), and the library
rule that finds their files in the project's `.claude/commands/` (C635).

It looks at the project's files, not at the playbook, so it runs in the library check
only (`catalyst check`), never in the per-file compile an editor caches, like C819.
"""

from __future__ import annotations

import re
from pathlib import Path

from catalyst_dsl.checks.library_view import LibraryView
from catalyst_dsl.diagnostics.ids import SLASH_COMMAND_MISSING
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl._internal.lazy_pattern import LazyPattern

#: `/name` then, after white space, its arguments. The name is what `.claude/commands/`
#: holds a file for: `/speckit.plan` is `.claude/commands/speckit.plan.md`.
SLASH_COMMAND = LazyPattern(r"/(?P<name>[A-Za-z0-9][A-Za-z0-9._:-]*)(?:\s+.*)?", re.DOTALL)
COMMANDS_DIR = ".claude/commands"


def written_command(value: ir.Value | None) -> str | None:
    """The text of a `command` whose command name is written out (its arguments may be
    templates); None when absent or when the name itself is computed at run time."""
    if isinstance(value, ir.Lit) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ir.Tmpl):
        head = value.text.strip().split(None, 1)[0] if value.text.strip() else ""
        return value.text if head and "{{" not in head else None
    return None


def slash_command_name(text: str) -> str | None:
    """The name of the slash command `text` starts (`speckit.plan` for `/speckit.plan x`), or None."""
    match = SLASH_COMMAND.fullmatch(text.strip())
    return match.group("name") if match else None


def check_slash_commands(library: LibraryView, files: list[str], sink: DiagnosticSink) -> None:
    """C635: an `ai-prompt` naming a slash command the project has no file for, in a
    project that keeps its commands in `.claude/commands/`."""
    commands = Path(library.project.root) / COMMANDS_DIR
    if library.facts.listdir(commands) is None:
        # The project keeps no commands of its own: they come from the user's own folder,
        # skills or plugins, which a check of the project cannot see.
        return
    for path in files:
        playbook = library.compiled(path).playbook
        if playbook is None:
            continue
        for step in ir.all_steps(playbook):
            command = step.config.get("command") if step.action == "ai-prompt" else None
            text = written_command(command)
            if text is None:
                continue  # absent, or its name computed at run time: the adapter meets it then
            name = slash_command_name(text)
            if name is not None and not library.facts.is_file(commands / f"{name}.md"):
                sink.report(
                    SLASH_COMMAND_MISSING,
                    f"the slash command /{name} has no file {COMMANDS_DIR}/{name}.md in this project",
                    command.span,
                    help=f"add {COMMANDS_DIR}/{name}.md, or check the command's spelling; "
                    "the agent will not know the command",
                )
