"""The table that says which module implements each built-in action (runtime/actions):
the modules are imported when a step first uses one of their actions, so the table must
name every action each module has, and every built-in action that is not the
interpreter's own."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.runtime.actions import IMPLEMENTATIONS, MODULES

ROOT = Path(__file__).parents[3]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_implements_the_actions_the_table_gives_it(module):
    actions = importlib.import_module(f"catalyst_dsl.runtime.actions.{module}").ACTIONS
    assert sorted(actions) == sorted(MODULES[module])


def test_every_built_in_action_that_acts_has_a_module():
    own = {spec.name for spec in builtin_catalog().specs() if spec.group == "control"} | {"checkpoint"}
    acting = {spec.name for spec in builtin_catalog().specs()} - own
    listed = [action for actions in MODULES.values() for action in actions]
    assert sorted(listed) == sorted(acting)  # each once, and none the catalog does not declare


def test_an_action_module_is_imported_by_its_first_use_only():
    probe = (
        "import json, sys\n"
        "from catalyst_dsl.runtime.actions import IMPLEMENTATIONS\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('catalyst_dsl.runtime.actions.'))\n"
        "before = loaded()\n"
        "run = IMPLEMENTATIONS.get('git-commit')\n"
        "print(json.dumps([before, loaded(), run.__module__, "
        "IMPLEMENTATIONS.get('no-such-action'), 'file-read' in IMPLEMENTATIONS]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    before, after, module, unknown, listed = json.loads(done.stdout)
    assert before == []
    assert after == ["catalyst_dsl.runtime.actions.context", "catalyst_dsl.runtime.actions.git"]
    assert (module, unknown, listed) == ("catalyst_dsl.runtime.actions.git", None, True)


def test_a_stand_in_put_in_the_table_is_kept_when_its_module_loads(monkeypatch):
    def stand_in(ctx, config):
        return "stand-in"

    monkeypatch.setitem(IMPLEMENTATIONS, "json-write", stand_in)
    assert IMPLEMENTATIONS["file-read"].__module__ == "catalyst_dsl.runtime.actions.files"  # loads files.py
    assert IMPLEMENTATIONS.get("json-write") is stand_in
