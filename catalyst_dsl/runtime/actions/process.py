"""`bash` and `command`: programs run through the gateway, output streamed to the log."""

from __future__ import annotations

import os
import re
import shutil

from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.actions.failure_line import failure_line
from catalyst_dsl.runtime.errors import StepError


def _run(ctx: ActionContext, argv: list[str], config: dict, stdin: str | None = None) -> dict:
    env = {str(k): str(v) for k, v in (config.get("env") or {}).items()}
    outcome = ctx.gateway.run_process(
        argv,
        declared_writes=ctx.writes,
        cwd=config.get("cwd"),
        env=env,
        timeout=ctx.remaining(),
        on_output=ctx.output,
        stdin=stdin,
    )
    result = {"stdout": outcome.stdout, "stderr": outcome.stderr, "exitCode": outcome.exit_code}
    if outcome.timed_out:
        raise StepError(
            "StepTimeout", f"`{argv[0]}` was stopped after the step's timeout of {ctx.timeout:g}s", metadata=result
        )
    if outcome.exit_code != 0:
        # Errors are written on stderr: its line that tells why (failure_line.py), else stdout's.
        said = failure_line(outcome.stderr, outcome.stdout)
        detail = f": {said}" if said else ""
        raise StepError(
            "CommandFailed",
            f"`{argv[0]}` exited with code {outcome.exit_code}{detail}",
            metadata=result,
            guidance="set errorPolicy: {default: {action: Continue}} on the step to go on and read its exitCode",
        )
    return result


#: Where `bash` was found, by the PATH it was looked up in.
_SHELLS: dict[str | None, str] = {}


def _shell() -> str | None:
    """`shutil.which("bash")`, looked up once for a PATH: the lookup stats each directory of
    PATH in turn (a dozen calls a step on a machine with a long PATH), and a run of many
    `bash` steps asks the same question each time. An answer no longer there is looked up again."""
    path = os.environ.get("PATH")
    found = _SHELLS.get(path)
    if found is None or not os.access(found, os.X_OK):
        found = shutil.which("bash")
        if found is not None:
            _SHELLS[path] = found
    return found


def bash(ctx: ActionContext, config: dict) -> dict:
    shell = _shell()
    if shell is None:
        raise StepError(
            "ActionUnavailable",
            "bash is not installed on this machine",
            guidance="install bash, or use `command` with an argv list",
        )
    # The script is a file in the run's scratch space: no length limit of the command line
    # applies, and the program's input is empty. (On bash's input, as `bash -s`, an
    # `exec <<< "$value"` in the script would make the value the rest of the script.)
    import secrets

    written = f"temp://bash/{secrets.token_hex(8)}.sh"
    # Not synced (`EffectsGateway.script`): only this step's program reads it, and a resume writes it anew.
    script = scratch_paths(ctx, config["script"]).encode("utf-8", "surrogatepass")
    with ctx.gateway.script(written, script) as target:
        return _run(ctx, [shell, "-e", "-o", "pipefail", str(target.path)], config)


#: `temp://name` written in a script: the path runs to the first space, quote or shell operator.
_SCRATCH_WORD = re.compile(r"temp://([^\s'\"`;|&<>()$]*)")


def scratch_paths(ctx: ActionContext, script: str) -> str:
    """The script with each `temp://x` replaced by where the run's scratch space really is.

    A program cannot open `temp://`; the original engine rewrites these before running a
    script, and playbooks rely on it. The directory is created so the script can write.
    Only the author's text is rewritten: a value placed in the script (`escaping.Script`
    says where) is data and arrives as it was.
    """
    import shlex  # here, not at the top: every run and what-if imports this module (about 0.3 ms)

    values = getattr(script, "values", ())

    def real(match: re.Match) -> str:
        if any(start < match.end() and match.start() < end for start, end in values):
            return match.group(0)
        path = ctx.gateway.scratch_path("temp://" + match.group(1))
        ctx.gateway.scratch.mkdir(parents=True, exist_ok=True)
        return shlex.quote(str(path))

    return _SCRATCH_WORD.sub(real, script)


def command(ctx: ActionContext, config: dict) -> dict:
    argv = [str(a) for a in config["argv"]]
    if not argv:
        raise StepError("InvalidConfig", "`command` needs at least the program name in argv")
    if shutil.which(argv[0], path=None) is None and "/" not in argv[0]:
        # Also ActionUnavailable, the code of every step whose program is missing (bash, node),
        # so one errorPolicy or catch covers them all.
        raise StepError(
            "CommandNotFound",
            f"the program `{argv[0]}` is not installed or not on PATH",
            aliases=("ActionUnavailable",),
            guidance=f"install `{argv[0]}`, or name a program this machine has",
        )
    return _run(ctx, argv, config)


ACTIONS = {"bash": bash, "command": command}
