"""The engine: runs a playbook's IR step by step, exactly as written.

Steps run in definition order; only a step's own `condition` skips it. Each step's
outcome goes into the run's journal and the snapshot is saved after every step (and
before every effect and checkpoint), so a run killed at any instant resumes where it
stopped: completed steps are not run again, their recorded results are restored, and
the step that was in flight runs again. Pure and read steps (`var`, `file-read`…) are
re-run instead of restored, which keeps file contents out of the snapshot.

The control actions (actions/control/) run other steps through the engine; every other
action is an implementation in runtime/actions (or a plugin) that acts only through the
gateway. A what-if is the engine's subclass in runtime/simulation/.

- engine.py: `Engine`, a step's life from its condition to its result;
- attempts.py: a step's attempts, retries and error policy;
- pauses.py: checkpoints, gates and the approvals a step's effects need;
- calls.py: calling an action: its config rendered, its implementation run;
- journal.py: what the run records about its steps, and what a resume reads back;
- step_run.py: the step being run; frames.py: the playbook being run and the session's hooks;
- signals.py: the exceptions that stop a run rather than fail a step.
"""
