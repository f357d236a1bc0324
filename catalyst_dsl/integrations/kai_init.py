"""`catalyst kai init`: the `.playbooks/` folder of a kai project, made without touching
what is there.

It makes `playbooks/` with a commented template (`playbook.tpl.yaml`, which scans skip),
an index `_index.yaml` listing the playbooks found there, and the empty `sessions/` and
`templates/` folders kai expects. A file that exists is kept unless `force` is given.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from catalyst_dsl._internal.records import record

from catalyst_dsl.dialects.kai.reader import read
from catalyst_dsl.runtime.state import durable

TEMPLATE = '''\
# A kai playbook to copy: save it as .playbooks/playbooks/<name>.yaml, where <name> is
# how you run it (`catalyst run <name> -i feature=<branch>`).
#
# name, description, version, args and steps are required; args may be [].
# A step runs one slash command (.claude/commands/<namespace>.<command>.md) in an agent
# of its own. Keys of a step:
#   id                  lower-case letters, digits and '-', unique in the playbook
#   command             the slash command, such as /speckit.plan
#   args                text handed to the command; {{name}} is replaced by an arg
#   autonomy            auto | gate_on_breaking | gate_always | skip
#   error_policy        stop | retry_once | gate
#   model               opus | sonnet | haiku (optional)
#   preconditions       conditions that must hold before the step (optional)
#   postconditions      conditions the step must leave true (optional)
#   escalation_triggers postcondition_fail | verdict_fail | agreement_breaking |
#                       subagent_error (optional)
#   parallel_group      steps next to each other with one group run together (optional)
# Conditions: spec_exists, plan_exists, tasks_exists, agreement_exists, agreement_pass,
# qa_plan_exists, qa_verdict_pass, pr_created. `catalyst check` checks all of this.

name: "my-workflow"
description: "What this workflow does"
version: "1.0"

args:
  - name: "feature"
    description: "The feature branch"
    required: true

steps:
  - id: "plan"
    command: "/speckit.plan"
    args: "{{feature}}"
    autonomy: "auto"
    preconditions: ["spec_exists"]
    postconditions: ["plan_exists"]
    error_policy: "stop"
'''


@record
class Scaffolded:
    """What `init` did to each path (relative to the project): created, replaced or kept."""

    created: tuple[str, ...]
    replaced: tuple[str, ...]
    kept: tuple[str, ...]


def init(root: Path, *, force: bool = False, now: datetime.datetime | None = None) -> Scaffolded:
    base = root / ".playbooks"
    created: list[str] = []
    replaced: list[str] = []
    kept: list[str] = []
    for folder in ("playbooks", "sessions", "templates"):
        path = base / folder
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            created.append(f".playbooks/{folder}/")
    files = {
        base / "playbooks" / "playbook.tpl.yaml": TEMPLATE,
        base / "_index.yaml": index_text(base, now or datetime.datetime.now(datetime.timezone.utc)),
    }
    for path, text in files.items():
        shown = path.relative_to(root).as_posix()
        if force and path.exists():
            durable.replace(path, text.encode("utf-8"))
            replaced.append(shown)
        elif durable.create(path, text.encode("utf-8")):
            created.append(shown)
        else:
            kept.append(shown)
    return Scaffolded(tuple(created), tuple(replaced), tuple(kept))


def index_text(base: Path, now: datetime.datetime) -> str:
    """`_index.yaml` for the playbooks in `base/playbooks` (A1's grammar; values quoted)."""
    from catalyst_dsl.compiler import compile_path

    lines = [f'generated: "{now.strftime("%Y-%m-%dT%H:%M:%SZ")}"']
    entries = []
    folder = base / "playbooks"
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
        if path.name == "playbook.tpl.yaml":
            continue
        compiled = compile_path(str(path))
        if compiled.playbook is None or compiled.playbook.dialect != "kai":
            continue
        document = read(compiled.source)  # the file's own `name`, not its stem
        name = document.name.text if document is not None and document.name is not None else path.stem
        entries += [
            f"  - name: {_quoted(name)}",
            f"    file: {_quoted('playbooks/' + path.name)}",
            f"    description: {_quoted(compiled.playbook.description.strip())}",
            f"    steps: {len(document.steps) if document is not None else 0}",
        ]
    lines.append("playbooks:" if entries else "playbooks: []")
    return "\n".join([*lines, *entries]) + "\n"


def _quoted(text: str) -> str:
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    )
    return f'"{escaped}"'
