"""The mock AI adapter: deterministic answers, or scripted ones from a YAML or JSON file.

The mock is the default when no adapter is configured: it never leaves the machine and
answers the same prompt the same way, so runs and tests are reproducible. Its script
files are read by mock_script.py, imported only when a script is given.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Sequence

from catalyst_dsl.runtime.adapters.interface import AI_ADAPTER_ERROR, MOCK, SCRIPT_ENV, AdapterError

if TYPE_CHECKING:
    from catalyst_dsl.runtime.adapters.mock_script import ScriptEntry


def split(text: str, parts: int) -> list[str]:
    """`text` in `parts` consecutive pieces whose lengths differ by at most one."""
    size, extra = divmod(len(text), parts)
    pieces, start = [], 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


class _Script:
    """A loaded script and which of its entries are spent."""

    def __init__(self, path: Path, entries: list[ScriptEntry]) -> None:
        self.path = path
        self.entries = entries
        self.spent = [False] * len(entries)

    def take(self, prompt: str) -> ScriptEntry:
        for index, entry in enumerate(self.entries):
            if self.spent[index] or (entry.match is not None and not entry.match.search(prompt)):
                continue
            self.spent[index] = not entry.repeat
            return entry
        raise AdapterError(
            AI_ADAPTER_ERROR,
            f"no unused entry of the mock AI script {self.path} matches the prompt: {_first_line(prompt)!r}",
            guidance="add an entry whose 'match' finds this prompt, or mark an entry 'repeat: true'",
        )


class MockAdapter:
    """The deterministic default adapter, optionally scripted from a YAML or JSON file.

    The script is `options["script"]`, else `$CATALYST_MOCK_AI_SCRIPT`, else the project
    setting given here. Relative paths from options and settings are taken from `root`;
    the environment's from the working directory, as a shell would.
    """

    name = MOCK
    #: A stand-in for any agent: it has no agents, skills or profiles to tell apart and reads
    #: nothing, so every identity key holds for it (the run says once that the mock answers).
    identity_keys = frozenset({"command", "agent", "skill", "profile", "readPaths", "skills"})

    def __init__(
        self,
        script: str | os.PathLike[str] | None = None,
        *,
        root: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._setting = script
        self._root = Path(root) if root is not None else None
        self._environ = os.environ if environ is None else environ
        self._scripts: dict[Path, _Script] = {}
        # Steps in a `parallel` block share the adapter; an entry is taken once.
        self._lock = threading.Lock()

    def invoke(self, prompt: str, tools: Sequence[str], options: Mapping[str, object]) -> Iterator[str]:
        path = self._script_path(options)
        if path is None:
            return iter([f"mock answer to: {_first_line(prompt)}"])
        with self._lock:
            script = self._scripts.get(path)
            if script is None:
                from catalyst_dsl.runtime.adapters.mock_script import load_script

                script = self._scripts[path] = _Script(path, load_script(path))
            entry = script.take(prompt)
        if entry.error is not None:
            raise AdapterError(
                entry.error, f"scripted error from the mock AI script {path}", metadata={"script": str(path)}
            )
        return iter(split(entry.text(), entry.chunks))

    def _script_path(self, options: Mapping[str, object]) -> Path | None:
        chosen = options.get("script")
        if chosen is not None:
            if not isinstance(chosen, str) or not chosen:
                raise AdapterError(
                    AI_ADAPTER_ERROR, f"the mock adapter's 'script' option must be a file path, not {chosen!r}"
                )
            return self._from_root(chosen)
        if self._environ.get(SCRIPT_ENV):
            return Path(self._environ[SCRIPT_ENV]).absolute()
        if self._setting is not None:
            return self._from_root(self._setting)
        return None

    def _from_root(self, path: str | os.PathLike[str]) -> Path:
        return ((self._root or Path.cwd()) / path).absolute()


def _first_line(prompt: str) -> str:
    """The prompt's first line that is not blank, whole: a test that checks what was sent
    must see all of it, however long."""
    return next((line.strip() for line in prompt.splitlines() if line.strip()), "")
