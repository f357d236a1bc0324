"""Where the run-time builds and calls the interpreter: for a run, and for a what-if.

Kept in one place so that the interpreter's constructor and entry point are named once.
The interpreter (with every action) is imported here, when a run or a plan starts, after
the playbook and its inputs are checked: a what-if refused for its inputs does not load it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.events import Events
from catalyst_dsl.runtime.lifecycle.context import RunContext

if TYPE_CHECKING:
    from catalyst_dsl.runtime.effects.gateway import EffectsGateway
    from catalyst_dsl.runtime.engine.frames import Hooks
    from catalyst_dsl.runtime.simulation.planning import PlanRecorder


def simulate(
    context: RunContext,
    playbook: ir.Playbook,
    file: str,
    values: dict[str, Any],
    gateway: EffectsGateway,
    recorder: PlanRecorder,
    hooks: Hooks,
    *,
    scratch: Path,
) -> Any:
    """The playbook's outputs as far as a what-if knows them; its steps go to `recorder`."""
    from catalyst_dsl.runtime.engine.frames import Frame
    from catalyst_dsl.runtime.simulation.simulator import Simulator

    interpreter = Simulator(
        run_id="what-if",
        catalog=context.catalog,
        plugins=context.plugins.action,
        events=Events(mask=context.masker.mask, silent=True),
        hooks=hooks,
        mode="manual",
        scratch=scratch,
        max_depth=context.project.config.max_depth,
        plan=recorder,
        settings=context.project.config,
    )
    return interpreter.run_playbook(Frame(playbook, file, values, gateway))


def perform(
    context: RunContext,
    state,
    playbook: ir.Playbook,
    file: str,
    values: dict[str, Any],
    gateway: EffectsGateway,
    hooks: Hooks,
    *,
    scratch: Path,
    replay: dict[str, dict],
    resumed: bool,
) -> Any:
    """Run the playbook for real, its steps recorded through `hooks`; its checked outputs."""
    from catalyst_dsl.runtime.engine.engine import Engine
    from catalyst_dsl.runtime.engine.frames import Frame, check_outputs

    interpreter = Engine(
        run_id=state.run_id,
        catalog=context.catalog,
        plugins=context.plugins.action,
        events=context.events,
        hooks=hooks,
        mode=state.mode,
        scratch=scratch,
        max_depth=context.project.config.max_depth,
        replay=replay,
        settings=context.project.config,
        recovering=state.in_flight if resumed else None,
    )
    outputs = interpreter.run_playbook(Frame(playbook, file, values, gateway))
    check_outputs(playbook, outputs)
    return outputs
