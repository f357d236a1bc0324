"""The library's rules, in the order `catalyst check` runs them once every file is compiled.

Each is called as `rule(library, files, sink)`: `library` holds the files checked and
everything they call (a `checks.library_view.LibraryView`), `files` are those reported
on. A rule returns the files other than playbooks it reported on (kai's index), or None.
"""

from __future__ import annotations

from catalyst_dsl.checks.rules import (
    calls,
    cycles,
    kai,
    names,
    permissions,
    programs,
    roles,
    shellcheck,
    slash_commands,
)

LIBRARY_RULES = (
    calls.check_calls,
    names.check_names,
    permissions.check_permissions,
    programs.check_programs,
    roles.check_roles,
    slash_commands.check_slash_commands,
    kai.check_kai,
    cycles.check_call_cycles,
)

#: The library's rules as one share of a check split across processes runs them
#: (`project.shards`): of the names, only its files' own (C803); two playbooks of one name
#: (C802) and the cycles of calls are found by the process that split the check, among
#: every share's names and calls.
SHARE_RULES = tuple(
    names.check_file_names if rule is names.check_names else rule
    for rule in LIBRARY_RULES
    if rule is not cycles.check_call_cycles
)

#: Rules whose findings are advice on what a step runs, not on the playbook: `catalyst
#: check` and the language server run them after LIBRARY_RULES, a run's own check does not
#: (an error ShellCheck finds in a script does not stop the run that would run it).
ADVICE_RULES = (shellcheck.check_shellcheck,)
