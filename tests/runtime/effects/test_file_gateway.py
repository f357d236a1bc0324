"""The file gateway: paths walked beneath the project's handle, `.git/` and the state directory refused.

The race tests swap a directory on a write's path for a symbolic link to a directory
outside the project, atomically (renameat2 RENAME_EXCHANGE, so the name always exists),
as fast as a thread can, while writes and reads go through the real gateway.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import threading
from pathlib import Path

import pytest

from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.effects.gateway import EffectsGateway, RealPerformer
from catalyst_dsl.runtime.effects.grants import Grants

STATE = ".xe/runs"


def gateway(root: Path, grants: list[str] | None = None, resources: Path | None = None) -> EffectsGateway:
    return EffectsGateway(
        root,
        root / STATE / "tmp" / "run",
        (Grants.of("playbook", grants),),
        RealPerformer(),
        protected=(STATE,),
        resources=resources,
    )


def refused(action, *args) -> StepError:
    with pytest.raises(StepError) as caught:
        action(*args)
    assert caught.value.code == "PermissionDenied", caught.value.message
    return caught.value


@pytest.fixture
def root(tmp_path) -> Path:
    project = tmp_path / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    return project


@pytest.fixture
def outside(tmp_path) -> Path:
    found = tmp_path / "outside"
    found.mkdir()
    return found


# -- .git and the state directory ---------------------------------------------------------------


@pytest.mark.parametrize(
    "grants", [None, ["**"], ["**", ".git/hooks/**"]], ids=["no-grants", "everything", "hooks-only"]
)
@pytest.mark.parametrize(
    "written", [".git/config", ".GIT/config", ".Git./config", "sub/../.git/config", "vendor/lib/.git/config", ".git"]
)
def test_git_files_are_refused_unless_a_grant_names_them(root, grants, written):
    error = refused(gateway(root, grants).write_file, written, b"[core]\n\tfsmonitor = touch PWNED\n")
    assert error.metadata == {"path": written}
    assert ".git directory" in error.message
    assert (root / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"


def test_a_grant_naming_git_hooks_allows_the_hooks_and_nothing_else_of_git(root):
    hooks = gateway(root, [".git/hooks/**", "out/**"])
    hooks.write_file(".git/hooks/pre-commit", b"#!/bin/sh\n")
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() == b"#!/bin/sh\n"
    refused(hooks.write_file, ".git/config", b"x")
    refused(hooks.delete_file, ".git/config")
    assert (root / ".git" / "config").exists()


def test_a_link_into_git_is_refused_like_the_path_itself(root):
    (root / "docs").symlink_to(".git", target_is_directory=True)
    error = refused(gateway(root).write_file, "docs/config", b"x")
    assert ".git directory" in error.message
    assert (root / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"


def test_declared_writes_into_git_are_refused_without_a_grant_naming_it(root):
    refused(gateway(root).check_pattern, ".git/hooks/*")
    refused(gateway(root, ["**"]).check_pattern, ".git/**")
    gateway(root, [".git/hooks/**"]).check_pattern(".git/hooks/*")


@pytest.mark.parametrize("grants", [None, ["**"], [".xe/runs/**"]], ids=["no-grants", "everything", "named"])
@pytest.mark.parametrize("written", [".xe/runs/run-1.json", ".XE/Runs/run-1.json", "xe://runs/run-1.json"])
def test_the_state_directory_is_never_written_nor_read(root, grants, written):
    (root / STATE).mkdir(parents=True)
    (root / STATE / "run-1.json").write_text("{}", encoding="utf-8")
    files = gateway(root, grants)
    refused(files.write_file, written, b"forged")
    refused(files.delete_file, written)
    if written != ".XE/Runs/run-1.json":  # on this case-keeping file system that is another file
        refused(files.source, written)
    assert (root / STATE / "run-1.json").read_text(encoding="utf-8") == "{}"


# -- links inside the project ----------------------------------------------------------------------


def test_a_link_inside_the_project_to_a_place_inside_still_works(root):
    (root / "real").mkdir()
    (root / "alias").symlink_to("real", target_is_directory=True)
    (root / "real" / "notes.md").write_text("old", encoding="utf-8")
    (root / "latest.md").symlink_to(root / "real" / "notes.md")  # absolute, inside
    files = gateway(root, ["real/**", "alias/**", "latest.md"])  # both the written and the real path
    target = files.write_file("alias/new.md", b"new")
    assert target.inner == "real/new.md" and (root / "real" / "new.md").read_bytes() == b"new"
    files.write_file("latest.md", b"through the link")
    assert (root / "real" / "notes.md").read_bytes() == b"through the link"
    assert (root / "latest.md").is_symlink()
    assert files.read_file(files.source("alias/notes.md"), 100) == b"through the link"


def test_a_link_whose_target_is_outside_the_grants_is_refused(root):
    (root / "out").mkdir()
    (root / "src").mkdir()
    (root / "out" / "alias").symlink_to("../src", target_is_directory=True)
    error = refused(gateway(root, ["out/**"]).write_file, "out/alias/main.py", b"x")
    assert "may write out/**" in error.message
    assert list((root / "src").iterdir()) == []


@pytest.mark.parametrize("link", ["loop", "pair"])
def test_link_loops_are_refused_naming_the_path(root, link):
    if link == "loop":
        (root / "a").symlink_to("a")
    else:
        (root / "a").symlink_to("b")
        (root / "b").symlink_to("a")
    for action in (gateway(root).write_file,):
        error = refused(action, "a/x.txt", b"x")
        assert error.metadata == {"path": "a/x.txt"} and "loop" in error.message
    error = refused(gateway(root).source, "a/x.txt")
    assert "loop" in error.message


def test_a_symlinked_parent_directory_leading_outside_is_refused(root, outside):
    (root / "out").mkdir()
    (root / "out" / "link").symlink_to(outside, target_is_directory=True)
    (root / "up").symlink_to("..", target_is_directory=True)
    (root / "rel").symlink_to("../outside", target_is_directory=True)
    files = gateway(root)
    for written in ("out/link/x.txt", "out/link/new/deeper/x.txt", "up/outside/x.txt", "rel/x.txt"):
        error = refused(files.write_file, written, b"x")
        assert "outside the project" in error.message
    assert list(outside.iterdir()) == []


def test_a_delete_through_a_symlinked_parent_is_refused(root, outside):
    (outside / "precious.txt").write_text("keep", encoding="utf-8")
    (root / "link").symlink_to(outside, target_is_directory=True)
    refused(gateway(root).delete_file, "link/precious.txt")
    assert (outside / "precious.txt").read_text(encoding="utf-8") == "keep"


def test_a_delete_of_a_link_removes_the_link_not_its_target(root, outside):
    (outside / "precious.txt").write_text("keep", encoding="utf-8")
    (root / "shortcut").symlink_to(outside / "precious.txt")
    assert gateway(root).delete_file("shortcut") is True
    assert not os.path.lexists(root / "shortcut")
    assert (outside / "precious.txt").read_text(encoding="utf-8") == "keep"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("notes/a\nb.md", "\\x0a at character 8"),
        ("notes/a\tb.md", "\\x09 at character 8"),
        ("notes/a\x1b[31mb.md", "\\x1b at character 8"),
        ("notes/a\u202eb.md", "\\u202e at character 8"),
        ("notes/a\u061cb.md", "\\u061c at character 8"),
        ("temp://a\rb", "\\x0d at character 9"),
    ],
)
def test_a_name_with_a_control_character_is_never_created(root, name, shown):
    problem = refused(gateway(root).write_file, name, b"x")
    assert "holds a control character (" + shown + ")" in problem.message
    assert problem.message.isprintable()  # the name is shown escaped
    assert not (root / "notes").exists()


def test_a_declared_write_with_a_control_character_is_refused(root):
    problem = refused(gateway(root, ["out/**"]).check_pattern, "out/a\nb.md")
    assert problem.message == (
        "this step declares it writes 'out/a\\x0ab.md': the path holds a control character (\\x0a at character 6)"
    )
    gateway(root, ["out/**"]).check_pattern("out/notes-é.md")  # any script's letters are fine


def test_a_file_with_a_control_character_in_its_name_can_still_be_deleted(root):
    (root / "a\nb.md").write_text("left by a program", encoding="utf-8")
    assert gateway(root).delete_file("a\nb.md") is True
    assert not (root / "a\nb.md").exists()
    gateway(root).write_file("notes/é ü.md", b"ok")  # printable text of any script is a name
    assert (root / "notes" / "é ü.md").read_bytes() == b"ok"


def test_scratch_and_resources_stay_beneath_their_own_directories(root, outside):
    resources = root / "node_modules" / "catalyst"
    resources.mkdir(parents=True)
    (resources / "leak").symlink_to(outside, target_is_directory=True)
    (outside / "secret.md").write_text("secret", encoding="utf-8")
    files = gateway(root, resources=resources)
    refused(files.source, "catalyst://leak/secret.md")
    files.write_file("temp://notes/a.txt", b"scratch")
    assert files.read_file(files.source("temp://notes/../notes/a.txt"), 100) == b"scratch"
    (root / STATE / "tmp" / "run" / "away").symlink_to(outside, target_is_directory=True)
    refused(files.write_file, "temp://away/x.txt", b"x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]


def test_listings_never_enter_a_link_out(root, outside):
    (outside / "secret.md").write_text("secret", encoding="utf-8")
    (root / "docs" / "guides").mkdir(parents=True)
    (root / "docs" / "guides" / "a.md").write_text("a", encoding="utf-8")
    (root / "docs" / "away").symlink_to(outside, target_is_directory=True)
    files = gateway(root)
    assert files.list_files(files.source("docs")) == ["guides/a.md"]
    refused(files.source, "docs/away")


def test_a_check_that_no_longer_holds_stops_the_write(root, outside):
    """The effect walks the path again and proceeds only where the check walked."""
    (root / "out" / "sub").mkdir(parents=True)
    files = gateway(root)
    target = files.target("out/sub/x.txt")
    (root / "out" / "sub").rename(root / "out" / "parked")
    (root / "out" / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Exception) as caught:
        files.performer.write_file(target, b"x")
    assert "outside" in str(caught.value)
    assert list(outside.iterdir()) == []


# -- the race --------------------------------------------------------------------------------------


class Swapper(threading.Thread):
    """Exchanges `directory` and `link` (a link to a directory outside) until stopped."""

    def __init__(self, directory: Path, link: Path) -> None:
        super().__init__(daemon=True)
        self.directory, self.link = directory, link
        self.stop = threading.Event()
        self.swaps = 0
        libc = ctypes.CDLL(None, use_errno=True)
        self.renameat2 = getattr(libc, "renameat2", None)

    def exchange(self) -> None:
        # AT_FDCWD with absolute paths; RENAME_EXCHANGE = 2: both names always exist.
        if self.renameat2(-100, os.fsencode(self.directory), -100, os.fsencode(self.link), 2) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    def run(self) -> None:
        while not self.stop.is_set():
            self.exchange()
            self.swaps += 1

    def __enter__(self) -> "Swapper":
        if self.renameat2 is None:
            pytest.skip("this C library has no renameat2 to swap a directory for a link atomically")
        try:
            self.exchange()
            self.exchange()
        except OSError as error:
            if error.errno in (errno.EINVAL, errno.ENOSYS):
                pytest.skip(f"this file system cannot exchange names atomically: {error}")
            raise
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.join()
        if self.directory.is_symlink():
            self.exchange()


def racing_tree(root: Path, outside: Path) -> tuple[Path, Path]:
    """out/sub (a real directory) and out/swap (a link to `outside`), as the swapper wants."""
    (root / "out" / "sub").mkdir(parents=True)
    (root / "out" / "swap").symlink_to(outside, target_is_directory=True)
    return root / "out" / "sub", root / "out" / "swap"


def test_a_thousand_writes_racing_a_link_swap_never_land_outside(root, outside):
    directory, link = racing_tree(root, outside)
    files = gateway(root, ["out/**"])
    written, denied = [], 0
    with Swapper(directory, link) as swapper:
        for i in range(1000):
            try:
                files.write_file(f"out/sub/file-{i}.txt", b"inside")
                written.append(i)
            except StepError as error:
                assert error.code == "PermissionDenied", error.message
                denied += 1
    assert list(outside.iterdir()) == []
    assert len(written) + denied == 1000 and swapper.swaps > 0
    assert sorted(int(p.stem.split("-")[1]) for p in directory.iterdir()) == written


def test_reads_racing_a_link_swap_never_read_outside(root, outside):
    resources = root / "resources"
    directory, link = racing_tree(resources, outside)
    (directory / "guide.md").write_text("inside", encoding="utf-8")
    (outside / "guide.md").write_text("outside", encoding="utf-8")
    files = gateway(root, resources=resources)
    seen = set()
    with Swapper(directory, link):
        for _ in range(1000):
            try:
                seen.add(files.read_file(files.source("catalyst://out/sub/guide.md"), 100))
            except StepError as error:
                assert error.code == "PermissionDenied", error.message
    assert seen <= {b"inside"}


@pytest.mark.slow
def test_runs_racing_a_link_swap_never_write_outside(project, outside):
    directory, link = racing_tree(project.root, outside)
    project.playbook(
        "race",
        """
        name: race
        description: writes where a link is being swapped in and out
        owner: Engineer
        allowedWritePaths: [out/**]
        inputs:
          - string: file
        steps:
          - file-write: "out/sub/{{file}}.txt"
            content: inside
    """,
    )
    outcomes = {}
    with Swapper(directory, link):
        for i in range(20):
            result = project.run("race", file=f"run-{i}")
            outcomes[i] = result.exit_code
            assert result.exit_code == 0 or "PermissionDenied" in result.output, result.output
    assert list(outside.iterdir()) == []
    assert sorted(p.stem for p in directory.iterdir()) == sorted(
        f"run-{i}" for i, code in outcomes.items() if code == 0
    )


# -- through `catalyst run` and `catalyst check` -------------------------------------------------------


def test_an_input_chosen_path_cannot_write_git_config(project):
    (project.root / ".git").mkdir()
    (project.root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    project.playbook(
        "note",
        """
        name: note
        description: writes a note where it is told
        owner: Engineer
        inputs:
          - string: where
        steps:
          - file-write: "{{inputs.where}}"
            content: "[core]\\n\\tfsmonitor = touch PWNED\\n"
    """,
    )
    result = project.run("note", where=".git/config")
    assert result.exit_code == 2, result.output
    assert "PermissionDenied" in result.output and ".git directory" in result.output
    assert project.read(".git/config") == "[core]\n"


def test_an_input_cannot_put_a_line_break_in_a_name_a_run_creates(project):
    project.playbook(
        "note",
        """
        name: note
        description: writes a note on a topic
        owner: Engineer
        inputs:
          - string: topic
        allowedWritePaths: ["notes/**"]
        steps:
          - file-write: "notes/{{ topic }}.md"
            content: hello
    """,
    )
    result = project.run("note", topic="a\nb\x1b[2J")
    assert result.exit_code == 2, result.output
    assert "cannot write 'notes/a\\x0ab\\x1b[2J.md': the path holds a control character" in result.output
    assert "\x1b" not in result.output
    assert not (project.root / "notes").exists()


def test_check_reports_writes_into_git_without_a_grant_naming_it(project):
    project.playbook(
        "hooks",
        """
        name: hooks
        description: writes a git hook
        owner: Engineer
        allowedWritePaths: ["**"]
        steps:
          - file-write: .git/hooks/pre-commit
            content: "#!/bin/sh\\n"
    """,
    )
    result = project.cli("check", "--format", "json")
    found = [d for d in json.loads(result.output)["diagnostics"] if d["code"] == "C813"]
    assert len(found) == 1 and ".git directory" in found[0]["message"], result.output


def test_check_reports_a_child_writing_into_git_for_a_caller_whose_grants_do_not_name_it(project):
    project.playbook(
        "install-hooks",
        """
        name: install-hooks
        description: writes git hooks
        owner: Engineer
        allowedWritePaths: [".git/hooks/**"]
        steps:
          - file-write: .git/hooks/pre-commit
            content: "#!/bin/sh\\n"
    """,
    )
    for name, grants, expected in [("careless", '["**"]', 1), ("careful", '["**", ".git/hooks/**"]', 0)]:
        project.playbook(
            name,
            f"""
            name: {name}
            description: calls install-hooks
            owner: Engineer
            allowedWritePaths: {grants}
            steps:
              - playbook: install-hooks
                inheritPermissions: true
        """,
        )
    result = project.cli("check", "--format", "json")
    found = [d for d in json.loads(result.output)["diagnostics"] if d["code"] == "C816"]
    assert [d["span"]["file"] for d in found] == ["playbooks/careless.yaml"], result.output
    assert ".git directory" in found[0]["message"]


def test_the_scratch_space_itself_can_be_listed_and_read_from_but_never_written(root):
    gate = gateway(root)
    gate.write_file("temp://notes/a.txt", b"a")
    whole = gate.source("temp://")
    assert gate.list_files(whole) == ["notes/a.txt"]
    assert refused(gate.write_file, "temp://", b"x").code == "PermissionDenied"


def test_a_grant_of_a_folder_stops_at_its_name_at_run_time(project):
    project.playbook(
        "notes",
        """
        name: notes
        description: writes notes in a folder given at run time
        owner: Engineer
        allowedWritePaths: ["docs/**"]
        inputs:
          - string: folder
        steps:
          - file-write: "{{folder}}/notes.md"
            content: notes
    """,
    )
    refused = project.run("notes", "--mode", "autonomous", folder="docs-old")
    assert refused.exit_code == 2 and "PermissionDenied" in refused.output, refused.output
    assert not (project.root / "docs-old").exists()
    granted = project.run("notes", "--mode", "autonomous", folder="docs")
    assert granted.exit_code == 0, granted.output
    assert project.read("docs/notes.md") == "notes"


def test_a_walk_resolves_its_base_only_for_an_absolute_link_and_writes_a_script_whole(tmp_path, monkeypatch):
    # A step's script and nearly every write meet no absolute link: their walk resolves no
    # real path (a stat per name of the base's path, twice a program step before); a link
    # to an absolute path is still judged against where the base really is.
    from catalyst_dsl.runtime.effects import beneath

    base = tmp_path / "project"
    base.mkdir()
    resolved = []
    real = os.path.realpath
    monkeypatch.setattr(beneath.os.path, "realpath", lambda path, *a, **k: resolved.append(path) or real(path, *a, **k))
    with beneath.fresh(base, "scratch/bash/s.sh", b"echo hi\n" * 10_000):
        assert (base / "scratch" / "bash" / "s.sh").read_bytes() == b"echo hi\n" * 10_000
    assert not (base / "scratch" / "bash" / "s.sh").exists()
    assert resolved == []
    (base / "inside").mkdir()
    (base / "in").symlink_to(base / "inside")
    (base / "out").symlink_to(tmp_path)
    assert beneath.resolve(base, "in/file") == "inside/file"
    assert resolved == [base]
    with pytest.raises(beneath.Escape):
        beneath.resolve(base, "out/file")
