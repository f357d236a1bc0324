"""How a `catalyst` process ends (cli.command_line, cli._end_now): its output whole, its
atexit handlers run once, and Python's teardown (emptying every module, freeing each
object) skipped, except when something might still need the interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

# Run in the child before the command: an object whose finalizer says when Python's
# teardown frees it, and an atexit handler that says when it runs.
WITNESS = (
    "import atexit, os, sys, types\n"
    "class Witness:\n"
    "    write = staticmethod(os.write)\n"
    "    def __del__(self):\n"
    "        self.write(2, b'FREED\\n')\n"
    "holder = types.ModuleType('witness_holder')\n"
    "holder.witness = Witness()\n"
    "sys.modules['witness_holder'] = holder\n"
    "atexit.register(lambda: print('HANDLER', file=sys.stderr))\n"
)


def _catalyst(
    args: list[str], cwd: Path, before: str = "", python: list[str] | None = None
) -> subprocess.CompletedProcess:
    probe = (
        WITNESS
        + before
        + f"sys.argv = ['catalyst', *{args!r}]\nfrom catalyst_dsl.cli.main import command_line\ncommand_line()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cwd / "cache-home")}
    return subprocess.run(
        [sys.executable, *(python or []), "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_command_ends_without_the_teardown_with_its_handlers_run_once(tmp_path: Path, research_project: Path) -> None:
    done = _catalyst(["check", "research.yaml"], research_project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "checked 1 file(s): 0 error(s), 0 warning(s)\n"
    assert done.stderr.count("HANDLER") == 1
    assert "FREED" not in done.stderr  # the teardown was skipped


def test_the_exit_status_is_the_commands(tmp_path: Path, research_project: Path) -> None:
    project = research_project
    (project / "bad.yaml").write_text("name: bad\nsteps:\n  - no-such-action: 1\n", encoding="utf-8")
    assert _catalyst(["check", "bad.yaml"], project).returncode == 1
    usage = _catalyst(["no-such-command"], project)
    assert usage.returncode == 2 and "No such command" in usage.stderr and "FREED" not in usage.stderr


def test_a_long_plan_on_a_pipe_is_printed_whole(tmp_path: Path, research_project: Path) -> None:
    """Output still in the buffers is written before the process ends."""
    project = research_project
    steps = "".join(f"  - name: say-{n}\n    log-info: step {n} of many\n" for n in range(200))
    (project / "long.yaml").write_text(
        f"name: long\ndescription: Many steps.\nowner: Product Manager\nsteps:\n{steps}", encoding="utf-8"
    )
    done = _catalyst(["run", "long.yaml", "--what-if", "--format", "json"], project)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) > 65536  # more than a buffer's and a pipe's worth
    assert len(json.loads(done.stdout)["steps"]) == 200


def test_python_ends_the_process_while_another_thread_runs(tmp_path: Path, research_project: Path) -> None:
    """A thread still running when the command is done is waited for, as Python does."""
    marker = tmp_path / "thread-finished"
    before = (
        "import threading, time\n"
        f"threading.Thread(target=lambda: (time.sleep(0.5), open({str(marker)!r}, 'w').close())).start()\n"
    )
    done = _catalyst(["check", "research.yaml"], research_project, before)
    assert done.returncode == 0, done.stderr
    assert marker.exists()
    assert done.stderr.count("HANDLER") == 1


def test_a_profiled_process_ends_as_python_ends_it(tmp_path: Path, research_project: Path) -> None:
    """Under a profiler (or a tracer, or `python -i`) the interpreter's own exit runs: the
    profiler prints what it measured after the command."""
    project = research_project
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache-home")}
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-m", "catalyst_dsl", "--version"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "catalyst, version" in done.stdout and "function calls" in done.stdout


def test_main_raises_for_a_program_that_calls_it_and_goes_on(tmp_path: Path, research_project: Path) -> None:
    project = research_project
    probe = (
        "import sys\nfrom catalyst_dsl.cli.main import main\nsys.argv = ['catalyst', 'check', 'research.yaml']\n"
        "try:\n    main()\nexcept SystemExit as end:\n    print('went on after exit', end.code)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache-home")}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.splitlines()[-1] == "went on after exit 0", done.stdout + done.stderr


def _hello(tmp_path: Path) -> Path:
    project = tmp_path / "hello"
    project.mkdir()
    (project / "catalyst.toml").write_text("", encoding="utf-8")
    (project / "hello.yaml").write_text(
        "name: hello\ndescription: d\nowner: Engineer\nsteps:\n  - log-info: hi\n", encoding="utf-8"
    )
    return project


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["check", "hello.yaml"],
        ["run", "hello.yaml", "--what-if"],
        ["run", "hello.yaml", "--what-if", "--format", "json"],
    ],
)
def test_output_the_system_refuses_is_an_error_not_a_traceback(tmp_path: Path, args: list[str]) -> None:
    project = _hello(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache-home")}
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "catalyst_dsl", *args],
            cwd=project,
            env=env,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1, done.stderr
    assert "error: catalyst stopped: No space left on device" in done.stderr
    assert "Traceback" not in done.stderr and "run state" not in done.stderr


def test_a_run_without_standard_output_runs_to_its_end(tmp_path: Path) -> None:
    """`catalyst run ... >&-`: Python has no standard output; the run tells nobody and completes."""
    project = _hello(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache-home")}
    done = subprocess.run(
        ["sh", "-c", f"exec '{sys.executable}' -m catalyst_dsl run hello.yaml >&-"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "catalyst_dsl", "runs", "list"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "completed" in listed.stdout and "interrupted" not in listed.stdout, listed.stdout


def _refused_check(tmp_path: Path, filename: str, *, without_stdout: bool = False) -> subprocess.CompletedProcess:
    """`catalyst check` in a process where the command meets an OSError no command
    handles (a PermissionError naming `filename`), with or without standard output."""
    project = _hello(tmp_path)
    probe = (
        "import sys\nimport catalyst_dsl.cli.main as cli\n"
        "def refused(*args, **kwargs):\n"
        f"    raise PermissionError(13, 'Permission denied', {filename!r})\n"
        "cli.cli.main = refused\n"
        + ("sys.stdout = None\n" if without_stdout else "")
        + "sys.argv = ['catalyst', 'check', 'hello.yaml']\ncli.command_line()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache-home")}
    return subprocess.run(
        [sys.executable, "-c", probe], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )


def test_an_error_of_the_system_is_said_even_without_standard_output(tmp_path: Path) -> None:
    """No standard output at all (`>&-`) and an OSError no command handles: still an
    error line on standard error and exit 1, no traceback."""
    done = _refused_check(tmp_path, "somewhere", without_stdout=True)
    assert done.returncode == 1, done.stderr
    assert "error: catalyst stopped: Permission denied: somewhere" in done.stderr and "Traceback" not in done.stderr


def test_a_file_name_in_a_system_error_cannot_drive_the_terminal(tmp_path: Path) -> None:
    done = _refused_check(tmp_path, "evil\x1b[2Jname")
    assert done.returncode == 1, done.stderr
    assert "\x1b" not in done.stderr and "evil\\x1b[2Jname" in done.stderr
