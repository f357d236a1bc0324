"""Diagnostics: one model for every problem a user can fix, and the registry of codes."""

from catalyst_dsl.diagnostics.model import Diagnostic, Label, DiagnosticSink
from catalyst_dsl.diagnostics.severity import Severity

__all__ = ["Diagnostic", "Label", "Severity", "DiagnosticSink"]
