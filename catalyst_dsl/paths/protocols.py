"""Where a protocol path (`xe://`, `temp://`, `catalyst://`) lands, for files and calls.

One answer for every phase that turns a written path into a project path: the write
permissions, the call resolution of the library, and later the interpreter's pre-flight.
"""

from __future__ import annotations

import re

from catalyst_dsl.expr_builtins import PROTOCOLS
from catalyst_dsl._internal.records import record

#: The run's scratch space: always writable, and empty until the run writes into it.
SCRATCH = "temp://"


@record
class Placed:
    """A written path placed in the project.

    `path` is project-relative, or None when the path is not in the project (`temp://`,
    or a `problem`, such as catalyst's own read-only resources).
    """

    path: str | None
    problem: str | None = None

    @property
    def scratch(self) -> bool:
        return self.path is None and self.problem is None


def place(text: str) -> Placed:
    if text.startswith(SCRATCH):
        return Placed(None)
    if text.startswith("xe://"):
        return Placed(".xe/" + text[len("xe://") :])
    if text.startswith("catalyst://"):
        return Placed(None, "catalyst:// holds catalyst's own resources, which are read-only")
    return Placed(text)


def literal_leaving_base(text: str) -> str | None:
    """For a plain value that is one protocol path (`xe://../x`: a known protocol, no
    whitespace, so not prose that mentions one), how it leaves its base; else None."""
    protocol, sep, rest = text.partition("://")
    if not sep or protocol not in PROTOCOLS or any(c.isspace() for c in text):
        return None
    return leaves_base(rest)


def leaves_base(path: str) -> str | None:
    """How the part after `protocol://` leaves its base directory: "absolute", "climbs"
    (a `..` segment), or None. C106 reports it, so write checks need not say it again."""
    if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path):
        return "absolute"
    if ".." in re.split(r"[\\/]", path):
        return "climbs"
    return None
