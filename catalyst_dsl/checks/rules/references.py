"""The reference rule: every name a template reads defined where it is read, every value of
the type its place expects (C106, C107, C411, C501-C508, C613-C615, C821-C823).

The checker that walks the playbook is in checks/references/; this rule runs it and
hands the `playbook` steps it found to the library's checks.
"""

from __future__ import annotations

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.checks.call_sites import CallSite
from catalyst_dsl.checks.references.checker import ReferenceChecker
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.ir import nodes as ir


def check_references(playbook: ir.Playbook, sink: DiagnosticSink, catalog: Catalog) -> list[CallSite]:
    """Check every reference and type; return the `playbook` steps for the library checks."""
    checker = ReferenceChecker(playbook, sink, catalog)
    checker.run()
    return checker.calls
