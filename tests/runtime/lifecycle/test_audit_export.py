"""`catalyst runs export --full`: the audit view with each step's result and the diff of
each commit the run made, masked like the run's output."""

from __future__ import annotations

import json

from tests.runtime.lifecycle.test_branch_protection import git, repo  # noqa: F401 (the fixture)

SHIP = """
name: ship
description: writes a spec with a token in it on its own branch, and commits it
owner: Engineer
allowedWritePaths: [out/**]
inputs:
  - string: token
    secret: true
    required: true
steps:
  - git-branch: feature/spec
  - name: write
    file-write: out/spec.md
    content: "the spec, key {{token}}\\n"
  - name: commit
    git-commit: add the spec
    files: [out/**]
    push: false
"""


def exported(project, *args: str) -> dict:
    [run_id] = project.listed()
    result = project.cli("runs", "export", run_id, *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_full_export_has_results_and_each_commits_diff_masked(repo, monkeypatch):  # noqa: F811
    repo.playbook("ship", SHIP)
    monkeypatch.setenv("CATALYST_SECRET_TOKEN", "k3y-0f-the-run")
    assert repo.run("ship").exit_code == 0
    full = exported(repo, "--full")
    results = {step["name"]: step["result"] for step in full["steps"] if step["name"]}
    assert results["write"] == {"bytesWritten": len("the spec, key k3y-0f-the-run\n"), "path": "out/spec.md"}
    [commit] = full["commits"]
    assert commit["sha"] == results["commit"]["sha"] == git(repo.root, "rev-parse", "feature/spec").strip()
    assert commit["files"] == ["out/spec.md"] and commit["name"] == "commit"
    assert "+++ b/out/spec.md" in commit["diff"] and "+the spec, key ***" in commit["diff"]
    assert "k3y-0f-the-run" not in json.dumps(full)


def test_the_plain_export_keeps_no_results(repo, monkeypatch):  # noqa: F811
    repo.playbook("ship", SHIP)
    monkeypatch.setenv("CATALYST_SECRET_TOKEN", "k3y-0f-the-run")
    assert repo.run("ship").exit_code == 0
    plain = exported(repo)
    assert "commits" not in plain and all("result" not in step for step in plain["steps"])


def test_a_commit_this_checkout_lacks_is_listed_with_why(repo, monkeypatch):  # noqa: F811
    repo.playbook("ship", SHIP)
    monkeypatch.setenv("CATALYST_SECRET_TOKEN", "k3y-0f-the-run")
    assert repo.run("ship").exit_code == 0
    git(repo.root, "switch", "-q", "main")
    git(repo.root, "branch", "-q", "-D", "feature/spec")
    git(repo.root, "reflog", "expire", "--expire=now", "--all")
    git(repo.root, "gc", "-q", "--prune=now")
    [commit] = exported(repo, "--full")["commits"]
    assert commit["diff"] is None and "does not have the commit" in commit["missing"]


def _checkout_with_a_trap(tmp_path, monkeypatch):
    """A repository whose own settings would run `trap.sh` (it leaves a mark), and the
    mark's path. Commits are made with plumbing, so no global setting is involved."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root, mark = tmp_path / "checkout", tmp_path / "ran"
    root.mkdir()
    trap = tmp_path / "trap.sh"
    trap.write_text(f"#!/bin/sh\necho ran >> '{mark}'\nexit 1\n", encoding="utf-8")
    trap.chmod(0o755)
    git(root, "init", "-q", "-b", "main")
    return root, mark, str(trap)


def _commit(root, tree: str, headers: str = "") -> str:
    import subprocess

    body = f"tree {tree}\nauthor a <a@example.com> 1700000000 +0000\ncommitter a <a@example.com> 1700000000 +0000\n"
    done = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=root,
        input=body + headers + "\nchange\n",
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_a_signed_commit_does_not_run_the_checkouts_gpg_program(tmp_path, monkeypatch):
    from catalyst_dsl.runtime.lifecycle.audit import commits

    root, mark, trap = _checkout_with_a_trap(tmp_path, monkeypatch)
    (root / "f.txt").write_text("hello\n", encoding="utf-8")
    git(root, "add", "f.txt")
    tree = git(root, "write-tree").strip()
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n"
    sha = _commit(root, tree, signature)
    git(root, "config", "log.showSignature", "true")
    git(root, "config", "gpg.program", trap)
    [change] = commits(root, [{"action": "git-commit", "result": {"sha": sha}}], lambda text: text)
    assert "+hello" in change["diff"] and not mark.exists()


def test_a_missing_object_is_not_fetched_through_the_checkouts_upload_pack(tmp_path, monkeypatch):
    from catalyst_dsl.runtime.lifecycle.audit import commits

    root, mark, trap = _checkout_with_a_trap(tmp_path, monkeypatch)
    listing = "100644 blob 1111111111111111111111111111111111111111\tf.txt\n"
    tree = git_input(root, listing, "mktree", "--missing")
    sha = _commit(root, tree)
    for key, value in [
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", str(tmp_path)),
        ("remote.origin.promisor", "true"),
        ("remote.origin.uploadpack", trap),
        ("protocol.file.allow", "always"),
    ]:
        git(root, "config", key, value)
    [change] = commits(root, [{"action": "git-commit", "result": {"sha": sha}}], lambda text: text)
    assert change["diff"] is None and not mark.exists()


def test_a_cut_diff_never_shows_part_of_a_secret(tmp_path, monkeypatch):
    from catalyst_dsl.runtime.lifecycle import audit

    root, _, _ = _checkout_with_a_trap(tmp_path, monkeypatch)
    secret = "k3y-0f-the-run-that-is-long"
    (root / "f.txt").write_text(secret + "\n", encoding="utf-8")
    git(root, "add", "f.txt")
    sha = _commit(root, git(root, "write-tree").strip())
    whole = git(root, "show", "--format=", "--patch", sha)
    monkeypatch.setattr(audit, "MAX_DIFF_BYTES", whole.index(secret) + 6)  # the cut goes through it
    [change] = audit.commits(
        root, [{"action": "git-commit", "result": {"sha": sha}}], lambda text: text.replace(secret, "***")
    )
    assert change["truncated"] and secret[:6] not in change["diff"]


def git_input(cwd, text: str, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", *args], cwd=cwd, input=text, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_a_diff_is_left_out_while_a_secret_of_the_run_is_unknown_here(repo, monkeypatch):  # noqa: F811
    # The secret was given with -i: the export cannot recognise it, so a diff holding it
    # would show it whole.
    repo.playbook("ship", SHIP)
    assert repo.run("ship", token="k3y-0f-the-run").exit_code == 0
    full = exported(repo, "--full")
    [commit] = full["commits"]
    assert "k3y-0f-the-run" not in json.dumps(full)
    assert commit["diff"] is None and "CATALYST_SECRET_TOKEN" in commit["missing"]
