"""Which control action's scope rule the reference checker follows, by the action's name.

Each control action keeps its rule in its own module (actions/control/); they know
nothing of the checker but the methods it passes itself in with. The checker finds a
step's rule here; an action not listed is an ordinary one (its config typed, its
result its declared type).
"""

from __future__ import annotations

from catalyst_dsl.actions.control import for_each, function, if_, parallel, playbook, retry_block, try_, var

#: action name -> check_scope(checker, step, scope), which returns the step's result type.
SCOPE_RULES = {
    "var": var.check_scope,
    "if": if_.check_scope,
    "for-each": for_each.check_scope,
    "try": try_.check_scope,
    "function": function.check_scope,
    "retry-block": retry_block.check_scope,
    "parallel": parallel.check_scope,
    "playbook": playbook.check_scope,
}

#: action name -> the literal name a step of it defines (besides its step name), if any.
DEFINED_NAMES = {"var": var.defined_name}
