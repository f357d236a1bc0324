"""A playbook's own rules, in the order each compile runs them.

Each is called as `rule(playbook, sink, catalog)` and returns the `playbook` steps it
found, if it looks for them (only the reference rule does; the library's rules read them).
"""

from __future__ import annotations

from catalyst_dsl.checks.rules import caching, catch_clauses, gates, outputs, references, route_overlap

FILE_RULES = (
    references.check_references,
    outputs.check_outputs,
    outputs.check_untested_code,
    outputs.check_artifact_paths,
    gates.check_gates,
    route_overlap.check_route_overlaps,
    catch_clauses.check_catch_clauses,
    caching.check_caching,
)
