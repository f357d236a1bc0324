"""Messages show values as a playbook writes them (JSON), never in Python's spelling."""

from __future__ import annotations

import pytest

from catalyst_dsl.runtime.values.jsvalues import UNDEFINED, as_written


@pytest.mark.parametrize(
    "value, written",
    [(None, "null"), (True, "true"), (False, "false"), ("a", '"a"'), ([1, None], "[1,null]"), (UNDEFINED, "undefined")],
)
def test_a_value_is_written_as_json(value, written):
    assert as_written(value) == written


def test_a_literal_condition_is_told_as_written(project):
    project.playbook(
        "cond",
        """
        name: cond
        description: A step that never runs.
        owner: Engineer
        steps:
          - display: never
            condition: false
        """,
    )
    run = project.run("cond")
    assert "skipped: condition is false" in run.output and "False" not in run.output
