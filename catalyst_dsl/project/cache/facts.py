"""What a file's cached result depends on besides its bytes and the build: what the
plugin catalog says about each action name the file uses that is not built in, and how
the file's text comes from its bytes.

The store records the first with every entry and compares it on each read (installing
or upgrading a plugin recomputes the files that use it); the replay of a whole check
asks it again for each name its findings rest on.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from catalyst_dsl._internal import digests
from catalyst_dsl.project.cache.codec import CacheEntryError

if TYPE_CHECKING:
    from catalyst_dsl.actions.catalog import Catalog


def _recording(base: Catalog, asked: list[str]) -> Catalog:
    """The catalog as it is, noting in `asked` each name it had to ask the plugins about."""
    return _recording_class()(base, asked)


@functools.lru_cache(maxsize=1)
def _recording_class() -> type:
    from catalyst_dsl.actions.catalog import Catalog

    class Recording(Catalog):
        def __init__(self, base: Catalog, asked: list[str]) -> None:
            self._specs = base._specs
            self._base = base
            self._asked = asked
            self._fallback = base._fallback

        def get(self, name: str):
            if name not in self._specs:
                self._asked.append(name)
            return self._base.get(name)

    return Recording


def _plugin_digest(catalog: Catalog, action: str) -> str:
    """What the catalog says about an action that is not built in, as a digest."""
    if not isinstance(action, str):
        raise CacheEntryError("an action name is text")
    spec = catalog.get(action)
    return _said(repr(spec)) if spec is not None else _missing(catalog.why_missing(action))


def _missing(why: str | None) -> str:
    """The digest of an action no one declares (`why`: a plugin that declares it but failed)."""
    return _said(f"missing: {why}")


def _said(text: str) -> str:
    return digests.hexdigest(text.encode("utf-8", "surrogatepass"))


def _text_form(data: bytes) -> list:
    """How the file's text comes from its bytes (see `_text`): [bom, length]."""
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data[3 if bom else 0 :].decode("utf-8")
    return [bom, len(text.replace("\r\n", "\n").replace("\r", "\n"))]


def _text(data: bytes, form) -> str | None:
    """The text `decode` made of these bytes (a result with a source decoded without error)."""
    if not (isinstance(form, list) and len(form) == 2 and isinstance(form[0], bool) and type(form[1]) is int):
        raise CacheEntryError("the text form is [bom, length]")
    try:
        text = data[3 if form[0] else 0 :].decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if len(text) == form[1] else None
