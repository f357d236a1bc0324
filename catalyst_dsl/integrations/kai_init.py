"""`catalyst kai init`: the `.playbooks/` folder of a kai project, made without touching
what is there.

It makes `playbooks/` with a commented template (`playbook.tpl.yaml`, which scans skip)
and kai's two stock workflows (`STOCK`: auto-feature and auto-validate), an index
`_index.yaml` listing the playbooks found there, and the empty `sessions/` and
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


#: kai's two stock workflows, as `init` writes them (kai's installer ships the same two):
#: one feature from its plan to its pull request, and the QA pass alone. The commands are
#: kai's (speckit, agreement, qa, feature); each step's conditions say what it needs and
#: what it must leave, so a run stopped anywhere resumes at the right step.
STOCK = {
    "auto-feature.yaml": """\
# A feature from its plan to its pull request, with kai's commands: plan and tasks from
# the spec, the agreement, the code, the agreement checked again, the QA plan and run,
# then the pull request, which waits for you. Run it with
# `catalyst run auto-feature -i feature=<branch>`; `catalyst run auto-feature --what-if`
# shows each step's command, conditions and questions first.
name: "auto-feature"
description: "One feature from plan to pull request: plan, tasks, agreement, code, checks, QA, PR"
version: "1.0"

args:
  - name: "feature"
    description: "The feature's branch, e.g. 014-search"
    required: true

steps:
  - id: "plan"
    command: "/speckit.plan"
    args: ""
    autonomy: "auto"
    preconditions: ["spec_exists"]
    postconditions: ["plan_exists"]
    error_policy: "stop"
    escalation_triggers: []

  - id: "tasks"
    command: "/speckit.tasks"
    args: ""
    autonomy: "auto"
    preconditions: ["plan_exists"]
    postconditions: ["tasks_exists"]
    error_policy: "stop"
    escalation_triggers: []

  # The agreement pins down what the feature promises; a failure here asks you.
  - id: "agreement"
    command: "/agreement.create"
    args: "{{feature}}"
    autonomy: "auto"
    preconditions: ["tasks_exists"]
    postconditions: ["agreement_exists"]
    error_policy: "gate"
    escalation_triggers: ["subagent_error"]

  # The code itself: tried twice before the run stops.
  - id: "implement"
    command: "/speckit.implement"
    args: ""
    autonomy: "auto"
    preconditions: ["agreement_exists"]
    postconditions: []
    error_policy: "retry_once"
    escalation_triggers: ["subagent_error"]

  # Asks you only when the code breaks the agreement.
  - id: "agreement-check"
    command: "/agreement.check"
    args: "{{feature}}"
    autonomy: "gate_on_breaking"
    preconditions: []
    postconditions: ["agreement_pass"]
    error_policy: "gate"
    escalation_triggers: ["agreement_breaking"]

  - id: "qa-plan"
    command: "/qa.plan"
    args: "{{feature}}"
    autonomy: "auto"
    preconditions: ["agreement_pass"]
    postconditions: ["qa_plan_exists"]
    error_policy: "stop"
    escalation_triggers: []

  - id: "qa-run"
    command: "/qa.run"
    args: "{{feature}}"
    autonomy: "auto"
    preconditions: ["qa_plan_exists"]
    postconditions: ["qa_verdict_pass"]
    error_policy: "gate"
    escalation_triggers: ["verdict_fail"]

  # Always asks before the pull request is opened.
  - id: "pr"
    command: "/feature.pr"
    args: "{{feature}}"
    autonomy: "gate_always"
    preconditions: ["qa_verdict_pass"]
    postconditions: ["pr_created"]
    error_policy: "stop"
    escalation_triggers: []
""",
    "auto-validate.yaml": """\
# The QA pass of a feature alone: its QA plan, then the run of that plan. Run it with
# `catalyst run auto-validate -i feature=<branch>`.
name: "auto-validate"
description: "QA of one feature: write its QA plan, then run it"
version: "1.0"

args:
  - name: "feature"
    description: "The feature's branch, e.g. 014-search"
    required: true

steps:
  - id: "qa-plan"
    command: "/qa.plan"
    args: "{{feature}}"
    autonomy: "auto"
    preconditions: ["spec_exists"]
    postconditions: ["qa_plan_exists"]
    error_policy: "stop"
    escalation_triggers: []

  - id: "qa-run"
    command: "/qa.run"
    args: "{{feature}}"
    autonomy: "auto"
    preconditions: ["qa_plan_exists"]
    postconditions: ["qa_verdict_pass"]
    error_policy: "stop"
    escalation_triggers: []
""",
}


@record
class Scaffolded:
    """What `init` did to each path (relative to the project): created, replaced or kept."""

    created: tuple[str, ...]
    replaced: tuple[str, ...]
    kept: tuple[str, ...]


def init(root: Path, *, force: bool = False, stock: bool = True, now: datetime.datetime | None = None) -> Scaffolded:
    base = root / ".playbooks"
    created: list[str] = []
    replaced: list[str] = []
    kept: list[str] = []
    for folder in ("playbooks", "sessions", "templates"):
        path = base / folder
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            created.append(f".playbooks/{folder}/")
    files = {base / "playbooks" / "playbook.tpl.yaml": TEMPLATE}
    if stock:
        files.update({base / "playbooks" / name: text for name, text in STOCK.items()})
    # The index last: it lists the playbooks written just before it.
    files[base / "_index.yaml"] = lambda: index_text(base, now or datetime.datetime.now(datetime.timezone.utc))
    for path, text in files.items():
        shown = path.relative_to(root).as_posix()
        data = (text() if callable(text) else text).encode("utf-8")
        if force and path.exists():
            durable.replace(path, data)
            replaced.append(shown)
        elif durable.create(path, data):
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
