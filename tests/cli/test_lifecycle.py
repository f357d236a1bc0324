"""The commands of runs already started (catalyst_dsl/cli/lifecycle.py): what they print."""

from __future__ import annotations

QUICK = """
    name: quick
    description: one step
    owner: Engineer
    steps:
      - log-info: hi
"""


def test_prune_names_the_runs_it_would_remove_and_then_removes_them(project):
    project.playbook("quick", QUICK)
    for _ in range(3):
        assert project.run("quick").exit_code == 0
    oldest_first = sorted(p.name.removeprefix("run-").removesuffix(".json") for p in project.archived_snapshots())
    doomed = oldest_first[:2]

    dry = project.cli("runs", "prune", "--keep-last", "1", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.output.splitlines() == [*sorted(doomed, reverse=True), "would remove 2 archived runs"]
    assert len(project.archived_snapshots()) == 3

    done = project.cli("runs", "prune", "--keep-last", "1")
    assert done.exit_code == 0, done.output
    assert done.output.splitlines() == [*sorted(doomed, reverse=True), "removed 2 archived runs"]
    assert len(project.archived_snapshots()) == 1


def test_prune_with_nothing_to_remove_says_so(project):
    project.playbook("quick", QUICK)
    assert project.run("quick").exit_code == 0
    kept = project.cli("runs", "prune", "--keep-last", "5", "--dry-run")
    assert kept.output.splitlines() == ["would remove 0 archived runs"]
