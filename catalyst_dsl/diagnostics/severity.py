"""How much a finding matters: an error stops a run, a warning and a note do not.

A module of its own because both the table of codes (each code's severity) and the
diagnostic model (each finding's) use it, and the model looks a code up in the table.
"""

from __future__ import annotations

import enum


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]
