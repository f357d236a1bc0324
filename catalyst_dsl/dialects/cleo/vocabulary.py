"""cleo's vocabulary: the keys of a cantbook and of its parts, the node
types and the keys each takes, enums, registered schema names and denied commands.
"""

from __future__ import annotations

import re

NAME = "cleo"
TOP_KEYS = ("version", "name", "description", "inputs", "nodes", "edges", "error_handlers")
INPUT_KEYS = ("name", "required", "default", "description")
COMMON_KEYS = ("id", "type", "description", "depends", "requires", "ensures", "on_failure")
TYPE_KEYS = {
    "agentic": (
        "skill",
        "agent",
        "role",
        "inputs",
        "context_files",
        "profile",
        "model",
        "provider",
        "allowed_skills",
        "allowed_tools",
    ),
    "deterministic": ("command", "args", "cwd", "env", "timeout_ms"),
    "approval": ("prompt", "policy"),
}
NODE_TYPES = tuple(TYPE_KEYS)
REQUIRES_KEYS = ("from", "fields", "schema")
ENSURES_KEYS = ("outputFiles", "exitCode", "schema")
ON_FAILURE_KEYS = ("inject_into", "max_iterations", "escalate")
EDGE_KEYS = ("from", "to", "contract", "when")
CONTRACT_KEYS = ("requires", "ensures")
WHEN_OPERATORS = ("equals", "notEquals", "exists", "in", "truthy")
HANDLER_KEYS = ("on", "action", "message")
ROLES = ("orchestrator", "lead", "worker")
POLICIES = ("conservative", "permissive", "custom")
HANDLER_ON = ("agentic_timeout", "iteration_cap_exceeded", "contract_violation")
HANDLER_ACTIONS = ("inject_hint", "hitl_escalate", "abort")
#: Registered `ensures.schema` names (B2.1).
SCHEMAS = (
    "task_tree",
    "evidence",
    "version_bump_report",
    "changelog_entry",
    "publish_report",
    "research_summary",
    "consensus_decision",
    "architecture_plan",
    "specification_document",
    "implementation_diff",
    "validation_report",
    "audit_report",
    "test_report",
    "release_confirmation",
)
#: Programs cleo's guarded runner refuses to start (CLE-21).
DENIED_COMMANDS = ("rm", "rmdir", "shutdown", "reboot", "mkfs", "dd", "shred", "fdisk", "mkswap", "kill", "killall")
#: Keys people write for something cleo spells elsewhere.
MISPLACED = {
    "iteration_cap": "on_failure.max_iterations",
    "max_iterations": "on_failure.max_iterations",
    "retries": "on_failure.max_iterations",
    "inject_into": "on_failure.inject_into",
    "escalate": "on_failure.escalate",
}
NODE_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
KEBAB = re.compile(r"^[a-z][a-z0-9-]*$")
