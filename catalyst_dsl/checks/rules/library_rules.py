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
    shellcheck.check_shellcheck,
    roles.check_roles,
    slash_commands.check_slash_commands,
    kai.check_kai,
    cycles.check_call_cycles,
)
