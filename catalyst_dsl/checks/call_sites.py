"""The `playbook` steps a playbook's reference checks find, with what they pass.

The reference checks note each call site; the library's checks (calls, permissions,
cycles) read them. Kept in a module of their own, apart from the checker: a run read
from the check cache gets its call sites back without loading the checks.
"""

from __future__ import annotations

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.ir import types as t  # noqa: F401 (CallSite's annotation)
from catalyst_dsl._internal.records import field, record


@record
class CallSite:
    """A `playbook` step, whether a condition guards it, and the types of the inputs it passes.

    `input_types` is None when `inputs` is not a literal mapping (nothing to check key by key).
    """

    step: ir.Step
    guarded: bool
    input_types: dict[str, t.Type] | None = field(eq=False)
