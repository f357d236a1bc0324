"""A run's lifecycle around the interpreter: start, resume, plan (the what-if), cancel.

Each is a small service given the project's shared `RunContext` (context.py): the
starter and the resumer validate and hand the run to the driver (driving.py), which
takes the locks, runs the interpreter with the hooks it records through (run_hooks.py),
and whatever ends the run (success, a failed step, a pause, Ctrl-C, a cancel) saves the
snapshot first and releases the locks after. The planner builds a what-if's plan data.
"""
