"""Which store a command keeps runs in: the shared one when a state URL is given.

`CATALYST_STATE_URL` wins over the `state-url` setting of the user's own configuration. A
repository's `catalyst.toml` may not give it (project/config.py refuses it there): the
URL carries credentials, and a pull request must not choose where runs, approvals and
tokens go.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from catalyst_dsl.runtime.errors import EXIT_INVALID, RunAbort

STATE_URL_ENV = "CATALYST_STATE_URL"

_POSTGRES = re.compile(r"^postgres(?:ql)?://", re.I)
_PASSWORD = re.compile(r"^(?P<head>[a-z][a-z0-9+.-]*://[^:@/]*):[^@/]*@", re.I)
_PASSWORD_PARAMETER = re.compile(r"(?P<head>[?&]password=)[^&]*", re.I)


def state_url(configured: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The shared store's URL, or None for the state directory's files. RunAbort for a URL
    this catalyst cannot keep runs at."""
    environ = os.environ if environ is None else environ
    url = (environ.get(STATE_URL_ENV) or "").strip() or (configured or "").strip()
    if not url:
        return None
    if not _POSTGRES.match(url):
        source = STATE_URL_ENV if environ.get(STATE_URL_ENV, "").strip() else "the state-url setting"
        raise RunAbort(
            EXIT_INVALID,
            f"{source} is {shown_url(url)!r}: runs can be kept in PostgreSQL only (postgresql://…)",
            help=f"give a postgresql:// URL, or unset {STATE_URL_ENV} to keep runs in the state directory",
        )
    return url


def shown_url(url: str) -> str:
    """`url` as messages show it: a password in it replaced by `***`."""
    return _PASSWORD_PARAMETER.sub(r"\g<head>***", _PASSWORD.sub(r"\g<head>:***@", url))
