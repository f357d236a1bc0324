"""A playbook of many unknown names is checked in linear time: only the first
SUGGESTED_NAMES of them get a "did you mean" (each compares the name with every name in
scope), and the language server's hover, which drops the findings, works out none."""

from __future__ import annotations

import catalyst_dsl.checks.references.values as values
from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.compiler import compile_bytes
from catalyst_dsl.diagnostics.ids import UNDEFINED_REFERENCE
from catalyst_dsl.lsp.knowledge import known_types


def _playbook(unknown: int) -> bytes:
    steps = "".join(f"  - var: v{i}\n    value: \"{{{{u{i}x}}}}\"\n" for i in range(unknown))
    return f"name: many\ndescription: d\nowner: Engineer\nsteps:\n{steps}".encode()


def _counting(monkeypatch) -> list[str]:
    asked: list[str] = []
    real = values.suggest
    monkeypatch.setattr(values, "suggest", lambda word, known, **kw: asked.append(word) or real(word, known, **kw))
    return asked


def test_only_the_first_unknown_names_get_a_did_you_mean(monkeypatch):
    asked = _counting(monkeypatch)
    compiled = compile_bytes(_playbook(200), "many.yaml", builtin_catalog())
    undefined = [d for d in compiled.diagnostics if d.code == UNDEFINED_REFERENCE]
    assert len(undefined) == 200  # every one is still reported
    assert len(asked) == values.SUGGESTED_NAMES
    assert all(d.help for d in undefined)  # the rest with the plain help


def test_a_misspelt_name_still_gets_its_did_you_mean():
    text = (
        b"name: one\ndescription: d\nowner: Engineer\nsteps:\n"
        b"  - var: count\n    value: 1\n  - var: n\n    value: '{{ cuont }}'\n"
    )
    compiled = compile_bytes(text, "one.yaml", builtin_catalog())
    [finding] = [d for d in compiled.diagnostics if d.code == UNDEFINED_REFERENCE]
    assert finding.help == "did you mean 'count'?"


def test_hover_works_out_no_suggestion(monkeypatch):
    compiled = compile_bytes(_playbook(50), "many.yaml", builtin_catalog())
    asked = _counting(monkeypatch)
    known_types(compiled.playbook)
    assert asked == []
