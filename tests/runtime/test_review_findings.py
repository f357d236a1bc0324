"""Regression tests for bugs found in a review of `catalyst run` (hostile inputs, resume, masking).

Each test is the smallest reproduction of one finding. Bad input must end in a clear
error with an exit code, never a traceback; secrets must stay out of files and output.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from catalyst_dsl.actions.control import parallel
from catalyst_dsl.cli.main import cli
from catalyst_dsl.ir import nodes as ir
from catalyst_dsl.runtime.effects.process import run_streaming, stop_all_processes


def invoke(*args: str):
    """`catalyst ARGS` in-process, catching exceptions so a traceback shows up as result.exception."""
    before = signal.getsignal(signal.SIGTERM)
    try:
        return CliRunner().invoke(cli, list(args))
    finally:
        signal.signal(signal.SIGTERM, before)


def no_traceback(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback instead of an error message: {result.exception!r}\n{result.output}"
    )


def playbook(project, name: str, steps: str, head: str = "") -> None:
    project.playbook(
        name,
        (
            f"name: {name}\ndescription: d\nowner: Engineer\n"
            f"{textwrap.dedent(head)}steps:\n{textwrap.indent(textwrap.dedent(steps), '  ')}"
        ),
    )


def run_id(project) -> str:
    return project.run_id()


# -- 1. config values of the wrong type at run time ---------------------------------------------------------


def test_a_write_path_that_evaluates_to_undefined_is_a_step_error(project):
    playbook(
        project,
        "p",
        """
        - file-write:
            path: "${{ get('o').missing }}"
            content: x
    """,
        head="inputs:\n  - object: o\n    default: {}\n",
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_a_bash_env_that_evaluates_to_a_string_is_a_step_error(project):
    playbook(
        project,
        "p",
        """
        - bash:
            script: "true"
            env: "${{ get('o').e }}"
    """,
        head="inputs:\n  - object: o\n    default: {e: text}\n",
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_a_command_argv_that_evaluates_to_a_number_is_a_step_error(project):
    playbook(
        project,
        "p",
        """
        - command: "${{ get('o').n }}"
    """,
        head="inputs:\n  - object: o\n    default: {n: 5}\n",
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_a_negative_max_concurrency_is_an_error_not_a_traceback(project):
    playbook(
        project,
        "p",
        """
        - parallel:
            maxConcurrency: -1
            steps:
              - log-info: a
    """,
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code in (1, 2)


# -- 2. operating-system errors of actions -------------------------------------------------------------------


def test_file_write_under_a_file_is_a_step_error(project):
    project.write("afile", "x")
    playbook(
        project,
        "p",
        """
        - file-write: {path: afile/x.txt, content: a}
    """,
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_file_write_onto_a_directory_is_a_step_error(project):
    (project.root / "adir").mkdir()
    playbook(
        project,
        "p",
        """
        - file-write: {path: adir, content: a}
    """,
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_file_delete_of_a_directory_is_a_step_error(project):
    (project.root / "adir").mkdir()
    playbook(
        project,
        "p",
        """
        - file-delete: adir
    """,
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_gitignore_edit_of_a_binary_file_is_a_step_error(project):
    (project.root / "bin.txt").write_bytes(b"\xff\xfe\x00")
    playbook(
        project,
        "p",
        """
        - gitignore-edit: {path: bin.txt, add: [x]}
    """,
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_file_write_with_an_encoding_that_cannot_hold_the_text_is_a_step_error(project):
    playbook(
        project,
        "p",
        """
        - file-write: {path: x.txt, content: "é", encoding: ascii}
    """,
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_bash_in_a_missing_working_directory_is_a_step_error(project):
    playbook(
        project,
        "p",
        """
        - bash: {script: "true", cwd: no-such-dir}
    """,
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_command_with_a_missing_relative_program_is_a_step_error(project):
    playbook(
        project,
        "p",
        """
        - command: ["./no-such-program"]
    """,
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_a_nul_byte_in_a_write_path_is_refused(project):
    playbook(
        project,
        "p",
        """
        - file-write: {path: "a\\0b", content: x}
    """,
    )
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


# -- 3. reads through temp:// stay in the scratch space ------------------------------------------------------


def test_temp_protocol_cannot_read_outside_the_project(project, tmp_path):
    (tmp_path / "outside.txt").write_text("TOP-SECRET-OUTSIDE", encoding="utf-8")
    # scratch is project/.xe/runs/tmp/<run>: five levels up is tmp_path
    playbook(
        project,
        "p",
        """
        - file-write: {path: "temp://a.txt", content: a}
        - name: r
          file-read: "{{where}}"
        - log-info: "{{r}}"
    """,
        head="inputs:\n  - string: where\n",
    )
    result = invoke("run", "p", "-i", "where=temp://../../../../../outside.txt")
    no_traceback(result)
    assert "TOP-SECRET-OUTSIDE" not in result.output
    assert result.exit_code == 2


def test_temp_protocol_cannot_list_outside_the_project(project, tmp_path):
    (tmp_path / "outside-dir").mkdir()
    (tmp_path / "outside-dir" / "found-me.txt").write_text("x", encoding="utf-8")
    playbook(
        project,
        "p",
        """
        - file-write: {path: "temp://a.txt", content: a}
        - name: l
          file-list: "{{where}}"
        - log-info: "{{l.0}}"
    """,
        head="inputs:\n  - string: where\n",
    )
    result = invoke("run", "p", "-i", "where=temp://../../../../../outside-dir")
    no_traceback(result)
    assert "found-me" not in result.output
    assert result.exit_code == 2


# -- 4. a condition that fails to evaluate --------------------------------------------------------------------


def test_a_failing_condition_names_its_step_in_the_failure(project):
    playbook(
        project,
        "p",
        """
        - name: guarded
          condition: "${{ get('o').a.b == 1 }}"
          log-info: x
    """,
        head="inputs:\n  - object: o\n    default: {}\n",
    )
    assert project.run("p").exit_code == 2
    assert project.snapshot()["error"]["step"] == "guarded"


def test_a_failing_condition_goes_through_the_step_error_policy(project):
    playbook(
        project,
        "p",
        """
        - name: guarded
          condition: "${{ get('o').a.b == 1 }}"
          log-info: x
          errorPolicy:
            default: {action: Continue}
        - log-info: after
    """,
        head="inputs:\n  - object: o\n    default: {}\n",
    )
    result = project.run("p")
    assert result.exit_code == 0, result.output
    assert "after" in result.output


# -- 5. resume after the called playbook changed --------------------------------------------------------------


def test_resume_refuses_when_a_called_playbook_changed_a_completed_step(project):
    playbook(
        project,
        "parent",
        """
        - name: c
          playbook: child
    """,
    )
    project.playbook(
        "child",
        """
        name: child
        description: d
        owner: Engineer
        steps:
          - name: s1
            bash: "echo one"
          - checkpoint: "child review"
    """,
    )
    assert project.run("parent").exit_code == 4
    rid = run_id(project)
    assert project.cli("approve", rid, "--as", "x").exit_code == 0
    child = project.root / "playbooks" / "child.yaml"
    child.write_text(child.read_text(encoding="utf-8").replace("echo one", "echo TWO"), encoding="utf-8")
    resumed = project.cli("resume", rid)
    assert resumed.exit_code == 3, resumed.output
    assert "s1" in resumed.output


# -- 6. secrets ---------------------------------------------------------------------------------------------------


SECRET_HEAD = "inputs:\n  - string: tok\n    secret: true\n"


def _all_state_text(project) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace") for p in project.state_dir.rglob("*") if p.is_file()
    )


def test_a_checkpoint_message_with_a_secret_is_masked_in_the_snapshot(project, monkeypatch):
    monkeypatch.setenv("CATALYST_SECRET_TOK", "S3CR3T-VALUE")
    playbook(
        project,
        "p",
        """
        - checkpoint: "Deploy using {{tok}}"
    """,
        head=SECRET_HEAD,
    )
    assert project.run("p").exit_code == 4
    assert "S3CR3T-VALUE" not in _all_state_text(project)
    shown = project.cli("runs", "show", run_id(project))
    assert "S3CR3T-VALUE" not in shown.output


def test_an_input_defaulted_from_a_secret_is_masked_in_the_snapshot(project, monkeypatch):
    monkeypatch.setenv("CATALYST_SECRET_TOK", "S3CR3T-VALUE")
    playbook(
        project,
        "p",
        """
        - log-info: "{{derived}}"
    """,
        head=SECRET_HEAD + "  - string: derived\n    default: \"pre-{{tok}}\"\n",
    )
    result = project.run("p")
    assert result.exit_code == 0, result.output
    assert "S3CR3T-VALUE" not in result.output
    assert "S3CR3T-VALUE" not in _all_state_text(project)


def test_a_multiline_secret_is_masked_in_streamed_output(project, monkeypatch):
    monkeypatch.setenv("CATALYST_SECRET_TOK", "FIRST-LINE-XYZ\nSECOND-LINE-XYZ")
    playbook(
        project,
        "p",
        """
        - bash: |
            printf '%s\\n' "{{tok}}"
    """,
        head=SECRET_HEAD,
    )
    result = project.run("p")
    assert result.exit_code == 0, result.output
    assert "FIRST-LINE-XYZ" not in result.output and "SECOND-LINE-XYZ" not in result.output


def test_a_secret_in_a_write_path_stays_out_of_locks_and_permissions(project, monkeypatch):
    monkeypatch.setenv("CATALYST_SECRET_TOK", "S3CR3T-VALUE")
    playbook(
        project,
        "p",
        """
        - file-write: {path: "out/{{tok}}/f.txt", content: x}
        - checkpoint: wait
    """,
        head=SECRET_HEAD + "allowedWritePaths: [\"out/{{tok}}/*\"]\n",
    )
    assert project.run("p").exit_code == 4
    assert "S3CR3T-VALUE" not in _all_state_text(project)


# -- 7. cancel of a live run keeps who and why --------------------------------------------------------------------


def test_cancelling_a_live_run_records_who_and_why(project):
    # The cancel comes from outside the run (its programs may not write the state directory),
    # while its first step waits for it.
    playbook(
        project,
        "p",
        """
        - bash: |
            touch "$TMPDIR/ready"
            while [ ! -f "$TMPDIR/go" ]; do sleep 0.05; done
        - log-info: "must not run"
    """,
    )

    def cancel_when_ready() -> None:
        while not (project.temp / "ready").exists():
            time.sleep(0.05)
        run = next((project.root / ".xe" / "runs").glob("run-*.json")).name[len("run-") : -len(".json")]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        subprocess.run(
            [sys.executable, "-m", "catalyst_dsl", "cancel", run, "--reason", "stop it now", "--by", "alice"],
            cwd=project.root,
            env=env,
            check=True,
            capture_output=True,
            timeout=60,
        )
        (project.temp / "go").touch()

    canceller = threading.Thread(target=cancel_when_ready, daemon=True)
    canceller.start()
    result = project.run("p")
    canceller.join(timeout=60)
    assert result.exit_code == 5, result.output  # cancelled, not failed
    assert "must not run" not in result.output
    snap = project.snapshot()
    assert snap["status"] == "cancelled"
    assert snap["cancel"] is not None and snap["cancel"]["reason"] == "stop it now" and snap["cancel"]["by"] == "alice"


# -- 8. request-changes on a `checkpoint:` flag goes through the step's error policy ------------------------------


def test_request_changes_on_a_checkpoint_flag_uses_the_step_error_policy(project):
    playbook(
        project,
        "p",
        """
        - name: build
          bash: "echo built"
          checkpoint: "look at the build"
          errorPolicy:
            default: {action: Continue}
        - log-info: after
    """,
    )
    assert project.run("p").exit_code == 4
    rid = run_id(project)
    token = project.cli("runs", "token", rid, "--as", "Architect", "--decision", "request-changes").output.strip()
    assert project.cli("approve", rid, "--token", token).exit_code == 0
    resumed = project.cli("resume", rid)
    assert resumed.exit_code == 0, resumed.output
    assert "after" in resumed.output


# -- 9. SIGTERM during a parallel step ------------------------------------------------------------------------------


def test_sigterm_during_parallel_stops_the_branches_promptly(project):
    playbook(
        project,
        "p",
        """
        - parallel:
            steps:
              - bash: "echo started-a; sleep 30; echo late-a"
              - bash: "echo started-b; sleep 30; echo late-b"
    """,
    )
    repo = str(Path(__file__).resolve().parents[2])  # this checkout, whatever is installed
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, (repo, os.environ.get("PYTHONPATH")))),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "catalyst_dsl", "run", "p"],
        cwd=project.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    both_running = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            lines.append(line)
            said = "".join(lines)
            if "started-a" in said and "started-b" in said:
                both_running.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        # Both branches' programs have said they run, however long a busy machine took to
        # start them: the signal comes while they sleep.
        assert both_running.wait(timeout=120), "".join(lines)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        reader.join(timeout=30)
    out = "".join(lines)
    assert proc.returncode == 130, out
    # The branches were stopped, not waited for: neither got past its sleep.
    assert "late-a" not in out and "late-b" not in out


class StoppingGroup:
    """The engine's side of a `parallel` group of two branches (actions/control/protocol.py).
    Once both run, the first is interrupted as Ctrl-C or SIGTERM interrupts a run; the second
    starts its program only after the group has begun to stop, as a branch does that is past
    the engine's check when the stop comes."""

    STOPS = (KeyboardInterrupt,)

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.both_running = threading.Barrier(2)
        self.stop_asked = threading.Event()
        self.outcome = None

    def entry(self, run, key, config):
        return None  # no maxConcurrency

    def ask_first(self, step, frame, scope, path) -> None:
        pass

    def run_step(self, step, frame, scope, path) -> None:
        self.both_running.wait(timeout=60)
        if step.name == "interrupted":
            signal.raise_signal(signal.SIGUSR1)
            return
        self.stop_asked.wait(timeout=60)
        self.outcome = run_streaming(
            ["sleep", "30"], cwd=self.cwd, env={}, timeout=None, on_output=lambda stream, line: None
        )

    def stop_everything(self) -> None:
        self.stop_asked.set()
        stop_all_processes()


