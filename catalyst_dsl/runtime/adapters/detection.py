"""The AI adapter a machine offers when the settings configure none.

A project that names no adapter (`ai-adapters`, `ai-command`, `openai-*` all unset) gets
the first of these that the environment has, in this order, instead of the deterministic
mock:

- the Claude Code command line, `claude`, on PATH: the `command` adapter with `claude -p`
  (it reads the prompt on stdin and prints its answer);
- Simon Willison's `llm` on PATH: the `command` adapter with `llm`;
- `OPENAI_API_KEY` and `OPENAI_MODEL` set: the `openai` adapter, at `OPENAI_BASE_URL` or
  OpenAI's own API.

The detection stands in for the settings (`detected_settings`), so everything after it
(the precedence, the pre-flight's checks, the adapters made) is what it would be had the
user written them; a run says which adapter it found and why, once, and `ai-detect =
false` (or any adapter setting) turns it off. Programs are looked up on PATH without its
relative entries and without any directory inside the project, a program that resolves
(through symbolic links) into the project is passed over, and the one found is run by
its absolute path, never looked up on PATH again: a repository cannot plant the program
that answers.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Mapping

from catalyst_dsl._internal.records import record, replace
from catalyst_dsl.runtime.adapters.command import COMMAND
from catalyst_dsl.runtime.adapters.openai_compatible import API_KEY_ENV, OPENAI

#: The OpenAI API asked when OPENAI_BASE_URL is not set.
OPENAI_API = "https://api.openai.com/v1"


@record
class Detected:
    """An adapter found in the environment: the settings it stands for, and why."""

    adapter: str
    #: The settings (ProjectConfig fields) the detection stands in for.
    settings: dict
    #: What was found: "claude on PATH", "OPENAI_API_KEY and OPENAI_MODEL".
    because: str

    def described(self) -> str:
        """The adapter in words, for the run's notice."""
        if self.adapter == COMMAND:
            program, *arguments = self.settings["ai_command"]
            # The program is run by the absolute path it was found at; named as it is known.
            return f"the command adapter (`{' '.join([os.path.basename(program), *arguments])}`)"
        return f"the openai adapter ({self.settings['openai_model']} at {self.settings['openai_base_url']})"


#: Programs tried on PATH, in order: (program, the ai-command it stands for).
PROGRAMS = (("claude", ("claude", "-p")), ("llm", ("llm",)))


def detect(settings, environ: Mapping[str, str] | None = None, root: os.PathLike[str] | str | None = None):
    """The adapter the environment offers, or None: when the settings name one (or turn
    detection off), or the environment has none."""
    environ = os.environ if environ is None else environ
    if not getattr(settings, "ai_detect", True) or _configured(settings):
        return None
    path = _trusted_path(environ.get("PATH", os.defpath), root)
    for program, argv in PROGRAMS:
        found = _found(program, path, root)
        if found is not None:
            return Detected(COMMAND, {"ai_command": (found, *argv[1:])}, f"{program} on PATH")
    key, model = environ.get(API_KEY_ENV), environ.get("OPENAI_MODEL")
    if key and model:
        base = environ.get("OPENAI_BASE_URL") or OPENAI_API
        return Detected(
            OPENAI,
            {"openai_base_url": base, "openai_model": model},
            f"{API_KEY_ENV} and OPENAI_MODEL" + (" (OPENAI_BASE_URL)" if environ.get("OPENAI_BASE_URL") else ""),
        )
    return None


def detected_settings(settings, detected: Detected | None):
    """The settings as the adapters read them: the project's, with what was detected."""
    return settings if detected is None else replace(settings, **detected.settings)


def _configured(settings) -> bool:
    return bool(
        getattr(settings, "ai_adapters", ())
        or getattr(settings, "ai_command", ())
        or getattr(settings, "openai_base_url", None)
        or getattr(settings, "openai_model", None)
    )


def _found(program: str, path: str, root: os.PathLike[str] | str | None) -> str | None:
    """The absolute path of the first `program` on `path` that does not resolve into the
    project (a link from a PATH directory to a file the repository holds), or None."""
    for entry in path.split(os.pathsep) if path else ():
        found = shutil.which(program, path=entry)
        if found is not None and not _inside(found, root):
            return os.path.abspath(found)
    return None


def _inside(path: str, root: os.PathLike[str] | str | None) -> bool:
    if root is None:
        return False
    inside, real = Path(os.path.realpath(root)), Path(os.path.realpath(path))
    return real == inside or inside in real.parents


def _trusted_path(path: str, root: os.PathLike[str] | str | None) -> str:
    """PATH without relative entries (`.`, empty) and without directories inside the project."""
    kept = []
    for entry in path.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or _inside(entry, root):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)
