"""The `catalyst` command line: the program (program.py), the group and the commands that
check, list and compile (main.py), `run` (run.py), the commands of started runs
(lifecycle.py), `catalyst kai …` (kai.py) and the shell completion of names (completion.py).

This package imports nothing itself: program.py tunes the collector before click and the
commands are imported, and each command module is imported only when its command is asked for.
"""
