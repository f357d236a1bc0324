"""The generated reference pages match their sources; `--update-golden` rewrites them."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.report.reference import actions_page, diagnostics_page, examples_json

ROOT = Path(__file__).parents[1]
GOLDEN = [ROOT / "tests" / "golden" / "check", ROOT / "tests" / "golden" / "library"]

PAGES = {
    "actions.md": lambda: actions_page(builtin_catalog()),
    "diagnostics.md": lambda: diagnostics_page(GOLDEN),
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_reference_page_is_current(page: str, update_golden: bool) -> None:
    path = ROOT / "docs" / page
    actual = PAGES[page]()
    if update_golden:
        path.write_text(actual, encoding="utf-8", newline="\n")
    assert path.exists(), f"docs/{page} is missing: run pytest --update-golden"
    assert actual == path.read_text(encoding="utf-8"), (
        f"docs/{page} is stale: run pytest --update-golden and review the diff"
    )


def test_the_packaged_examples_are_current(update_golden: bool) -> None:
    """`catalyst explain` shows the same examples as docs/diagnostics.md, from the package."""
    path = ROOT / "catalyst_dsl" / "diagnostics" / "examples.json"
    actual = examples_json(GOLDEN)
    if update_golden:
        path.write_text(actual, encoding="utf-8", newline="\n")
    assert actual == path.read_text(encoding="utf-8"), (
        "catalyst_dsl/diagnostics/examples.json is stale: run pytest --update-golden"
    )


def test_every_code_has_an_example() -> None:
    assert "No example yet." not in diagnostics_page(GOLDEN)


def test_every_setting_is_in_the_configuration_page() -> None:
    from catalyst_dsl.project.config import SETTINGS

    table = [
        line
        for line in (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `")
    ]
    documented = [line.split("`")[1] for line in table]
    assert sorted(documented) == sorted(SETTINGS)


def test_every_step_key_is_described() -> None:
    from catalyst_dsl.actions.catalog import RESERVED_STEP_KEYS
    from catalyst_dsl.report.reference import STEP_KEYS

    assert [key for key in RESERVED_STEP_KEYS if not STEP_KEYS.get(key)] == []
