"""Names and limits the playbook language itself defines, shared by the checker and the run.

The checker reports what breaks them before a run; the engine enforces them during one.
"""

from __future__ import annotations

#: The most attempts a `retry-block` may have (the checker says so too: C613).
MAX_BLOCK_ATTEMPTS = 10
#: The object steps merge values into with `bindings:`, readable as `{{ bindings.x }}`.
BINDINGS = "bindings"
#: The name a `retry-block`'s steps read the failure that started their attempt by.
LAST_ERROR = "__lastError"
