"""The dialect registry: files are routed to a dialect by folder, suffix and content, and
directory scans enter a dialect's hidden folder but take only its playbooks."""

from __future__ import annotations

import sys
import types

import pytest

from catalyst_dsl.compiler import compile_path, discover
from catalyst_dsl.dialects import registry
from catalyst_dsl.ir import nodes as ir


def _reader() -> types.ModuleType:
    """A dialect that lowers any mapping to an empty playbook named by its `title` and says
    which route brought the file; it claims by content a root with a `toy` key."""
    module = types.ModuleType("toy_dialect")

    def compile_document(source, root, sink, catalog):
        title = next((v.value for k, v in root.pairs if k.value == "title"), "untitled")
        return ir.Playbook(title, "", None, "toy", unrunnable=("toys do not run",))

    def sniff(root, sink):
        return any(k.value == "toy" for k, _ in getattr(root, "pairs", []))

    module.compile_document = compile_document
    module.sniff = sniff
    return module


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(sys.modules, "toy_dialect", _reader())
    dialect = registry.Dialect(
        "toy",
        "toy_dialect",
        suffixes=(".toy",),
        folders=((".toys", "books"),),
        not_playbooks=("template.yaml",),
        sniffs=True,
    )
    monkeypatch.setattr(registry, "DIALECTS", (dialect,))
    return dialect


def test_routes_by_folder_suffix_and_content(toy, tmp_path):
    (tmp_path / ".toys" / "books").mkdir(parents=True)
    (tmp_path / ".toys" / "books" / "one.yaml").write_text("title: by-folder\n")
    (tmp_path / "two.toy").write_text("title: by-suffix\n")
    (tmp_path / "three.yaml").write_text("toy: true\ntitle: by-content\n")
    (tmp_path / "native.yaml").write_text("name: native\ndescription: d\nsteps:\n  - log: hi\n")
    names = {p.name: compile_path(str(p)).playbook for p in tmp_path.rglob("*") if p.is_file()}
    assert (names["one.yaml"].name, names["one.yaml"].dialect) == ("by-folder", "toy")
    assert names["two.toy"].name == "by-suffix"
    assert names["three.yaml"].name == "by-content"
    assert names["native.yaml"].dialect == "catalyst-yaml"


def test_scans_take_only_the_dialects_playbooks_from_hidden_folders(toy, tmp_path):
    books = tmp_path / ".toys" / "books"
    (books / "deeper").mkdir(parents=True)
    for path in (
        books / "one.yaml",
        books / "template.yaml",
        books / "deeper" / "no.yaml",
        tmp_path / ".toys" / "sessions.yaml",
        tmp_path / ".other" / "x.yaml",
        tmp_path / "two.toy",
        tmp_path / "plain.yaml",
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("title: t\n")
    found = sorted(str(p.relative_to(tmp_path)) for p in map(__import__("pathlib").Path, discover([str(tmp_path)])))
    assert found == [".toys/books/one.yaml", "plain.yaml", "two.toy"]


def test_without_foreign_dialects_hidden_folders_are_skipped(tmp_path):
    (tmp_path / ".toys" / "books").mkdir(parents=True)
    (tmp_path / ".toys" / "books" / "one.yaml").write_text("title: t\n")
    (tmp_path / ".xe").mkdir()
    (tmp_path / ".xe" / "kept.yaml").write_text("title: t\n")
    assert [p.replace(str(tmp_path), "") for p in discover([str(tmp_path)])] == ["/.xe/kept.yaml"]


def test_a_run_refuses_a_playbook_its_dialect_cannot_run_yet(toy, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from catalyst_dsl.cli.main import cli

    (tmp_path / "catalyst.toml").write_text("")
    (tmp_path / "play.toy").write_text("title: play\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["run", "play.toy"])
    assert result.exit_code == 1, result.output
    assert "toy playbook this version can check but not run: toys do not run" in result.output