def test_a_program_a_branch_starts_as_its_parallel_group_stops_is_stopped_too(tmp_path):
    branches = ir.StepsV(tuple(ir.Step("bash", ir.MapV(()), name=n) for n in ("interrupted", "late")))
    group = SimpleNamespace(
        step=ir.Step("parallel", ir.MapV((ir.Entry("steps", branches),))),
        frame=None,
        at=lambda *segments: "/".join(map(str, segments)),
        child=lambda: SimpleNamespace(hand_out=lambda: None),
    )
    engine = StoppingGroup(tmp_path)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGUSR1, interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            parallel.run(engine, group)
    finally:
        signal.signal(signal.SIGUSR1, before)
    # The program started after the first stop was stopped too, not run to its end.
    assert engine.outcome is not None and engine.outcome.exit_code != 0, engine.outcome


# -- 10. damaged snapshots -------------------------------------------------------------------------------------------


def _paused_snapshot(project) -> Path:
    playbook(
        project,
        "p",
        """
        - name: build
          bash: "echo built"
        - checkpoint: wait
    """,
    )
    assert project.run("p").exit_code == 4
    return project.live_snapshots()[0]


def test_a_deeply_nested_snapshot_is_refused_as_damaged(project):
    path = _paused_snapshot(project)
    rid = path.name[len("run-") : -len(".json")]
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    for args in (("resume", rid), ("runs", "show", rid), ("runs", "list")):
        result = invoke(*args)
        no_traceback(result)
    assert invoke("resume", rid).exit_code == 3


