"""The `catalyst` program: what its console scripts and `python -m catalyst_dsl` run.

The collector is tuned for the command (collector.py) before anything else is imported:
importing click and catalyst's command line allocates tens of thousands of objects that
live to the end, and under the default thresholds the collector scanned them about ten
times over (about 1 ms of a what-if) before `main.main` raised them. Importing this module
imports nothing else; `main.main` stays the entry for programs that embed the command line.
"""

from __future__ import annotations


def main() -> None:
    from catalyst_dsl._internal.collector import tune_process

    tune_process()
    from catalyst_dsl.cli.main import command_line

    command_line()
