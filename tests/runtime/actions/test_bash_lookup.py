"""Where a `bash` step finds bash: looked up on PATH once, not at every step."""

from __future__ import annotations

import shutil

from catalyst_dsl.runtime.actions import process


def test_bash_is_looked_up_once_for_a_path_and_again_when_the_path_or_the_answer_changes(monkeypatch, tmp_path):
    shells = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        shell = tmp_path / name / "bash"
        shell.write_text("#!/bin/sh\n")
        shell.chmod(0o755)
        shells.append(str(shell))
    asked = []
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: asked.append(name) or real_which(name, *a, **k))
    monkeypatch.setattr(process, "_SHELLS", {})
    monkeypatch.setenv("PATH", str(tmp_path / "one"))
    assert [process._shell() for _ in range(3)] == [shells[0]] * 3
    assert asked == ["bash"]
    monkeypatch.setenv("PATH", str(tmp_path / "two"))
    assert process._shell() == shells[1]
    assert len(asked) == 2
    monkeypatch.setenv("PATH", f"{tmp_path / 'one'}:{tmp_path / 'two'}")
    (tmp_path / "one" / "bash").unlink()
    assert process._shell() == shells[1]  # looked up anew (this PATH was never asked before)
    assert process._shell() == shells[1]
    assert len(asked) == 3
    monkeypatch.setenv("PATH", str(tmp_path / "one"))
    assert process._shell() is None  # the answer for this PATH went away: looked up again, nothing found
    assert len(asked) == 4