def test_a_snapshot_with_a_huge_integer_is_refused_as_damaged(project):
    path = _paused_snapshot(project)
    rid = path.name[len("run-") : -len(".json")]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"attempts": 1', '"attempts": ' + "9" * 5000, 1), encoding="utf-8")
    result = invoke("resume", rid)
    no_traceback(result)
    assert result.exit_code == 3


@pytest.mark.parametrize("number", ["NaN", "1e999", "-1e999", "1" + "0" * 400])
def test_a_snapshot_with_a_non_finite_number_is_refused(project, number):
    # 1e999 is JSON's syntax, but reads as infinity: `runs show` drew it with a traceback.
    path = _paused_snapshot(project)
    rid = path.name[len("run-") : -len(".json")]
    text = path.read_text(encoding="utf-8")
    import re

    path.write_text(re.sub(r'"duration": [0-9.e-]+', f'"duration": {number}', text, count=1), encoding="utf-8")
    for command in (["resume", rid], ["runs", "show", rid], ["runs", "export", rid]):
        result = invoke(*command)
        no_traceback(result)
        assert result.exit_code == 3, (command, result.output)
        # (the integer is JSON, read as the wrong type: too large for the float a duration is)
        assert "which is not a JSON number" in result.output or "too large for one" in result.output, result.output


