"""The JSON Schema agrees with the checker, file by file: every YAML playbook the checker
accepts (the sample playbooks, the golden cases, the shared corpus) is valid; each mistake
of type or value the schema can express, which the checker reports, the schema rejects
too; and the files of other languages (kai's, cleo's) are not the schema's."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from pathlib import Path

import pathspec
import pytest
from jsonschema import Draft202012Validator

from catalyst_dsl.compiler import compile_bytes, compile_path
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.report.schema import FILE_MATCH
from catalyst_dsl.syntax.source import SourceFile
from catalyst_dsl.syntax.yaml_loader import load_yaml
from catalyst_dsl.syntax.yaml_nodes import to_python
from tests.helpers.corpus import SHARED_CORPUS

ROOT = Path(__file__).parents[2]
SHIPPED = ROOT / "catalyst_dsl" / "schema" / "playbook.schema.json"
HEAD = "name: p\ndescription: d\nowner: Engineer\n"


def _yaml_files() -> list[Path]:
    found = [*(ROOT / "playbooks").rglob("*.y*ml"), *(ROOT / "tests" / "golden").rglob("*.y*ml")]
    if SHARED_CORPUS.is_dir():
        found += SHARED_CORPUS.rglob("*.y*ml")
    return sorted(found)


@functools.lru_cache(maxsize=1)
def accepted() -> tuple[Path, ...]:
    """The files the checker reads as catalyst's YAML and finds no error in."""
    found = []
    for path in _yaml_files():
        compiled = compile_path(str(path))
        playbook = compiled.playbook
        if playbook is not None and playbook.dialect == "catalyst-yaml" and not compiled.has_errors:
            found.append(path)
    return tuple(found)


def validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SHIPPED.read_text(encoding="utf-8")))


def data(text: str) -> object:
    """The document as the checker reads it (YAML 1.2, as editors' YAML servers do)."""
    return to_python(load_yaml(SourceFile("p.yaml", text), DiagnosticSink()))


@pytest.mark.slow
def test_every_playbook_the_checker_accepts_is_valid() -> None:
    where = {p.relative_to(ROOT).parts[0] if p.is_relative_to(ROOT) else "corpus" for p in accepted()}
    assert {"playbooks", "tests"} <= where and len(accepted()) >= 40
    check = validator()
    refused = []
    for path in accepted():
        errors = list(check.iter_errors(data(path.read_text(encoding="utf-8"))))
        if errors:
            refused.append(f"{path.name}: {errors[0].message[:200]} at {errors[0].json_path}")
    assert not refused, "\n".join(refused)


