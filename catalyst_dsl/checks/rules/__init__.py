"""The checks, one rule (or one tightly-knit family) per module, in two ordered lists.

playbook_rules.FILE_RULES: a playbook's own rules, run on each compile.
library_rules.LIBRARY_RULES: the rules that need the whole library (what a playbook
calls, the project's files, the machine), run once every file is compiled.

The lists are apart because the library compiles its files with the playbook rules, and
because a run whose check is replayed from the cache loads the library's rules but no
compiler: the playbook rules (the reference checker) stay out of it.
"""
