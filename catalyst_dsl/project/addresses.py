"""Network addresses as settings and steps name them: which reach this machine, and which
would carry a credential unencrypted to another one.

Settings (`project/config.py`) and the clients that send credentials (`runtime/effects/network.py`,
the AI adapters, the GitHub actions, the pull-request comment) ask the same questions, so
the answers live here, below both.
"""

from __future__ import annotations

import urllib.parse

#: What to do about a credential that would cross the network in clear text.
CLEAR_TEXT_FIX = "use an https:// URL, or a server on this machine (localhost, 127.0.0.1, ::1)"


def on_this_machine(host: str) -> bool:
    """Whether `host` names this machine: `localhost` (and `*.localhost`) or a loopback address."""
    import ipaddress

    host = host.lower().strip("[]")
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def in_clear_text(url: str) -> str | None:
    """The host a credential sent to `url` would reach unencrypted over the network (plain
    http:// to another machine), or None when it would not: https, or this machine."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None  # not a URL: whoever reads it refuses it for that
    if parts.scheme.lower() != "http" or not host or on_this_machine(host):
        return None
    return host
