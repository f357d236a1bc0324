"""`catalyst check --watch`: a check after each change, and Ctrl-C (or SIGTERM) ends it with exit 0."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
GOOD = 'name: hello\ndescription: "Hi"\nowner: me\nsteps:\n  - display: "hi"\n'
MARK = b"watching for changes (Ctrl-C to stop)\n"


def _read_until(stream, marker: bytes, seconds: float = 60) -> bytes:
    """What `stream` printed up to and with the next `marker` (a run prints it once, at its end)."""
    deadline = time.monotonic() + seconds
    out = b""
    while marker not in out and time.monotonic() < deadline:
        if select.select([stream], [], [], 0.1)[0]:
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_change_is_checked_again_and_stopping_exits_0(tmp_path: Path, stop: signal.Signals) -> None:
    (tmp_path / "playbooks").mkdir()
    playbook = tmp_path / "playbooks" / "hello.yaml"
    playbook.write_text(GOOD, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALYST_")}
    # With the fault handler, a watcher that never stops shows where each thread waits.
    env.update(PYTHONPATH=str(ROOT), NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1", PYTHONFAULTHANDLER="1")
    watcher = subprocess.Popen(
        [sys.executable, "-m", "catalyst_dsl", "check", "--watch", "--no-cache"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # A shell that started the tests in the background ignores SIGINT, and a child
        # inherits that: the watcher gets the signal as a terminal's Ctrl-C would send it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        first = _read_until(watcher.stdout, MARK)
        assert b"checked 1 file(s): 0 error(s), 0 warning(s)" in first
        playbook.write_text(GOOD.replace("display", "dispaly"), encoding="utf-8")
        second = _read_until(watcher.stdout, MARK)
        assert b"error[C404]: unknown action 'dispaly'" in second
        assert b"checked 1 file(s): 1 error(s), 0 warning(s)" in second
        (tmp_path / "playbooks" / "other.yaml").write_text(GOOD.replace("hello", "other"), encoding="utf-8")
        third = _read_until(watcher.stdout, MARK)
        assert b"checked 2 file(s): 1 error(s), 0 warning(s)" in third
        watcher.send_signal(stop)
        try:
            assert watcher.wait(timeout=30) == 0
        except subprocess.TimeoutExpired:
            watcher.send_signal(signal.SIGABRT)  # the fault handler writes every thread's stack
            watcher.wait(timeout=30)
            raise AssertionError(f"the watch did not stop on {stop.name}:\n{watcher.stderr.read().decode()}") from None
        assert b"stopped watching" in watcher.stderr.read()
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()


def test_a_file_gone_before_the_check_and_not_read_by_it_is_no_change(monkeypatch: pytest.MonkeyPatch) -> None:
    from catalyst_dsl.cli import watch

    monkeypatch.setattr(watch, "POLL_SECONDS", 0)
    looks = []

    def stamps() -> dict:
        # playbooks/greet.yaml was renamed before the run, which read greeting.yaml instead;
        # greeting.yaml is edited on the third look.
        looks.append(1)
        return {"greeting.yaml": (1, 1) if len(looks) < 3 else (2, 2)}

    watch._wait_for_change(stamps, {"greet.yaml": (-1, -1), "greeting.yaml": (1, 1)})
    assert len(looks) == 4  # the edit, and one look more to see it settled
    looks.clear()
    # A file that was there and is gone is a change.
    watch._wait_for_change(lambda: looks.append(1) or {}, {"greet.yaml": (1, 1)})
    assert len(looks) == 2
