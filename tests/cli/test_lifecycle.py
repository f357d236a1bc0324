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


def test_runs_show_draws_the_timeline_of_the_steps(project):
    project.playbook(
        "quick",
        QUICK.replace("      - log-info: hi", "      - log-info: hi\n      - name: two\n        log-info: there"),
    )
    assert project.run("quick").exit_code == 0
    shown = project.cli("runs", "show", project.run_id())
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  timeline ("))
    rows = lines[at + 1 :]
    assert [row.strip().split("  ")[0] for row in rows] == ["✓ log-info@5 (log-info)", "✓ two (log-info)"]
    assert all(row.count("|") == 2 and "█" in row and ", " in row.split("|")[2] for row in rows)


FAILS_IN_A_LOOP = """
    name: loopfail
    description: fails in a loop, with the message it is given
    owner: Engineer
    inputs:
      - string: why
    steps:
      - for-each: item
        in: [a]
        steps:
          - name: boom
            throw: Boom
            message: "{{ why }}"
"""


def test_runs_show_writes_each_failure_on_one_line_with_its_controls_escaped(project):
    import json

    from click.testing import CliRunner

    from catalyst_dsl.cli.main import cli

    project.playbook("loopfail", FAILS_IN_A_LOOP)
    assert project.run("loopfail", why="line1\nerror: forged\x1b[2J").exit_code == 2
    run_id = project.run_id()
    [path] = project.snapshot_files()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["failures"][0]["label"] == "boom [iteration 1]"
    # A snapshot edited by hand is shown (with a warning) before it is trusted: its label is data too.
    data["failures"][0]["label"] = "boom\x1b]0;owned\x07\nerror: forged label"
    path.write_text(json.dumps(data), encoding="utf-8")

    shown = CliRunner().invoke(cli, ["runs", "show", run_id], color=True)  # as on a terminal
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.output and "\x07" not in shown.output
    assert not any(line.startswith("error: forged") for line in shown.output.splitlines()), shown.output
    assert "  failure   boom\\x1b]0;owned\\x07\\x0aerror: forged label: Boom: line1\\x0aerror: forged" in shown.output
