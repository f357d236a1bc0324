"""What passes between the effects gateway and its performer (`gateway.Performer`): the
checked file (`Target`) it is handed and what a program's run gives back
(`ProcessOutcome`).

The gateway checks an effect and a performer carries it out: `gateway.RealPerformer`
in a run, a simulated one in a what-if (`runtime/simulation/`). These values are here,
below both, so that the modules that run programs (`process.py`, `confinement/`) can
make them without importing the gateway, which imports them.
"""

from __future__ import annotations

from pathlib import Path

from catalyst_dsl._internal.records import field, record


@record
class Target:
    """A checked file: where it is on disk and how the playbook named it."""

    written: str
    #: The file's real path (`base / inner`): what-if keys its overlay by it.
    path: Path
    #: Project-relative POSIX path as written, or None for scratch files and resources.
    relative: str | None
    #: The directory the file is reached from, by a handle (project, scratch, resources),
    #: and the path below it with every link resolved: the effect must find the same.
    base: Path = field(kw_only=True)
    inner: str = field(kw_only=True)


@record
class ProcessOutcome:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
