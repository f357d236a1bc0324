"""Shell completion through click's own machinery: the _CATALYST_COMPLETE protocol a shell
script speaks, answered by the real command line in a real project."""

from __future__ import annotations

import json

from click.testing import CliRunner

from catalyst_dsl.cli.main import cli
from tests.helpers.run_helpers import REVIEWED

GREET = """
    name: greet
    description: says hello
    owner: Engineer
    inputs:
      - string: who
      - number: times
        default: 1
    steps:
      - display: "hello {{who}}"
"""


def complete(line: str) -> list[tuple[str, str]]:
    """What bash completion offers for `line` (the last word is the one being completed)."""
    words = line.split(" ")
    env = {"_CATALYST_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    result = CliRunner().invoke(cli, [], env=env, prog_name="catalyst", catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [tuple(item.split(",", 1)) for item in result.output.splitlines() if item]


def values(line: str) -> list[str]:
    return [value for _kind, value in complete(line)]


def test_playbook_names(project) -> None:
    project.playbook("greet", GREET)
    project.playbook("reviewed", REVIEWED)
    assert values("catalyst run ") == ["greet", "reviewed"]
    assert values("catalyst run gr") == ["greet"]
    assert values("catalyst run zzz") == []


def test_input_names_of_the_named_playbook(project) -> None:
    project.playbook("greet", GREET)
    assert values("catalyst run greet -i ") == ["who=", "times="]
    assert values("catalyst run greet -i t") == ["times="]
    # An input already given is not offered again.
    assert values("catalyst run greet -i who=ana -i ") == ["times="]
    # A value is the user's to type.
    assert values("catalyst run greet -i who=") == []
    assert values("catalyst run nothing-like-it -i ") == []


def test_run_ids(project) -> None:
    project.playbook("reviewed", REVIEWED)
    project.playbook("greet", GREET)
    assert project.run("reviewed").exit_code == 4
    paused = project.run_id()
    assert project.run("greet", who="ana").exit_code == 0
    listed = json.loads(project.cli("runs", "list", "--json").stdout)["runs"]
    finished = next(r["runId"] for r in listed if r["status"] == "completed")
    # Live runs for what acts on a run; archived ones too for what reads one.
    assert values("catalyst resume ") == [paused]
    assert values("catalyst approve ") == [paused]
    assert values("catalyst runs export ") == sorted([paused, finished], reverse=True)
    assert values(f"catalyst runs show {finished[:10]}") == [
        i for i in sorted([paused, finished], reverse=True) if i.startswith(finished[:10])
    ]


def test_a_broken_project_completes_nothing(project) -> None:
    project.settings("state-dir = 42\nplaybook-dirs = 'not a list'\n")
    project.write("playbooks/bad.yaml", "name: [unclosed\n")
    assert values("catalyst runs show ") == []
    assert values("catalyst run bad -i ") == []
