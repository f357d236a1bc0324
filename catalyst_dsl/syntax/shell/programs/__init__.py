"""Programs that treat one of their arguments as code, a program to run, or a variable name.

A value reaches a bash script as a reference to an environment variable (`bash/`),
so bash itself never reads it as code. But the program that receives the value as an
argument may: `eval` and `bash -c` run it, `sudo`, `xargs` and `find -exec` run the
program it names, and `read`, `unset` or `printf -v` take it as a variable name, whose
`[subscript]` bash evaluates as arithmetic. These tables say where in such a command a
value is refused. They are facts about programs, so they are a list: a program not named
here is trusted to read its arguments as data (docs/security.md says so).

The same tables serve bash scripts and argv steps (`command`, cleo's deterministic
nodes), so `catalyst check` and a run refuse the same commands.

The modules: words.py reads a command's words and options; refusals.py walks a command
and gives the arguments refused (`refused_arguments`), with the facts of each kind of
program: prefixes that run another (prefix_tables.py, prefixes.py), interpreters and
shells (interpreters.py), bash's builtins that run code or take names
(bash_builtins.py), programs whose options run programs (options.py), git (git.py).
stdin.py says which commands run their input as code; code_variables.py which
variables programs read as code.
"""
