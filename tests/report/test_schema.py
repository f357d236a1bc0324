"""The JSON Schema of playbooks: generated from the catalog, shipped current, accepting what
the checker accepts and rejecting unknown actions and keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.compiler import compile_path
from catalyst_dsl.report.schema import schema_text
from tests.helpers.corpus import SHARED_CORPUS

ROOT = Path(__file__).parents[2]
SHIPPED = ROOT / "catalyst_dsl" / "schema" / "playbook.schema.json"
CORPUS = SHARED_CORPUS
HEAD = "name: p\ndescription: d\nowner: Engineer\n"


def validator() -> Draft202012Validator:
    schema = json.loads(SHIPPED.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_the_shipped_schema_is_generated_from_the_catalog(update_golden: bool) -> None:
    actual = schema_text(builtin_catalog())
    if update_golden:
        SHIPPED.write_text(actual, encoding="utf-8", newline="\n")
    assert actual == SHIPPED.read_text(encoding="utf-8"), "the shipped schema is stale: run pytest --update-golden"


def _accepted_playbooks() -> list[Path]:
    files = [
        *sorted((ROOT / "playbooks").glob("*.yaml")),
        *sorted((ROOT / "tests" / "golden" / "check").glob("*.yaml")),
    ]
    if CORPUS.is_dir():
        files += sorted(CORPUS.glob("catalyst/**/*.yaml"))
    # Native YAML playbooks only: kai and cleo files have their own shapes.
    compiled = {f: compile_path(str(f)) for f in files}
    return [
        f
        for f, c in compiled.items()
        if not c.has_errors and c.playbook is not None and c.playbook.dialect == "catalyst-yaml"
    ]


def test_every_playbook_the_checker_accepts_is_valid() -> None:
    check = validator()
    accepted = _accepted_playbooks()
    assert len(accepted) >= 15
    for path in accepted:
        errors = list(check.iter_errors(yaml.safe_load(path.read_text(encoding="utf-8"))))
        assert not errors, f"{path}: {errors[0].message[:300]}"


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "steps:\n  - http-gett: https://example.com\n",  # an unknown action
        HEAD + "steps:\n  - http-get: https://example.com\n    headerz: {}\n",  # an unknown key in a step
        HEAD + "stepz: []\nsteps:\n  - display: hi\n",  # an unknown top-level key
        HEAD + "steps:\n  - display: hi\n    bash: echo\n",  # two actions in one step
        HEAD + "steps:\n  - if: ${{ true }}\n    then:\n      - dispaly: nested\n",  # an unknown action nested
    ],
    ids=["unknown-action", "unknown-step-key", "unknown-top-level-key", "two-actions", "nested-unknown-action"],
)
def test_the_schema_rejects_what_the_checker_rejects(text: str) -> None:
    from catalyst_dsl.compiler import compile_bytes

    assert list(validator().iter_errors(yaml.safe_load(text)))
    assert compile_bytes(text.encode(), "p.yaml").has_errors  # the checker rejects each of them too


def test_a_playbook_that_defines_a_function_may_call_it() -> None:
    text = HEAD + "steps:\n  - function: greet\n    steps:\n      - display: hi\n  - greet: {}\n"
    assert not list(validator().iter_errors(yaml.safe_load(text)))


def test_catalyst_schema_prints_the_shipped_schema() -> None:
    from click.testing import CliRunner

    from catalyst_dsl.cli.main import cli

    result = CliRunner().invoke(cli, ["schema"])
    assert result.exit_code == 0 and result.output == SHIPPED.read_text(encoding="utf-8")
