"""What an action sees of the run: its config, the gateway, the log and the AI adapters.

Built-in and plugin actions get the same context; it is their only way to act.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from catalyst_dsl._internal.records import factory, record
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.gateway import EffectsGateway, FileTooLarge
from catalyst_dsl.runtime.effects.performing import Target


@record(frozen=False)
class ActionContext:
    run_id: str
    #: How the step is named in messages: its name, or `action` at its line.
    step_id: str
    action: str
    gateway: EffectsGateway
    #: The step's declared `writes:`, rendered.
    writes: tuple[str, ...]
    #: Seconds the step may take, or None.
    timeout: float | None
    #: log(level, message, data) into the run's log and console.
    log: Callable[[str, str, Any], None]
    #: output(stream, line): a line of a program's output, streamed.
    output: Callable[[str, str], None]
    #: adapter(name_or_None) -> AIAdapter, by the documented precedence.
    adapter: Callable[[str | None], Any]
    #: The project's settings (catalyst_dsl.project.config.ProjectConfig).
    settings: Any = None
    #: secret(name) -> the value from the secret providers (environment, secrets-file), or None.
    secret: Callable[[str], str | None] = lambda name: None
    #: Where the step sits in the run (its journal path), stable across resumes.
    path: str = ""
    #: variables() -> the names the step can see, as plain data (for `script`'s get()).
    variables: Callable[[], dict] | None = None
    #: render(text) -> the value of a template read at run time (a prompt file), with the
    #: names the step can see; None where nothing is rendered.
    render: Callable[[str], Any] | None = None
    #: transcript(prompt): the prompt an AI step sends, kept with its step for audit.
    transcript: Callable[[str], None] = lambda prompt: None
    started: float = factory(time.monotonic)

    @property
    def root(self) -> Path:
        return self.gateway.root

    def remaining(self) -> float | None:
        """Seconds left before the step's timeout, or None when it has none."""
        if self.timeout is None:
            return None
        return max(0.0, self.timeout - (time.monotonic() - self.started))

    def check_deadline(self) -> None:
        if self.timeout is not None and time.monotonic() - self.started > self.timeout:
            raise StepError("StepTimeout", f"the step took longer than its timeout of {self.timeout:g}s")

    def program(self, name: str) -> str:
        """Where the program `name` (a key of PROGRAMS) is, or ActionUnavailable naming it."""
        import shutil

        from catalyst_dsl.actions.catalog import PROGRAMS

        found = shutil.which(name)
        if found is None:
            raise StepError(
                "ActionUnavailable",
                f"`{self.action}` needs {name}, which is not installed on this machine (or not on PATH)",
                guidance=PROGRAMS.get(name),
            )
        return found

    def read_path(self, written: str) -> Path:
        """A path to read: inside the project, the run's scratch space or the resources, never elsewhere."""
        return read_path(self.gateway, written)

    def read_target(self, written: str) -> Target:
        """The file to read for `written`, placed like `read_path`; read it with `gateway.read_file`."""
        return read_target(self.gateway, written)


#: Tried in order when a protocol path names nothing that exists, as the original engine
#: does: `xe://product` reads `.xe/product.md`.
AUTO_EXTENSIONS = (".md", ".json")
PROTOCOLS = ("xe://", "temp://", "catalyst://")


def read_path(gateway: EffectsGateway, written: str) -> Path:
    """Where reading `written` reads: in the project, the run's scratch space or the resources
    directory (`catalyst://`), never elsewhere (see `read_target`)."""
    return read_target(gateway, written).path


def read_target(gateway: EffectsGateway, written: str) -> Target:
    """The file reading `written` reads, placed by the gateway (`EffectsGateway.source`).

    A protocol path that names nothing existing gets the first of AUTO_EXTENSIONS that
    does (`located`); each candidate is checked like the path itself.
    """
    return gateway.source(located(gateway, written))


def located(gateway: EffectsGateway, written: str) -> str:
    """`written`, or it with the extension a protocol path is found with (see AUTO_EXTENSIONS)."""
    if not written.startswith(PROTOCOLS) or written.endswith("/") or _present(gateway, written):
        return written
    for extension in AUTO_EXTENSIONS:
        if _present(gateway, written + extension):
            return written + extension
    return written


def _present(gateway: EffectsGateway, written: str) -> bool:
    try:
        # A limit of 0 makes this a probe: None only when nothing is there (a what-if
        # answers from the files its earlier steps would have left).
        return gateway.read_file(gateway.source(written), 0) is not None
    except (FileTooLarge, IsADirectoryError):
        return True
    except (StepError, OSError):
        return False
