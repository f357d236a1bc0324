"""The real playbooks in ../shared/corpus/catalyst: the findings a correct checker reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalyst_dsl.compiler import compile_path, discover
from tests.helpers.corpus import SHARED_CORPUS

CORPUS = SHARED_CORPUS / "catalyst"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside this checkout")

# (file relative to the corpus, line, code) for every finding; anything else is a false alarm.
EXPECTED = {
    "fixtures/invalid-schema.yaml": {(4, "C204")},
    "fixtures/valid-minimal.yaml": {(5, "C404")},
    "fixtures/edge-cases.yaml": {(8, "C404"), (11, "C404"), (15, "C404"), (23, "C404"), (26, "C404"), (31, "C404")},
    "fixtures/valid-complete.yaml": {
        (44, "C602"),
        (45, "C602"),
        (49, "C404"),
        (54, "C404"),
        (61, "C404"),
        (64, "C404"),
    },
    "playbooks/update-pull-request.yaml": {
        (33, "C602"),
        (40, "C404"),
        (46, "C404"),
        (102, "C404"),
        (115, "C404"),
        (130, "C603"),
    },
    # Bare-number timeouts written in milliseconds for the original engine: seconds here.
    "cli-commands/kitchen-sink.yaml": {
        (962, "C409"),
        (1024, "C409"),
        (1082, "C409"),
        (1106, "C409"),
        (1160, "C409"),
        (1184, "C409"),
        (1506, "C409"),
    },
    # A 30-line `{{ ... }}` of prose: not a template reference.
    "playbooks/actions/feature-format.md": {(51, "C102")},
}


def findings(path: Path) -> set[tuple[int, str]]:
    return {(d.span.line, d.code) for d in compile_path(str(path)).diagnostics}


@pytest.mark.parametrize(
    "rel", sorted(str(Path(p).relative_to(CORPUS)) for p in discover([str(CORPUS)])) if CORPUS.is_dir() else []
)
def test_corpus_file(rel: str) -> None:
    assert findings(CORPUS / rel) == EXPECTED.get(rel, set())


def test_kitchen_sink_has_no_errors() -> None:
    result = compile_path(str(CORPUS / "cli-commands" / "kitchen-sink.yaml"))
    assert [d for d in result.diagnostics if d.severity.value == "error"] == []


def test_markdown_playbooks_compile_to_phases_checkpoints_and_calls() -> None:
    result = compile_path(str(CORPUS / "playbooks" / "create-feature.md"))
    pb = result.playbook
    actions = [s.action for s in pb.steps]
    assert actions.count("ai-prompt") == 5  # Phases 0 to 4
    assert actions.count("checkpoint") == 4  # the four STOP HERE lines
    assert pb.reviewers.required == ("Architect",)
    targets = {c.target for c in pb.calls}
    assert "node_modules/@xerilium/catalyst/playbooks/actions/feature-spec.md" in targets
    for call in pb.calls:
        assert (CORPUS / "playbooks" / call.target.split("playbooks/", 1)[1]).is_file()
