"""The what-if: a run that changes nothing and says what a real run would do, as a plan.

- simulator.py: `Simulator`, the engine (runtime/engine/) with its effects overridden: each
  step becomes an entry of the plan instead of running for real, and what it would change
  is recorded there (the way Jinja2's SandboxedEnvironment overrides its parent's calls);
- recording.py: the gateway's performer that records writes as diffs and refuses what a
  plan cannot do (start a program, change a remote system);
- planning.py: the plan being recorded, entry by entry.
"""
