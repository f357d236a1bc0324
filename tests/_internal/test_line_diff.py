"""The unified diff that `check --diff` and the what-if print: what difflib prints on small
texts, a patch that applies on large ones, and a search whose work has a bound."""

from __future__ import annotations

import difflib
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from catalyst_dsl._internal import line_diff
from catalyst_dsl._internal.line_diff import lines, unified, unified_text


def edited(rng: random.Random, before: list[str], edits: int, alphabet: int) -> list[str]:
    after = list(before)
    for _ in range(edits):
        at = rng.randrange(len(after) + 1)
        kind = rng.random()
        if kind < 0.3:
            after.insert(at, f"added {rng.randrange(alphabet)}\n")
        elif after and kind < 0.6:
            del after[min(at, len(after) - 1)]
        elif after:
            after[min(at, len(after) - 1)] = "changed\n"
    return after


def test_small_texts_diff_as_difflib_diffs_them() -> None:
    rng = random.Random(7)
    for _ in range(1500):
        alphabet = rng.choice([2, 5, 50, 1000])
        before = [f"line {rng.randrange(alphabet)}\n" for _ in range(rng.choice([0, 1, 4, 30, 150, 155]))]
        after = edited(rng, before, rng.randrange(12), alphabet)
        if after and rng.random() < 0.2:
            after[-1] = after[-1].rstrip("\n")
        assert list(unified(before, after, "a/x", "b/x")) == list(difflib.unified_diff(before, after, "a/x", "b/x"))


def apply_patch(tmp_path: Path, before: str, diff: str) -> str:
    target = tmp_path / "x"
    target.write_text(before, encoding="utf-8")
    subprocess.run(["patch", "--quiet", str(target)], input=diff.encode(), check=True, cwd=tmp_path)
    return target.read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
@pytest.mark.parametrize("alphabet", [150, 20_000, 10**9])
def test_a_large_texts_diff_applies_with_patch(tmp_path: Path, alphabet: int) -> None:
    rng = random.Random(alphabet)
    before = [f"  - display: {i % alphabet}\n" for i in range(20_000)]
    after = edited(rng, before, 60, 1000)
    old, new = "".join(before), "".join(after)
    diff = unified_text(old, new, "a/x", "b/x")
    assert apply_patch(tmp_path, old, diff) == new


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
def test_local_fixes_in_a_large_file_make_one_hunk_each(tmp_path: Path) -> None:
    """Named steps (unique lines) anchor the match: fifty one-line fixes are fifty small
    hunks, not one from the first fix to the last."""
    before = "".join(f"  - name: step-{i}\n    display: {i % 150}\n" for i in range(10_000))
    after = before
    for i in range(0, 10_000, 200):
        after = after.replace(f"  - name: step-{i}\n", f"  - name: step-{i}\n    # fixed\n", 1)
    diff = unified_text(before, after, "a/x", "b/x")
    assert diff.count("@@ -") == 50 and diff.count("\n+    # fixed\n") == 50 and "\n-" not in diff
    assert apply_patch(tmp_path, before, diff) == after


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
@pytest.mark.parametrize("period", [2, 150])
def test_fixes_in_a_file_of_repeated_lines_make_one_hunk_each(tmp_path: Path, period: int) -> None:
    """No line is unique: the walk finds where the sides agree again after each fix."""
    before = [f"  - display: {i % period}\n" for i in range(30_000)]
    after = list(before)
    for at in (3, 7_001, 15_000, 29_997):
        after[at] = "  - display: fixed\n"
    after.insert(20_000, "  # added\n")
    diff = unified_text("".join(before), "".join(after), "a/x", "b/x")
    assert diff.count("@@ -") == 5 and diff.count("\n-") == 4 and diff.count("\n+ ") == 5
    assert apply_patch(tmp_path, "".join(before), diff) == "".join(after)


def test_the_search_hands_difflib_only_small_stretches_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines that each repeat a few hundred times make difflib quadratic (20,000 of them
    with 50 fixes took 11 s): what it is given is bounded by the input's size."""
    handed: list[int] = []
    real = line_diff._difflib_blocks

    def counted(a, b, alo, ahi, blo, bhi):
        handed.append(line_diff._difflib_cost(alo, ahi, blo, bhi))
        return real(a, b, alo, ahi, blo, bhi)

    monkeypatch.setattr(line_diff, "_difflib_blocks", counted)
    rng = random.Random(3)
    # Unique lines every 201 lines, and between them two lines repeated against one: each
    # stretch between anchors is cubic for difflib (it took 74 s on 1,000 of them).
    anchored = "".join(f"anchor {i}\n" + "x\ny\n" * 100 for i in range(1000)).splitlines(True)
    anchored_after = "".join(f"anchor {i}\n" + "x\n" * 200 for i in range(1000)).splitlines(True)
    repeated = [[f"  - display: {i % pattern}\n" for i in range(40_000)] for pattern in (150, 2)]
    for before, after in (
        *((text, edited(rng, text, 50, 1000)) for text in repeated),
        *((text, text[::-1]) for text in repeated),
        (anchored, anchored_after),
    ):
        handed.clear()
        blocks = line_diff.matching_blocks(before, after)
        assert all(cost <= line_diff.DIFFLIB_WORK // 8 for cost in handed)
        budget = line_diff.STEPS_PER_LINE * (len(before) + len(after)) + line_diff.ALLOWANCE
        assert sum(handed) <= budget
        rebuilt = []
        for tag, i1, i2, j1, j2 in line_diff._opcodes(blocks, len(before), len(after)):
            rebuilt += before[i1:i2] if tag == "equal" else after[j1:j2]
        assert rebuilt == after


def test_lines_end_at_line_feeds_only() -> None:
    assert lines("a\u2028b\nc\rd\n") == ["a\u2028b\n", "c\rd\n"]
    assert lines("a\nb") == ["a\n", "b"]
    assert lines("") == []


def test_a_last_line_without_its_line_end_is_marked() -> None:
    diff = unified_text("a\nb\n", "a\nc", "a/x", "b/x")
    assert diff == "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"
    assert unified_text("same\n", "same\n", "a/x", "b/x") == ""
