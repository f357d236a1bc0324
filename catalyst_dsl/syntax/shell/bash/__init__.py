"""Values in bash scripts by reference, and the places bash would read them as code.

refs.py holds the entry points and the analyzer they run, composed of one part per
concern: the script as the parser sees it (probe.py), what its variables may hold
(facts.py), whether bash reads it as the parse does (readable.py), where each value
stands (placement.py) and the nodes that keep it data there (allow_list.py), the
author's own uses of a value (uses.py), arithmetic (arithmetic.py), programs that run
their input (stdin.py), and the script that runs (render.py).
"""
