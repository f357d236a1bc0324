"""The control actions: the actions that run other steps, one module each.

Each module holds its action's declaration (`SPEC`, which actions/builtin.py lists), its
run (`run(engine, run, config)`) and its what-if (`simulate`, the same function where a
plan runs it as written), and says how the engine treats its step:

- REPORTS_FINISH: the step reports its end (`var`, `function`, `return` and `throw` do not);
- KEEPS_RESULT: the journal keeps its result (the others are run again on resume);
- NAMES_RESULT: a step name holds its result (a `var`'s or `function`'s names the
  variable or the function instead).

A control module imports the IR's node classes inside the functions that use them, not
at its top: the built-in catalog lists every control action's SPEC, and a check replayed
from the cache reads that catalog without ever needing the IR.

The engine (runtime/engine/) finds a step's module here by its action's name. The
`checkpoint` action's module is among them but is not a control action: a resume
restores it like any other (PAUSES).
"""

from __future__ import annotations

from types import ModuleType

from catalyst_dsl.actions.control import (
    checkpoint,
    for_each,
    function,
    if_,
    parallel,
    playbook,
    retry_block,
    return_,
    route,
    throw,
    try_,
    var,
)

#: action name -> the module that runs it.
CONTROL: dict[str, ModuleType] = {
    "var": var,
    "return": return_,
    "function": function,
    "if": if_,
    "route": route,
    "for-each": for_each,
    "try": try_,
    "throw": throw,
    "parallel": parallel,
    "playbook": playbook,
    "retry-block": retry_block,
}
#: action name -> the module of an action the engine runs as one of its pauses.
PAUSES: dict[str, ModuleType] = {"checkpoint": checkpoint}


def names_result(action: str) -> bool:
    """Whether a step of `action` binds its result to its step name: every action but the
    control actions that say otherwise (a `var`'s or `function`'s name is the step's only).
    The engine, the simulator and the checker all ask here, so they bind the same names."""
    control = CONTROL.get(action)
    return control is None or control.NAMES_RESULT
