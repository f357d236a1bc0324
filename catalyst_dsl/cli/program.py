"""The `catalyst` program: what its console scripts and `python -m catalyst_dsl` run.

The collector is tuned for the command (collector.py) before anything else is imported:
importing click and catalyst's command line allocates tens of thousands of objects that
live to the end, and under the default thresholds the collector scanned them about ten
times over (about 1 ms of a what-if) before `main.main` raised them. Importing this module
imports nothing else; `main.main` stays the entry for programs that embed the command line.
"""

from __future__ import annotations


import sys

#: The commands that start or continue a run. SIGTERM stops them as Ctrl-C does (state
#: saved, exit 130) from the process's first moment: while click and the project are still
#: being loaded, too, not only from the point the command itself is reached.
RUN_COMMANDS = ("run", "resume")
#: A run stopped by Ctrl-C, Ctrl-D at a prompt or SIGTERM (runtime.errors, not imported yet).
EXIT_INTERRUPTED = 130


def main() -> None:
    if sys.argv[1:2] and sys.argv[1] in RUN_COMMANDS:
        import _signal  # loaded by Python itself at start; `signal` would import its enums (about 1 ms)

        _signal.signal(_signal.SIGTERM, _interrupt)
    try:
        from catalyst_dsl._internal.collector import tune_process

        tune_process()
        from catalyst_dsl.cli.main import command_line

        command_line()
    except KeyboardInterrupt:
        # Ctrl-C before any command could say it (while loading): no traceback, the exit
        # code of an interrupt.
        sys.stderr.write("\ninterrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt
