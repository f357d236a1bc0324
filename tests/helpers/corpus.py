"""The shared corpus of real playbooks: `../shared/corpus` beside the repository, found
relative to it (never by a path of one machine). Tests that read it skip, or cover only
the repository, when it is not there."""

from __future__ import annotations

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
#: Its folders: catalyst/ (playbooks of the original engine), kai/ and cleo/.
SHARED_CORPUS = REPOSITORY.parent / "shared" / "corpus"
