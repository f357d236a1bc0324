"""Which control action's scope rule the reference checker follows, by the action's name.

Each control action keeps its rule in its own module (actions/control/); they know
nothing of the checker but the methods it passes itself in with. The checker finds a
step's rule here; an action not listed is an ordinary one (its config typed, its
result its declared type).
"""

from __future__ import annotations

from catalyst_dsl.actions.control import CONTROL, var

#: action name -> check_scope(checker, step, scope), which returns the step's result type:
#: the rule of every control action whose module has one (`return` and `throw` have none).
SCOPE_RULES = {name: module.check_scope for name, module in CONTROL.items() if hasattr(module, "check_scope")}

#: action name -> the literal name a step of it defines (besides its step name), if any.
DEFINED_NAMES = {"var": var.defined_name}
