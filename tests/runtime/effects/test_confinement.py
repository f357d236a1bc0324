"""Programs confined by the kernel (Landlock) to their declared writes, and programs that
die with their run: through `catalyst run` and `catalyst resume`, for real."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from catalyst_dsl.runtime.effects.confinement import Confinement, landlock
from catalyst_dsl.runtime.effects.process import namespaces_problem
from catalyst_dsl.runtime.effects.process_groups import ProcessGroups, start_time

from tests.runtime.test_reliability import _env, make_project, run_id_of, spawn, catalyst

needs_landlock = pytest.mark.skipif(landlock.abi_version() == 0, reason="this kernel has no Landlock")
#: The real temp folder of each program (the `project` fixture gives every program one, kept).
OWN_TEMP_FOLDER = Confinement.temp_folder
needs_namespaces = pytest.mark.skipif(
    namespaces_problem() is not None, reason=f"no private mounts here: {namespaces_problem()}"
)


def _writer(project, writes: str, script: str, grants: str = "allowedWritePaths: [out/**]") -> None:
    body = "\n".join(" " * 14 + line for line in script.strip().splitlines())
    project.playbook(
        "writer",
        f"""
        name: writer
        description: Writes where its script says.
        owner: Engineer
        {grants}
        steps:
          - name: write
            {writes}
            bash: |
{body}
    """,
    )


@pytest.fixture
def git_project(project):
    (project.root / ".git").mkdir()
    project.write(".git/config", "[core]\n")
    project.write("README.md", "readme\n")
    return project


@needs_landlock
@pytest.mark.parametrize("outside", ["../OUTSIDE", ".xe/runs/x", "README.md", ".git/config"])
def test_a_write_outside_the_declared_writes_is_refused_by_the_kernel(git_project, outside):
    _writer(git_project, "writes: [out/**]", f"echo planted >> {outside}")
    result = git_project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    error = git_project.snapshot()["error"]
    assert error["code"] == "PermissionDenied", error
    assert f"refused a write to '{outside}'" in error["message"]
    target = git_project.root / outside
    assert not target.exists() or "planted" not in target.read_text()


@needs_landlock
def test_a_write_beneath_the_declared_prefix_succeeds(project):
    _writer(project, "writes: [out/reports/**]", "mkdir -p out/reports/deep && echo ok > out/reports/deep/r.txt")
    result = project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert project.read("out/reports/deep/r.txt") == "ok\n"


@needs_landlock
def test_scratch_and_a_temp_folder_of_its_own_are_writable_without_writes(project, tmp_path, monkeypatch):
    monkeypatch.setattr(Confinement, "temp_folder", OWN_TEMP_FOLDER)
    # The temp folder beside the project, not holding it (as on a real machine).
    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_temp))
    monkeypatch.setenv("TMPDIR", str(system_temp))
    _writer(
        project, "", "echo s > temp://scratch.txt && cat temp://scratch.txt\necho t > $TMPDIR/t.txt\nmktemp > /dev/null"
    )
    result = project.run("writer")
    assert result.exit_code == 0, result.output
    _writer(project, "", f"echo t > {system_temp}/t.txt")
    refused = project.run("writer")
    assert refused.exit_code == 2, refused.output
    assert list(system_temp.iterdir()) == []  # the step's temp folder went with it


def test_each_program_gets_an_empty_temp_folder_that_dies_with_it(project, monkeypatch):
    monkeypatch.setattr(Confinement, "temp_folder", OWN_TEMP_FOLDER)
    project.playbook(
        "two",
        """
        name: two
        description: One step leaves a file in its temp folder, the next looks for it.
        owner: Engineer
        steps:
          - name: leave
            bash: echo left > "$TMPDIR/left.txt" && echo "$TMPDIR" > temp://where
          - name: look
            bash: |
              [ -z "$(ls -A "$TMPDIR")" ] || { echo "not empty: $(ls -A "$TMPDIR")"; exit 1; }
              [ ! -e "$(cat temp://where)" ] || { echo "still there: $(cat temp://where)"; exit 1; }
    """,
    )
    result = project.run("two")
    assert result.exit_code == 0, result.output
    assert list(project.temp.iterdir()) == []


@needs_landlock
def test_a_step_without_writes_writes_nothing_in_the_project(project):
    _writer(project, "", "echo x > new.txt", grants="")
    result = project.run("writer")
    assert result.exit_code == 2, result.output
    assert project.snapshot()["error"]["code"] == "PermissionDenied"
    assert not project.exists("new.txt")


@needs_landlock
def test_a_new_file_at_the_project_root_is_refused_saying_why_and_what_to_do(git_project):
    # The root holds .git/: it is granted entry by entry, so a program may change README.md
    # but not add a file beside it, even one its writes: name.
    _writer(git_project, "writes: [marker, README.md]", "echo more >> README.md\ntouch marker", grants="")
    result = git_project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    error = git_project.snapshot()["error"]
    assert error["code"] == "PermissionDenied", error
    assert error["message"] == (
        "the program was refused creating 'marker': the project root holds .git/ or the state directory, "
        "which no program writes, so a program may write only the entries it already had there, not add one"
    )
    assert 'writes: ["out/marker"]' in result.output
    assert git_project.read("README.md") == "readme\nmore\n" and not git_project.exists("marker")


@needs_landlock
def test_the_folder_suggested_for_a_refused_new_file_is_a_yaml_string_whatever_its_name(git_project):
    # In a YAML string "\n" is a line break: the backslash of the name is written twice.
    _writer(git_project, "writes: ['*']", "echo x > 'a\\new.txt'", grants="")
    result = git_project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert 'writes: ["out/a\\\\new.txt"]' in result.output


@needs_landlock
def test_git_is_refused_even_when_the_step_writes_everything(git_project):
    _writer(
        git_project,
        'writes: ["**"]',
        "echo changed > README.md\necho '[core] fsmonitor = touch PWNED' >> .git/config",
        grants="",
    )
    result = git_project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert "refused a write to '.git/config'" in git_project.snapshot()["error"]["message"]
    assert git_project.read("README.md") == "changed\n"  # the rest of the project is writable
    assert git_project.read(".git/config") == "[core]\n"


def test_without_landlock_the_run_says_so_once_and_falls_back(project, monkeypatch):
    monkeypatch.setenv("CATALYST_LANDLOCK", "off")
    project.playbook(
        "twice",
        """
        name: twice
        description: Two programs.
        owner: Engineer
        steps:
          - bash: echo one > temp://a
          - bash: echo two > ../OUTSIDE-fallback
    """,
    )
    result = project.run("twice")
    assert result.exit_code == 0, result.output
    assert result.output.count("programs run unconfined: CATALYST_LANDLOCK=off is set") == 1
    assert (project.root.parent / "OUTSIDE-fallback").exists()  # today's checks only: undeclared writes are not seen


def test_require_confinement_makes_a_missing_landlock_an_error(project, monkeypatch):
    monkeypatch.setenv("CATALYST_LANDLOCK", "off")
    project.settings("require-confinement = true\n")
    _writer(project, "", "echo x > temp://a")
    result = project.run("writer")
    assert result.exit_code == 2, result.output
    error = project.snapshot()["error"]
    assert error["code"] == "ConfinementUnavailable"
    assert "require-confinement = false" in result.output


def test_require_confinement_must_be_a_boolean(project):
    project.settings('require-confinement = "yes"\n')
    _writer(project, "", "echo x > temp://a")
    result = project.cli("check", "playbooks")
    assert "C801" in result.output and "require-confinement" in result.output


# -- programs die with their run --------------------------------------------------------------------


def _alive(pid: int) -> bool:
    return start_time(pid) is not None


def _wait_until(predicate, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.mark.slow
def test_a_killed_run_takes_its_programs_with_it_and_resume_runs_the_step_once_more(tmp_path):
    project = make_project(
        tmp_path / "project",
        {
            "loop": """
        name: loop
        description: A step whose program outlives a kill unless it dies with its run.
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: looping
            writes: [out/**]
            bash: |
              echo "start $$" >> out/marker
              sleep 2 &
              child=$!
              echo "child $child" >> out/marker
              wait $child
              echo "end $$" >> out/marker
    """
        },
    )
    marker = project / "out" / "marker"
    (tmp_path / "temp").mkdir()
    run = spawn(
        project, "run", "loop", "--mode", "autonomous", log=tmp_path / "first", env=_env(TMPDIR=str(tmp_path / "temp"))
    )
    assert _wait_until(lambda: marker.exists() and "child" in marker.read_text()), (tmp_path / "first.err").read_text()
    child = int(marker.read_text().split("child ")[1].split()[0])
    records = list((project / ".xe" / "runs").glob("run-*.processes"))
    assert len(records) == 1  # the group is on record while the program runs
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=10)
    assert _wait_until(lambda: not _alive(child)), "the step's child outlived its run"
    run_id = run_id_of((tmp_path / "first.out").read_text())
    system_temp = tmp_path / "temp"
    left = list(system_temp.glob(f"catalyst-step-{run_id}-*"))
    assert len(left) == 1  # the killed catalyst could not remove its program's temp folder
    resumed = catalyst(project, "resume", run_id, env=_env(TMPDIR=str(system_temp)))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert not left[0].exists()  # the resumed run, ending, did
    lines = marker.read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["start", "child", "start", "child", "end"], lines
    assert not list((project / ".xe" / "runs").glob("run-*.processes"))


def test_resume_kills_a_recorded_group_only_when_the_start_time_matches(tmp_path):
    import subprocess

    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        groups = ProcessGroups(tmp_path / "run-x.processes", b"k" * 32)
        groups.add(sleeper.pid, start_time(sleeper.pid) + 1, "sleep")  # a stale record
        assert groups.reap() == []
        assert sleeper.poll() is None and not groups.path.exists()
        groups.add(sleeper.pid, start_time(sleeper.pid), "sleep")
        assert groups.reap() == [sleeper.pid]
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()


def test_resume_never_kills_a_group_recorded_by_hand(tmp_path):
    # Anyone can read a process's start time in /proc: a record written by someone who can
    # write the state directory but does not hold the run key names it rightly, and is
    # still not believed.
    import json
    import subprocess

    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        path = tmp_path / "run-x.processes"
        path.write_text(json.dumps({str(sleeper.pid): {"start": start_time(sleeper.pid), "program": "sleep"}}))
        assert ProcessGroups(path, b"k" * 32).reap() == []
        assert sleeper.poll() is None and not path.exists()
        # Nor is a genuine record of another run's file, or sealed with another key.
        ProcessGroups(tmp_path / "run-y.processes", b"k" * 32).add(sleeper.pid, start_time(sleeper.pid), "sleep")
        os.replace(tmp_path / "run-y.processes", path)
        assert ProcessGroups(path, b"k" * 32).reap() == []
        ProcessGroups(path, b"j" * 32).add(sleeper.pid, start_time(sleeper.pid), "sleep")
        assert ProcessGroups(path, b"k" * 32).reap() == []
        assert sleeper.poll() is None
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()


@needs_landlock
def test_an_ai_agent_writes_the_grants_only_when_its_step_grants_writing_tools(project):
    project.settings('ai-adapters = ["command"]\n')
    project.user_settings('ai-command = ["bash", "-c", "mkdir -p out && echo x > out/agent.txt && echo answer"]\n')
    project.playbook(
        "agent",
        """
        name: agent
        description: Asks an agent that writes a file.
        owner: Engineer
        allowedWritePaths: [out/**]
        inputs:
          - boolean: edit
        steps:
          - name: read-only
            condition: ${{ !get('edit') }}
            ai-prompt: look around
          - name: editing
            condition: ${{ get('edit') }}
            ai-prompt: change things
            tools: [read, edit]
    """,
    )
    refused = project.run("agent", "--mode", "autonomous", edit="false")
    assert refused.exit_code == 2, refused.output
    assert "refused a write to 'out'" in project.snapshot()["error"]["message"]
    assert not project.exists("out/agent.txt")
    allowed = project.run("agent", "--mode", "autonomous", edit="true")
    assert allowed.exit_code == 0, allowed.output
    assert project.read("out/agent.txt") == "x\n"


def test_a_prefix_holding_git_or_the_state_directory_is_granted_around_them(tmp_path, monkeypatch):
    system_temp = tmp_path / "temp"
    system_temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_temp))
    root = tmp_path / "project"
    for directory in (".git/hooks", ".xe/runs", ".xe/features", "src"):
        (root / directory).mkdir(parents=True)
    (root / "README.md").write_text("r")
    (root / "link").symlink_to(tmp_path)
    confinement = Confinement.of(root, root / ".xe/runs/tmp/run-1", ["**", "temp://x", "out/*.txt"], [".xe/runs"])
    granted = {p.relative_to(root).as_posix() for p in confinement.writable_paths() if root in p.parents}
    assert granted == {".xe/runs/tmp/run-1", ".xe/features", "README.md", "src", "out"}  # no .git, no state, no link
    step_temp = system_temp / "catalyst-step-1"
    step_temp.mkdir()
    assert step_temp in confinement.writable_paths(step_temp) and system_temp not in confinement.writable_paths(
        step_temp
    )
    assert confinement.shown() == {
        "mayWrite": ["./", "out/", "temp://", "$TMPDIR"],
        "neverWrites": [".git/", ".xe/runs/"],
    }


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_nothing_a_step_starts_outlives_it(project):
    # In the background, in a new session (setsid), orphaned by a double fork, or shielded
    # from hang-ups: each would keep running, confined or not, after its step has ended.
    _writer(
        project,
        "writes: [out/**]",
        """
        mkdir -p out
        setsid sh -c 'echo $$ > out/setsid; exec sleep 60' </dev/null >/dev/null 2>&1 &
        ( ( sh -c 'echo $$ > out/orphan; exec sleep 60' & ) ) </dev/null >/dev/null 2>&1
        nohup sh -c 'trap "" HUP TERM; echo $$ > out/nohup; exec sleep 60' </dev/null >/dev/null 2>&1 &
        for f in setsid orphan nohup; do while [ ! -s out/$f ]; do sleep 0.05; done; done
    """,
    )
    result = project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    pids = {name: int(project.read(f"out/{name}")) for name in ("setsid", "orphan", "nohup")}
    assert {name: _alive(pid) for name, pid in pids.items()} == dict.fromkeys(pids, False)


@needs_landlock
def test_a_nested_repository_beneath_a_grant_is_not_writable(project):
    # A vendored clone's .git/config can name a program git runs (core.fsmonitor), as the
    # project's own can; the gateway refuses every .git segment, and so does the kernel.
    project.write("vendor/lib/.git/config", "[core]\n")
    project.write("vendor/lib/code.txt", "v1\n")
    _writer(
        project,
        "writes: [vendor/**]",
        """
        echo v2 > vendor/lib/code.txt
        printf '\\tfsmonitor = touch PWNED\\n' >> vendor/lib/.git/config
    """,
        grants="allowedWritePaths: [vendor/**]",
    )
    result = project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert "refused a write to 'vendor/lib/.git/config'" in project.snapshot()["error"]["message"]
    assert project.read("vendor/lib/code.txt") == "v2\n"
    assert project.read("vendor/lib/.git/config") == "[core]\n"


def test_a_program_writes_the_files_that_decide_who_may_approve_only_where_a_grant_names_them(tmp_path):
    from catalyst_dsl.runtime.effects.gateway import EffectsGateway, RealPerformer
    from catalyst_dsl.runtime.effects.grants import Grants

    root = tmp_path / "project"
    for directory in (".git", ".xe/runs", ".catalyst"):
        (root / directory).mkdir(parents=True)
    for name in ("catalyst.toml", "README.md", ".catalyst/allowed_signers", ".catalyst/notes.md"):
        (root / name).write_text("x")

    def writable(grants, declared) -> set[str]:
        gateway = EffectsGateway(
            root,
            root / ".xe/runs/tmp/run-1",
            (Grants.of("p", grants),),
            RealPerformer(),
            protected=(".xe/runs",),
            guarded=("catalyst.toml", ".catalyst/allowed_signers"),
        )
        paths = gateway.confinement(declared).writable_paths()
        return {p.relative_to(root).as_posix() for p in paths if root in p.parents}

    anywhere = writable(None, ["**"])
    assert "README.md" in anywhere and ".catalyst/notes.md" in anywhere
    assert (
        "catalyst.toml" not in anywhere and ".catalyst/allowed_signers" not in anywhere and ".catalyst" not in anywhere
    )
    assert "catalyst.toml" in writable(["catalyst.toml", "README.md"], ["catalyst.toml"])


# -- grants follow real paths -------------------------------------------------------------------------


@needs_landlock
def test_a_committed_link_cannot_widen_a_grant_to_the_whole_project(git_project):
    # `out -> .`: a kernel rule on `out/` would attach to the project root it leads to.
    git_project.write("src/code.txt", "v1\n")
    (git_project.root / "out").symlink_to(".", target_is_directory=True)
    _writer(git_project, "writes: [out/**]", "echo planted > out/src/code.txt\nrm -f out/playbooks/writer.yaml")
    result = git_project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    error = git_project.snapshot()["error"]
    assert error["code"] == "PermissionDenied" and "'out' is a symbolic link to the project root" in error["message"], (
        error
    )
    assert "remove the link 'out'" in result.output
    assert git_project.read("src/code.txt") == "v1\n"
    assert git_project.exists("playbooks/writer.yaml")


@needs_landlock
def test_a_link_made_by_an_earlier_step_cannot_widen_a_later_steps_grant(git_project):
    git_project.write("src/code.txt", "v1\n")
    git_project.playbook(
        "two",
        """
        name: two
        description: One step links, the next writes through the link.
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - name: link
            writes: [out/**]
            bash: mkdir -p out && ln -s .. out/gen
          - name: write
            writes: [out/gen/**]
            bash: echo planted > out/gen/src/code.txt
    """,
    )
    result = git_project.run("two", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    error = git_project.snapshot()["error"]
    assert (
        error["code"] == "PermissionDenied" and "'out/gen' is a symbolic link to the project root" in error["message"]
    ), error
    assert git_project.read("src/code.txt") == "v1\n"


@needs_landlock
def test_a_link_inside_a_grant_leads_nowhere_writable(git_project):
    # Kernel rules follow the real path of each write: a link inside `out/` to a file or a
    # directory outside it is refused like the path it leads to.
    (git_project.root / "out").mkdir()
    (git_project.root / "out" / "f").symlink_to("../README.md")
    (git_project.root / "out" / "up").symlink_to("..", target_is_directory=True)
    for script in ("echo planted > out/f", "echo planted > out/up/new.txt"):
        _writer(git_project, "writes: [out/**]", script)
        result = git_project.run("writer", "--mode", "autonomous")
        assert result.exit_code == 2, result.output
        assert git_project.snapshot()["error"]["code"] == "PermissionDenied"
    assert git_project.read("README.md") == "readme\n"
    assert not git_project.exists("new.txt")


def test_the_gateway_refuses_a_built_in_write_through_a_link_that_widens_a_grant(git_project):
    (git_project.root / "out").symlink_to(".", target_is_directory=True)
    git_project.playbook(
        "note",
        """
        name: note
        description: Writes through the link.
        owner: Engineer
        allowedWritePaths: [out/**]
        steps:
          - file-write: out/README.md
            content: planted
    """,
    )
    result = git_project.run("note", "--mode", "autonomous")
    assert result.exit_code == 2, result.output
    assert git_project.snapshot()["error"]["code"] == "PermissionDenied"
    assert git_project.read("README.md") == "readme\n"


# -- modes, owners and times; shared memory ------------------------------------------------------------


@needs_namespaces
def test_a_program_cannot_change_modes_owners_or_times_under_git_the_state_or_the_settings(git_project):
    # Landlock covers writes, not chmod, chown or utime: the launcher mounts these read-only.
    (git_project.root / ".git" / "hooks").mkdir()
    git_project.write(".catalyst/allowed_signers", "alice ssh-ed25519 AAAA\n")
    (git_project.root / ".xe" / "runs").mkdir(parents=True)
    watched = [".git/hooks", ".git/config", ".xe/runs", "catalyst.toml", ".catalyst/allowed_signers"]
    before = {name: os.stat(git_project.root / name) for name in watched}
    _writer(
        git_project,
        "",
        "\n".join(
            [
                f"chmod 0777 {' '.join(watched)} || :",
                "touch -d 2000-01-01 .git/config catalyst.toml || :",
                f"chown 1234 {' '.join(watched)} || :",
            ]
        ),
        grants="",
    )
    result = git_project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "Read-only file system" in result.output
    after = {name: os.stat(git_project.root / name) for name in watched}
    assert {n: (s.st_mode, s.st_uid) for n, s in after.items()} == {n: (s.st_mode, s.st_uid) for n, s in before.items()}
    touched = (".git/config", "catalyst.toml")  # not .xe/runs: catalyst writes its snapshot there
    assert [after[n].st_mtime_ns for n in touched] == [before[n].st_mtime_ns for n in touched]


@needs_namespaces
def test_shared_memory_is_private_to_each_program_and_dies_with_it(project):
    name = f"catalyst-test-{os.getpid()}-{time.monotonic_ns()}"
    project.playbook(
        "two",
        f"""
        name: two
        description: One step leaves a file in /dev/shm, the next looks for it.
        owner: Engineer
        steps:
          - name: leave
            bash: echo left > /dev/shm/{name} && python3 -c "import multiprocessing; multiprocessing.Lock()"
          - name: look
            bash: "[ ! -e /dev/shm/{name} ] || {{ echo still there; exit 1; }}"
    """,
    )
    try:
        result = project.run("two")
        assert result.exit_code == 0, result.output
        assert not os.path.exists(f"/dev/shm/{name}")
    finally:
        if os.path.exists(f"/dev/shm/{name}"):
            os.remove(f"/dev/shm/{name}")


def test_without_namespaces_the_run_says_so_once_and_keeps_landlock(git_project, monkeypatch):
    monkeypatch.setenv("CATALYST_NAMESPACES", "off")
    git_project.playbook(
        "twice",
        """
        name: twice
        description: Two programs.
        owner: Engineer
        steps:
          - bash: echo one > temp://a
          - bash: echo two > temp://b
    """,
    )
    result = git_project.run("twice")
    assert result.exit_code == 0, result.output
    assert result.output.count("programs get no private mounts: CATALYST_NAMESPACES=off is set") == 1


@needs_namespaces
def test_a_program_started_in_the_scratch_space_cannot_climb_to_the_state_directory_unmounted(project):
    # The scratch space lies in the state directory (`.xe/runs/tmp/RUN`): `..` from a working
    # directory looked up before the mounts would reach `.xe/runs/tmp` beneath them.
    project.playbook(
        "climb",
        """
        name: climb
        description: Starts in scratch and changes the mode of the directory above.
        owner: Engineer
        steps:
          - bash: chmod 0777 .. || echo refused
            cwd: temp://
    """,
    )
    (project.root / ".xe" / "runs" / "tmp").mkdir(parents=True)
    mode = os.stat(project.root / ".xe" / "runs" / "tmp").st_mode
    result = project.run("climb")
    assert result.exit_code == 0, result.output
    assert "refused" in result.output, result.output
    assert os.stat(project.root / ".xe" / "runs" / "tmp").st_mode == mode


def test_the_read_only_paths_hold_a_worktrees_git_directory_and_nested_repositories(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))  # the user's key files: their own test
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-cache"))
    main = tmp_path / "main" / ".git"
    (main / "worktrees" / "feature").mkdir(parents=True)
    (main / "worktrees" / "feature" / "commondir").write_text("../..\n")
    root = tmp_path / "project"
    for directory in (".xe/runs", "vendor/lib/.git", "other/lib/.git"):
        (root / directory).mkdir(parents=True)
    (root / ".git").write_text(f"gitdir: {main / 'worktrees' / 'feature'}\n")
    (root / "catalyst.toml").write_text("")
    confinement = Confinement.of(
        root, root / ".xe/runs/tmp/run-1", ["vendor/**"], [".xe/runs"], ["catalyst.toml", ".catalyst/allowed_signers"]
    )
    assert set(confinement.read_only_paths()) == {
        root / ".git",
        main / "worktrees" / "feature",
        main,
        root / ".xe/runs",
        root / "catalyst.toml",
        root / "vendor/lib/.git",
    }
    mounts = confinement.mounts(confinement.writable_paths(private_shm=True), None)
    assert mounts["writable"] == [str(root / ".xe/runs/tmp/run-1")]  # the scratch space, inside the state directory


@needs_landlock
def test_a_path_that_leads_elsewhere_when_opened_is_never_granted(tmp_path):
    # A link swapped in after the paths were resolved: the rule would attach where it leads.
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(landlock.PathMoved, match="led to"):
        landlock.build_ruleset(landlock.abi_version(), [tmp_path / "out"])


@needs_landlock
def test_a_device_file_is_opened_once_a_process_and_granted_in_every_ruleset(tmp_path):
    # Checked in a fresh interpreter, which then confines itself by the second ruleset: the
    # device granted there from its kept handle takes writes, and what no rule names does not.
    probe = """
import ctypes, os, sys
from pathlib import Path
from catalyst_dsl.runtime.effects.confinement import landlock

opened = []
real_open = os.open
os.open = lambda path, *a, **k: opened.append(os.fspath(path)) or real_open(path, *a, **k)
here = Path(sys.argv[1])
abi = landlock.abi_version()
os.close(landlock.build_ruleset(abi, [here, Path("/dev/null")]))
ruleset = landlock.build_ruleset(abi, [here, Path("/dev/null")])
os.open = real_open
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0 and libc.syscall(446, ruleset, 0) == 0
with open("/dev/null", "w") as sink:
    sink.write("granted")
(here / "granted").write_text("granted")
try:
    (here.parent / "refused").write_text("refused")
    refused = False
except PermissionError:
    refused = True
print(opened.count("/dev/null"), opened.count(str(here)), refused)
"""
    root = Path(__file__).resolve().parents[3]  # this checkout's catalyst_dsl, first on the path
    shown = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, cwd=root, check=True
    )
    assert shown.stdout.split() == ["1", "2", "True"]
    assert (tmp_path / "granted").exists() and not (tmp_path.parent / "refused").exists()


@needs_landlock
@needs_namespaces
def test_the_read_only_paths_cannot_be_reached_through_catalysts_own_mount_namespace(git_project):
    # /proc/PID/root of a process outside the step's namespace (the launcher, the parent of
    # the program's keeper, and catalyst above it) shows the files mounted writable;
    # Landlock keeps a confined program from looking into a process outside its domain.
    _writer(
        git_project,
        "",
        """
        launcher=$(awk '/^PPid:/ {print $2}' /proc/$PPID/status)
        catalyst=$(awk '/^PPid:/ {print $2}' /proc/$launcher/status)
        echo "outside: $launcher $catalyst"
        for pid in $launcher $catalyst; do
          chmod 0777 /proc/$pid/root$PWD/.git/config || echo "refused through $pid"
        done
    """,
        grants="",
    )
    mode = os.stat(git_project.root / ".git" / "config").st_mode
    result = git_project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    launcher, catalyst = result.output.split("outside: ")[1].split()[:2]
    assert int(catalyst) == os.getpid() and int(launcher) != os.getpid()
    assert f"refused through {launcher}" in result.output and f"refused through {catalyst}" in result.output
    assert os.stat(git_project.root / ".git" / "config").st_mode == mode


@needs_namespaces
def test_a_program_cannot_reach_around_the_mounts_with_capabilities(git_project, tmp_path, monkeypatch):
    # A program run as root keeps no capability that reaches around the read-only mounts
    # (open_tree clones a mount without them), pins its temp folder (chattr +i), renames
    # the machine, or changes the user's key files.
    config = tmp_path / "config-home"
    (config / "catalyst").mkdir(parents=True)
    (config / "catalyst" / "run-key").write_text("ab" * 32 + "\n")
    (config / "catalyst" / "run-key").chmod(0o600)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    name = os.uname().nodename
    _writer(
        git_project,
        "",
        "\n".join(
            [
                (
                    "python3 -c \"import ctypes; l = ctypes.CDLL(None, use_errno=True); "
                    "print('open_tree', l.syscall(428, -100, b'.', 1 | 0x80000))\""
                ),
                "hostname catalyst-test-host 2>/dev/null || echo 'hostname refused'",
                "touch \"$TMPDIR/pinned\"; chattr +i \"$TMPDIR/pinned\" 2>/dev/null || echo 'chattr refused'",
                f"chmod 0644 {config}/catalyst/run-key 2>/dev/null || echo 'key refused'",
            ]
        ),
        grants="",
    )
    result = git_project.run("writer", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "open_tree -1" in result.output and "hostname refused" in result.output, result.output
    assert "key refused" in result.output and (config / "catalyst" / "run-key").stat().st_mode & 0o777 == 0o600
    assert os.uname().nodename == name
    if os.geteuid() == 0:
        assert "chattr refused" in result.output


@needs_namespaces
def test_system_v_shared_memory_dies_with_the_program(project):
    key = 0x5000 + os.getpid() % 0x1000
    made = f"import ctypes; l = ctypes.CDLL(None, use_errno=True); print('made', l.shmget({key}, 4096, 0o1666) >= 0)"
    found = f"import ctypes; l = ctypes.CDLL(None, use_errno=True); print('found', l.shmget({key}, 0, 0o666) >= 0)"
    project.playbook(
        "ipc",
        f"""
        name: ipc
        description: One step makes a System V segment, the next looks for it.
        owner: Engineer
        steps:
          - bash: python3 -c "{made}"
            writes: []
          - bash: python3 -c "{found}"
            writes: []
    """,
    )
    result = project.run("ipc", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "made True" in result.output and "found False" in result.output, result.output
    import ctypes

    assert ctypes.CDLL(None).shmget(key, 0, 0o666) < 0  # nothing left on the machine
