"""The native language's vocabulary: the keys a playbook and its parts may hold, the shapes
of the values under them, and the names it accepts.

Kept apart from the lowering so that the reference pages and the JSON Schema
(report/) can list the keys without loading the lowerer.
"""

from __future__ import annotations

import re

from catalyst_dsl.actions.control.checkpoint import APPROVAL_POLICY
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t

KEBAB = re.compile(r"^[a-z][a-z0-9-]*$")
PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
SUPPORTED_LANGUAGE_VERSIONS = (1,)
POLICY_ACTIONS = ("Stop", "Continue", "SilentlyContinue", "Ignore", "Inquire", "Suspend")
INPUT_TYPE_KEYS = ("string", "number", "boolean", "enum", "array", "object", "any")
TRANSFORMS = ("kebab-case", "snake-case", "camel-case")
TOP_LEVEL_KEYS = (
    "name",
    "id",
    "description",
    "owner",
    "catalyst",
    "reviewers",
    "triggers",
    "inputs",
    "outputs",
    "artifacts",
    "allowedWritePaths",
    "errorPolicy",
    "steps",
    "catch",
    "finally",
    "oneRunPer",
)


def ordinary_yaml(root, is_action) -> bool:
    """Whether a YAML document is no playbook at all (a `config.yaml`, a list of hooks): a
    mapping with none of a playbook's keys, a list of anything but steps, or a lone value
    (an empty document is C014's). Such a file found by a directory scan is skipped; named
    explicitly, it gets one C018 instead of a list of errors about keys it never meant."""
    from catalyst_dsl.syntax.yaml_nodes import YMap, YScalar, YSeq

    def keys(node) -> list[str]:
        return [k.value for k, _ in node.pairs if isinstance(k.value, str)] if isinstance(node, YMap) else []

    if isinstance(root, YMap):
        return not any(k in TOP_LEVEL_KEYS for k in keys(root))
    if isinstance(root, YSeq):  # steps without the playbook around them are C201's
        return not any(is_action(k) for item in root.items for k in keys(item))
    return isinstance(root, YScalar) and root.value is not None


#: What a Markdown playbook needs to do something, for the help of C014 and C204.
MARKDOWN_NEEDS = (
    "write the prompt as Markdown text, or phases as headings such as `## Phase 1: Spec`;"
    " front matter between --- lines is optional"
)

#: A step's `bindings:`: names and the values merged into the playbook's `bindings` object.
BINDINGS = t.ObjectT((), t.ANY)
REVIEWERS = t.obj(required=t.opt(t.ArrayT(t.STRING)), optional=t.opt(t.ArrayT(t.STRING)))
#: `checkpoint:` next to an action, long form (docs/actions.md, "Checkpoints on a step").
GATE = t.obj(
    when=t.opt(t.EnumT(("before", "after")), "before or after the step runs (default after)"),
    message=t.opt(t.STRING),
    options=t.opt(t.ArrayT(t.EnumT(ir.GATE_OPTIONS)), "the answers offered"),
    policy=t.opt(APPROVAL_POLICY),
)
TRIGGER = t.obj(event=t.req(t.STRING), action=t.opt(t.STRING), args=t.opt(t.ObjectT((), t.ANY)))