#: Mistakes of type or value that a schema can express: (the step or header, the code the
#: checker reports). Each is also checked the other way: fixed, both accept it.
REJECTED = {
    "number-as-text": ('steps:\n  - parallel:\n      - display: a\n    maxConcurrency: "2"\n', "C302"),
    "number-as-boolean": ("steps:\n  - parallel:\n      - display: a\n    maxConcurrency: true\n", "C302"),
    "boolean-as-text": ('steps:\n  - json-write: x.json\n    value: 1\n    pretty: "yes"\n', "C302"),
    "enum-value": ("steps:\n  - file-list: .\n    relativeTo: nowhere\n", "C303"),
    "duration-text": ('steps:\n  - checkpoint: ok?\n    timeout: "5 minutes"\n', "C302"),
    "step-timeout": ("steps:\n  - display: a\n    timeout: soon\n", "C302"),
    "step-timeout-nan": ("steps:\n  - display: a\n    timeout: nan\n", "C302"),
    # A stray `version:` does not make a native playbook another dialect's file.
    "stray-version": ("version: 1\nsteps:\n  - display: a\n", "C202"),
    "negative-duration": ("steps:\n  - checkpoint: ok?\n    timeout: -5\n", "C302"),
    "approval-policy": ("steps:\n  - checkpoint: ok?\n    policy: robot\n", "C303"),
    "status-as-text": ('steps:\n  - http-get: https://example.com\n    expectedStatus: "abc"\n', "C302"),
    "empty-steps": ("steps: []\n", "C204"),
    "playbook-error-policy": ("errorPolicy: explode\nsteps:\n  - display: a\n", "C303"),
    "step-error-policy": ("steps:\n  - display: a\n    errorPolicy: Boom\n", "C303"),
    "policy-entry-key": ("errorPolicy:\n  action: Stop\n  retries: 2\nsteps:\n  - display: a\n", "C202"),
    "input-type": ("inputs:\n  - name: x\n    type: strng\nsteps:\n  - display: a\n", "C303"),
    "input-without-type": ("inputs:\n  - strin: x\nsteps:\n  - display: a\n", "C203"),
    "two-input-types": ("inputs:\n  - string: x\n    number: y\nsteps:\n  - display: a\n", "C307"),
    "enum-without-values": ("inputs:\n  - enum: size\nsteps:\n  - display: a\n", "C308"),
    "input-transform": ("inputs:\n  - string: x\n    transform: upper\nsteps:\n  - display: a\n", "C303"),
    "input-required-text": ('inputs:\n  - string: x\n    required: "yes"\nsteps:\n  - display: a\n', "C302"),
    "language-version-text": ('catalyst: "1"\nsteps:\n  - display: a\n', "C302"),
    "language-version": ("catalyst: 2\nsteps:\n  - display: a\n", "C207"),
    "number-default": ('inputs:\n  - number: n\n    default: "3"\nsteps:\n  - display: a\n', "C302"),
    "boolean-default": ("inputs:\n  - name: b\n    type: boolean\n    default: 1\nsteps:\n  - display: a\n", "C302"),
    "string-default": ("inputs:\n  - string: s\n    default: [a]\nsteps:\n  - display: a\n", "C302"),
    "array-default": ("inputs:\n  - array: a\n    default: x\nsteps:\n  - display: a\n", "C302"),
    "object-default": ("inputs:\n  - object: o\n    default: []\nsteps:\n  - display: a\n", "C302"),
}
#: The same places written as the checker accepts them.
FIXED = {
    "number-as-text": 'steps:\n  - parallel:\n      - display: a\n    maxConcurrency: "${{ 1 + 1 }}"\n',
    "enum-value": "steps:\n  - file-list: .\n    relativeTo: cwd\n",
    "duration-text": "steps:\n  - checkpoint: ok?\n    timeout: 5m\n",
    "step-timeout": "steps:\n  - display: a\n    timeout: 1.5h\n",
    "approval-policy": "steps:\n  - checkpoint: ok?\n    policy: human\n",
    "status-as-text": "steps:\n  - http-get: https://example.com\n    expectedStatus: [200, 204]\n",
    "playbook-error-policy": "errorPolicy: continue\nsteps:\n  - display: a\n",
    "step-error-policy": "steps:\n  - display: a\n    errorPolicy: {default: {action: Continue, retryCount: 2}}\n",
    "input-type": "inputs:\n  - name: x\n    type: string\nsteps:\n  - display: a\n",
    "enum-without-values": "inputs:\n  - enum: size\n    allowed: [s, m]\nsteps:\n  - display: a\n",
    "input-transform": "inputs:\n  - string: x\n    transform: kebab-case\nsteps:\n  - display: a\n",
    "language-version": "catalyst: 1\nsteps:\n  - display: a\n",
    "number-default": "inputs:\n  - number: n\n    default: 3\nsteps:\n  - display: a\n",
    "boolean-default": "inputs:\n  - name: b\n    type: boolean\n    default: false\nsteps:\n  - display: a\n",
    "string-default": "inputs:\n  - string: s\n    default: 3\nsteps:\n  - display: a\n",
    "array-default": "inputs:\n  - array: a\n    default: [x, {y: 1}]\nsteps:\n  - display: a\n",
    "object-default": (
        'inputs:\n  - object: o\n    default: {a: [1]}\n  - object: p\n    default: "{{ inputs.o }}"\n'
        "steps:\n  - display: a\n"
    ),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_the_schema_rejects_what_the_checker_rejects(case: str) -> None:
    body, code = REJECTED[case]
    text = HEAD + body
    reported = {d.code for d in compile_bytes(text.encode(), "p.yaml").diagnostics if d.severity.value == "error"}
    assert reported == {code}
    assert list(validator().iter_errors(data(text))), f"the schema accepts {case}"


@pytest.mark.parametrize("case", sorted(FIXED))
def test_fixed_both_accept_it(case: str) -> None:
    text = HEAD + FIXED[case]
    assert not compile_bytes(text.encode(), "p.yaml").has_errors
    assert not list(validator().iter_errors(data(text)))


#: Files the checker accepts whose values a stricter schema had refused: scalars it reads as
#: text, and a file of another dialect that it reads as that dialect wherever it is.
ACCEPTED_TOO = {
    "description-number": "name: p\ndescription: 5\nowner: me\nsteps:\n  - display: a\n",
    "description-boolean": "name: p\ndescription: true\nowner: me\nsteps:\n  - display: a\n",
    "owner-number": "name: p\ndescription: d\nowner: 5\nsteps:\n  - display: a\n",
    "catch-code-number": HEAD + "steps:\n  - display: a\ncatch:\n  - code: 5\n    steps:\n      - display: c\n",
    "cleo-in-playbooks": 'version: "1.0"\nname: triage\ndescription: x\nnodes:\n  - id: a\n    type: agentic\n'
    "    skill: s\n",
}


@pytest.mark.parametrize("case", sorted(ACCEPTED_TOO))
def test_both_accept_it(case: str) -> None:
    text = ACCEPTED_TOO[case]
    assert not compile_bytes(text.encode(), "playbooks/p.yaml").has_errors
    assert not list(validator().iter_errors(data(text)))


#: Where files are in a project, and whether the schema is for them.
PLACES = {
    "playbooks/deploy.yaml": True,
    "playbooks/ops/deploy.yml": True,
    ".xe/playbooks/deploy.yaml": True,
    ".playbooks/playbooks/auto-feature.yaml": False,  # kai
    ".playbooks/playbooks/playbook.tpl.yaml": False,
    ".cleo/playbooks/release.cantbook": False,  # cleo
    "flows/release.cantbook": False,
    "docs/guide.md": False,
    ".github/workflows/ci.yml": False,
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_the_schema_is_matched_to_catalysts_yaml_playbooks_only(place: str) -> None:
    matched = pathspec.GitIgnoreSpec.from_lines(["/" + glob for glob in FILE_MATCH]).match_file(place)
    assert matched is PLACES[place]


@pytest.mark.slow
def test_check_jsonschema_validates_every_accepted_file(tmp_path: Path) -> None:
    """The same with check-jsonschema, a validator editors' users run from the command line."""
    program = shutil.which("check-jsonschema")
    if program is None:
        pytest.skip("check-jsonschema is not installed (pip install check-jsonschema)")
    done = subprocess.run(
        [program, "--schemafile", str(SHIPPED), *map(str, accepted())], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rejected = tmp_path / "rejected.yaml"
    rejected.write_text(HEAD + REJECTED["enum-value"][0])
    refused = subprocess.run([program, "--schemafile", str(SHIPPED), str(rejected)], capture_output=True, text=True)
    assert refused.returncode == 1 and "relativeTo" in refused.stdout + refused.stderr
