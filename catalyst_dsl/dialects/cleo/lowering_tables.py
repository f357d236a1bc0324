"""What cleo's words lower to (B4, B5): handler triggers and actions as error codes and
policy actions, node types as actions, error codes, approval answers, registered schema
names as JSON Schemas.
"""

from __future__ import annotations

import re

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t

#: How deeply guarded branches may nest; a deeper graph is refused with C966, not a crash.
MAX_BRANCH_DEPTH = 200
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
#: Handler triggers and actions as catalyst error codes and policy actions (B4.8).
HANDLER_CODES = {
    "contract_violation": "ContractViolation",
    "iteration_cap_exceeded": "IterationCapExceeded",
    "agentic_timeout": "StepTimeout",
}
HANDLER_ACTIONS = {"abort": "Stop", "hitl_escalate": "Inquire", "inject_hint": "Continue"}
#: The action each node type lowers to (B5); the editor's hover of a node type reads it too.
NODE_ACTIONS = {"agentic": "ai-prompt", "deterministic": "command", "approval": "checkpoint"}
#: The error code of a failed contract (B4.6), and of an approval node answered `reject`.
CONTRACT = "ContractViolation"
REJECTED = "ApprovalRejected"
#: The answers of an approval node: `approve` (the default: ENTER, an approval without
#: `--select`) and `reject`, which fails the run as cleo's rejectGate does (B4.10).
APPROVAL_OPTIONS = ("approve", "reject")
#: The registered `ensures.schema` names that check something (B2.1), as JSON Schemas.
_NON_BLANK = {"type": "string", "pattern": r"\S"}
SCHEMAS = {
    "task_tree": {
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "required": ["title", "acceptance"],
            "properties": {
                "title": _NON_BLANK,
                "acceptance": {"type": "array", "minItems": 1, "contains": _NON_BLANK},
                "parentId": {"type": "string"},
                "depends": {"type": "array", "items": {"type": "string"}},
            },
        },
    },
    "evidence": {"anyOf": [_NON_BLANK, {"type": "array", "minItems": 1}, {"type": "object", "minProperties": 1}]},
}
#: The name of the step that checks a node's `requires` under `inject_hint` (see Lowerer.hint).
REQUIRES_CHECK = "{} (requires)"
#: The name of the step that checks a guarded edge's `contract.requires` (Lowerer.edge_check).
CONTRACT_CHECK = "{} → {} (contract)"
#: The name of the step that records the edge the walk came in by (Lowerer.entered_by).
EDGE_TAKEN = "{} (edge)"
#: How the names of the steps the lowering adds end: they are steps, not nodes.
CHECK_SUFFIXES = tuple(name[name.rindex("}") + 1 :] for name in (REQUIRES_CHECK, CONTRACT_CHECK, EDGE_TAKEN))
#: What a broken contract says (`owner` is a node, 'build', or an edge, the edge 'a' → 'b';
#: `field` requires or ensures), as cleo's users wrote it: `runs export --format cleo`
#: reads the field and the key back from it (CONTRACT_SAID_PATTERN).
CONTRACT_SAID = "{owner} {field} `{key}` in the context, and it is not there"
CONTRACT_EXIT_SAID = "{owner} ensures exit code {code}, and the program exited with "
CONTRACT_SAID_PATTERN = re.compile(r"^(?:'[^']*'|the edge '[^']*' → '[^']*') (requires|ensures) (?:`([^`]*)`)?")
#: What a node merges into the context: an object, any keys.
MERGED_OBJECT = t.ObjectT((), t.ANY)

#: One lowered step and the nodes it holds (itself, or every node of an `if` or a block), so
#: a loop-back can find the steps from its target to its node.
Item = tuple[ir.Step, set]
