"""kai's vocabulary (the keys, enums and patterns of A3) and the records a read kai
playbook is made of.
"""

from __future__ import annotations

import re
from typing import Optional

from catalyst_dsl._internal.records import record
from catalyst_dsl.syntax.source import Span
from catalyst_dsl.syntax.yaml_nodes import YScalar

DIALECT = "kai"
TOP_KEYS = ("name", "description", "version", "args", "steps")
ARG_KEYS = ("name", "description", "required")
STEP_KEYS = (
    "id",
    "command",
    "args",
    "autonomy",
    "error_policy",
    "preconditions",
    "postconditions",
    "escalation_triggers",
    "parallel_group",
    "model",
)
REQUIRED_STEP_KEYS = ("id", "command", "autonomy", "error_policy")
AUTONOMY = ("auto", "gate_on_breaking", "gate_always", "skip")
ERROR_POLICIES = ("stop", "retry_once", "gate")
MODELS = ("opus", "sonnet", "haiku")
TRIGGERS = ("postcondition_fail", "verdict_fail", "agreement_breaking", "subagent_error")
CONDITIONS = (
    "spec_exists",
    "plan_exists",
    "tasks_exists",
    "agreement_exists",
    "agreement_pass",
    "qa_plan_exists",
    "qa_verdict_pass",
    "pr_created",
)
#: Playbook names and step ids (kai's own pattern: a leading digit or hyphen is allowed).
KAI_NAME = re.compile(r"^[a-z0-9-]+$")
#: An arg name a `{{ }}` can name.
ARG_REFERENCE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
COMMAND = re.compile(r"^/[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
#: The run's `feature` is one path segment: conditions build paths from it (KAI-21).
FEATURE_PATTERN = r"^(\.{0,2}[A-Za-z0-9_-]|\.\.\.)[A-Za-z0-9._-]*$"

#: The error codes an escalation trigger answers (A5), each handled by a question.
TRIGGER_CODES = {
    "postcondition_fail": ("PostconditionFailed",),
    "verdict_fail": ("VerdictFailed",),
    "agreement_breaking": ("AgreementBreaking",),
    "subagent_error": ("AIAdapterError", "AIAdapterUnavailable", "StepTimeout"),
}
#: Where the agents may write: the project (as in kai), and by name the folders kai's
#: conditions read, which a run creates when missing so that an agent may make files in
#: them (a program's confinement covers only the entries of the project root that exist).
GRANTS = ("**", "specs/**", ".agreements/**", ".qa/**")
#: What the agent of a step may do: everything, as in kai (read, write, run programs).
AGENT_TOOLS = ("read", "write", "edit", "shell")
#: The native step keys and actions that make a kai-shaped file also read as native.
NATIVE_STEP_KEYS = ("name", "condition", "errorPolicy", "timeout", "checkpoint", "writes", "isolated")


@record
class Named:
    """A string value with where it was written."""

    text: str
    span: Span


@record
class KaiArg:
    name: str
    description: str
    required: bool
    span: Span


@record
class KaiStep:
    id: Optional[Named]
    command: Optional[Named]
    args: Optional[YScalar]
    autonomy: Optional[Named]
    error_policy: Optional[Named]
    preconditions: tuple[Named, ...]
    postconditions: tuple[Named, ...]
    triggers: tuple[Named, ...]
    group: Optional[Named]
    model: Optional[Named]
    #: The keys written on the step (for the rules about `skip` steps).
    keys: dict
    span: Span

    @property
    def skipped(self) -> bool:
        return self.autonomy is not None and self.autonomy.text == "skip"


@record
class KaiDocument:
    name: Optional[Named]
    description: str
    version: str
    args: tuple[KaiArg, ...]
    steps: tuple[KaiStep, ...]
    span: Span
