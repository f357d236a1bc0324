"""Results of steps marked `cache:`, kept to stand in for running the same step again.

An entry is found by what the step would do: its action, its config with every value
rendered, and, for an AI step, which adapter would answer (the settings that choose it,
and the one found on the machine). Its file name is an HMAC of that with the run key, so
a listing shows nothing of a prompt, and its content carries an HMAC over the name and
what it holds: an entry catalyst did not write (a file committed into the folder, one
edited) is never read, so a repository cannot hand a run an answer of its choosing. An
entry past its time is not used and is replaced when the step runs again.

Entries live in `step-cache/` of the state directory, which no step may read or write (the
effects gateway protects the state directory); `catalyst cache clean --steps` removes
them. A step whose config holds a secret is never cached: a secret is never written to a
file by catalyst.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from catalyst_dsl.runtime.state import durable

#: The folder of the state directory that holds the entries.
FOLDER = "step-cache"
#: An entry's file name: the HMAC of what the step would do (`_name`).
ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.json")


class ResultCache:
    def __init__(self, folder: Path, key: bytes) -> None:
        self.folder = folder
        self._key = key

    def _name(self, material: str) -> str:
        return hmac.new(self._key, b"name\0" + material.encode("utf-8"), hashlib.sha256).hexdigest() + ".json"

    def _mac(self, name: str, body: str) -> str:
        return hmac.new(self._key, f"entry\0{name}\0{body}".encode("utf-8"), hashlib.sha256).hexdigest()

    def get(self, material: str, now: float | None = None) -> tuple[Any, float] | None:
        """The result kept for `material` and when it was saved (seconds since the epoch),
        or None: none kept, past its time, or not written by catalyst with this key."""
        name = self._name(material)
        if self.folder.is_symlink():
            return None  # see `put`
        try:
            data = json.loads((self.folder / name).read_text(encoding="utf-8"))
            body, mac = data["body"], data["mac"]
            if not isinstance(body, str) or not hmac.compare_digest(str(mac), self._mac(name, body)):
                return None
            kept = json.loads(body)
            if (now if now is not None else time.time()) >= float(kept["expires"]):
                return None
            return kept["result"], float(kept["saved"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing, damaged or foreign: the step runs

    def put(self, material: str, result: Any, seconds: float, now: float | None = None) -> None:
        """Keep `result` for `seconds`. A result that is not JSON, or a folder that cannot be
        written, keeps nothing: the cache saves time, never a run."""
        saved = now if now is not None else time.time()
        try:
            body = json.dumps({"saved": saved, "expires": saved + seconds, "result": result}, sort_keys=True)
        except (TypeError, ValueError):
            return
        name = self._name(material)
        if self.folder.is_symlink():
            # A link committed in its place would have catalyst write (and read) in a
            # folder of the repository's choosing, outside the state directory.
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            entry = json.dumps({"body": body, "mac": self._mac(name, body)})
            durable.replace(self.folder / name, entry.encode("utf-8"), mode=0o600, sync=False)
        except OSError:
            return

    def clear(self) -> int:
        """Remove every entry; how many there were. Only names `put` writes are removed,
        and never through a link: a folder committed as a link to elsewhere, or a
        `state-dir` pointed at a folder with other files, loses none of them."""
        if self.folder.is_symlink():
            return 0
        try:
            items = list(os.scandir(self.folder))
        except OSError:
            return 0
        removed = 0
        for item in items:
            if item.is_file(follow_symlinks=False) and ENTRY_NAME.fullmatch(item.name):
                try:
                    os.unlink(item.path)
                    removed += 1
                except OSError:
                    pass
        return removed


def material(action: str, config: Any, adapter: Any = None) -> str:
    """What a step would do, as one text: the key of its entry."""
    return json.dumps({"action": action, "config": config, "adapter": adapter}, sort_keys=True, default=str)


def adapter_identity(settings, provider: Any) -> dict:
    """Which adapter would answer an AI step: its `provider`, the settings that choose one,
    and the one the machine offers (a mock answer never stands in for a real one)."""
    from catalyst_dsl.runtime.adapters.detection import detect

    found = detect(settings)
    return {
        "provider": provider,
        "adapters": list(getattr(settings, "ai_adapters", ()) or ()),
        "command": list(getattr(settings, "ai_command", ()) or ()),
        "openai": [getattr(settings, "openai_base_url", None), getattr(settings, "openai_model", None)],
        "detected": [found.adapter, found.settings] if found is not None else None,
        "model": os.environ.get("OPENAI_MODEL") if found is not None else None,
    }