# -- 11. hostile -i values ---------------------------------------------------------------------------------------------


NUMBER_AND_ARRAY = (
    "inputs:\n  - number: n\n    default: 1\n  - array: a\n    default: []\n  - object: o\n    default: {}\n"
)


def test_an_input_number_with_thousands_of_digits_is_an_input_problem(project):
    playbook(project, "p", "- log-info: x\n", head=NUMBER_AND_ARRAY)
    result = invoke("run", "p", "-i", "n=" + "9" * 5000)
    no_traceback(result)
    assert result.exit_code == 1


def test_a_deeply_nested_array_input_is_an_input_problem(project):
    playbook(project, "p", "- log-info: x\n", head=NUMBER_AND_ARRAY)
    result = invoke("run", "p", "-i", "a=" + "[" * 20_000 + "]" * 20_000)
    no_traceback(result)
    assert result.exit_code == 1


def test_a_moderately_nested_object_input_does_not_break_the_snapshot(project):
    playbook(project, "p", "- log-info: x\n", head=NUMBER_AND_ARRAY)
    result = invoke("run", "p", "-i", "o=" + '{"a":' * 400 + "1" + "}" * 400)
    no_traceback(result)
    assert result.exit_code in (0, 1)


# -- 12. command line and settings -------------------------------------------------------------------------------------


