"""AI adapters: what `ai-prompt` sends a prompt to, and which one each step gets.

The interface (interface.py) is all a run needs to talk to one; the deterministic mock
(mock.py, its scripts in mock_script.py) is the default when nothing is configured; the
real ones are built in (command.py, openai_compatible.py, sharing attempts.py) or come as
plugins (`catalyst.adapters` entry points). builtin.py says what a project's settings make
of the built-in ones, choosing.py which adapter a step gets, and choice.py checks every
step's before a run starts: one configured but unusable is an error, never a quiet switch
to the mock.
"""
