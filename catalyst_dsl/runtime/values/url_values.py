"""Values placed into a URL: percent-encoded for the part of the URL they stand in.

An HTTP step's `url` is the author's text with values in it. A value is data: placed in
the path it is one segment's text (`/`, `..`, `?`, `#`, `%` and the rest encoded, so it
cannot climb out of its segment or start a query), placed in the query or the fragment
it is one value (`&`, `=`, `+`, `#` encoded, so it cannot add parameters). The author's
own text is sent as written.

What stands before the path (the scheme and host, or a template that starts with a
value, such as `{{ env.API }}/items/{{ id }}`) is the URL's base: taken as it is, since
it says where the request goes, and the host rules of the network gateway check that.
A URL that is one value (`url: "{{ inputs.url }}"`) is that URL. `${{ raw(x) }}` is the
author's opt-out for a value that is URL text already (a prepared query string).
"""

from __future__ import annotations

import re
import urllib.parse

from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.values import taint
from catalyst_dsl.runtime.values.env import Env
from catalyst_dsl.runtime.values.evaluate import render_placed
from catalyst_dsl.runtime.values.jsvalues import to_text
from catalyst_dsl.syntax.expr import nodes as ast
from catalyst_dsl.syntax.shell import raw_argument

#: Text that ends inside a URL's scheme and host: a value after it is part of the base.
_WITHIN_BASE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*\Z")

BASE, PATH, QUERY, FRAGMENT = "base", "path", "query", "fragment"


def render_url(value: ir.Value, env: Env) -> object:
    """The `url` of an HTTP step, each value in it encoded for where it stands."""
    return render_placed(value, env, _encoded)


def place_of(before: str) -> str:
    """Where a value written after the text `before` stands in the URL."""
    if "://" not in before or _WITHIN_BASE.match(before):
        return BASE
    after_host = before.split("://", 1)[1]
    if "#" in after_host:
        return FRAGMENT
    if "?" in after_host:
        return QUERY
    return PATH


def encode(text: str, place: str) -> str:
    """`text` as the data it is at `place` (BASE: as it is)."""
    if place == BASE:
        return text
    if place == PATH and text in (".", ".."):
        return text.replace(".", "%2E")  # a dot segment would climb the path, encoded or not by quote()
    return urllib.parse.quote(text, safe="")


def _encoded(before: str, part: ast.RefPart | ast.ExprPart, value: object) -> object:
    if raw_argument(part) is not None:
        return value
    text = to_text(value)
    written = encode(text, place_of(before))
    if written == text:
        return value  # unchanged, marks and all
    found = taint.taint_of(value)
    # The encoded form of a secret is the secret too: marking adds it to the masker.
    return taint.mark(written, found) if found else written