def test_a_run_id_with_glob_characters_matches_no_run(project):
    playbook(project, "p", "- log-info: x\n")
    assert project.run("p").exit_code == 0
    shown = invoke("runs", "show", "*")
    no_traceback(shown)
    assert shown.exit_code == 1 and "no run" in shown.output, shown.output


def test_running_a_playbook_with_a_yaml_error_shows_the_yaml_error(project):
    project.write("playbooks/bad.yaml", "name: bad\ndescription: d\nowner: Engineer\nsteps:\n  - log-info: [unclosed\n")
    result = invoke("run", "bad")
    no_traceback(result)
    assert result.exit_code == 1
    assert "did you mean 'bad'" not in result.output
    assert "no playbook named" not in result.output


def test_a_state_dir_that_is_a_file_is_a_clear_error(project):
    project.settings('state-dir = "catalyst.toml"\n')
    playbook(project, "p", "- log-info: x\n")
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code in (1, 3)


# -- 13. locks ---------------------------------------------------------------------------------------------------------


WRITES_A = """
    - file-write: {path: out/a.txt, content: x}
    - throw: {code: Boom}
      condition: "${{ get('fail') }}"
    - checkpoint: wait
"""


def test_a_damaged_lock_file_is_reported_as_damaged_with_its_fix(project):
    playbook(project, "p", WRITES_A, head="inputs:\n  - boolean: fail\n    default: false\n")
    assert project.run("p").exit_code == 4
    rid = run_id(project)
    lock = next((project.state_dir / "locks").glob("*.lock"))
    assert project.cli("cancel", rid, "--reason", "x").exit_code == 0
    lock.write_text("garbage", encoding="utf-8")
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2
    assert "damaged" in result.output and "run unknown" not in result.output


def test_a_lock_path_that_is_a_directory_is_a_clear_error(project):
    playbook(project, "p", WRITES_A, head="inputs:\n  - boolean: fail\n    default: false\n")
    assert project.run("p").exit_code == 4
    rid = run_id(project)
    lock = next((project.state_dir / "locks").glob("*.lock"))
    assert project.cli("cancel", rid, "--reason", "x").exit_code == 0
    if lock.exists():
        lock.unlink()
    lock.mkdir()
    result = invoke("run", "p")
    no_traceback(result)
    assert result.exit_code == 2


def test_a_failed_run_refused_on_resume_by_a_lock_stays_failed(project):
    playbook(project, "p", WRITES_A, head="inputs:\n  - boolean: fail\n    default: false\n")
    assert project.run("p", fail="true").exit_code == 2
    failed_id = run_id(project)
    assert project.run("p").exit_code == 4  # another run now holds out/a.txt, paused
    resumed = project.cli("resume", failed_id)
    assert resumed.exit_code == 2
    snap = project.snapshot(failed_id)
    assert snap["status"] == "failed", f"status is now {snap['status']!r}"
    assert snap["error"] is not None and snap["error"]["code"] == "Boom"
