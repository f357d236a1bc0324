"""What every part of the native lowerer shares: the file, where findings go, the actions
known, and the value lowerer. Each part (header, inputs, policies, steps, functions) is a
class of its own over these; `lowerer.CatalystLowerer` joins them and sets them up.
"""

from __future__ import annotations

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.dialects.values import ValueLowerer
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.syntax.source import SourceFile


class LoweringPart:
    source: SourceFile
    sink: DiagnosticSink
    catalog: Catalog
    #: "catalyst-yaml" or "markdown": the form the playbook is written in.
    dialect: str
    values: ValueLowerer
    #: Functions defined so far, in document order: name -> their input declarations.
    functions: dict[str, tuple[ir.InputDecl, ...]]
