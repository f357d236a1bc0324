"""The check cache: warm checks find exactly what cold ones do; entries that are damaged,
foreign or forged are ignored and recomputed; nothing is written outside the project's
cache folder and the user's cache directory."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.actions.catalog import Catalog
from catalyst_dsl.actions.installed import builtin_catalog
from catalyst_dsl.cli.main import cli
from catalyst_dsl.compiler import discover
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl.project.check import check_project
from catalyst_dsl.project.cache.facts import _text_form
from catalyst_dsl.project.cache.keys import cache_key, user_cache_dir
from catalyst_dsl.project.cache.store import MAGIC, CheckCache
from catalyst_dsl.project.config import load_project
from catalyst_dsl._internal.records import replace
from catalyst_dsl.diagnostics.text import render_text
from catalyst_dsl.report.diagnostics import render_json

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from library_graph import playbook as generated_playbook  # noqa: E402

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "catalyst"
CORPUS_SETTINGS = (
    'playbook-dirs = ["playbooks", "cli-commands", "fixtures"]\n\n'
    '[aliases]\n"node_modules/@xerilium/catalyst/playbooks/" = "playbooks/"\n'
)

BROKEN = """\
name: broken
description: writes where it may not and calls what is not there
owner: Engineer
allowedWritePaths:
  - "out/**"
steps:
  - file-write: "elsewhere/x.md"
    content: "hi"
  - playbook: flow-99
  - playbook: flow-1
  - bash: echo hi
  - display: "${{ nope }}"
"""


def library(root: Path, count: int = 12) -> Path:
    """A generated library whose playbooks call each other, plus one with findings of every layer."""
    (root / "playbooks").mkdir(parents=True)
    (root / "catalyst.toml").write_text("", encoding="utf-8")
    for i in range(count):
        (root / "playbooks" / f"flow-{i}.yaml").write_text(generated_playbook(i, count, 8), encoding="utf-8")
    (root / "playbooks" / "broken.yaml").write_text(BROKEN, encoding="utf-8")
    return root


def check(root: Path, cache: CheckCache | None):
    project = load_project(root, DiagnosticSink())
    files = discover([str(root / d) for d in project.config.playbook_dirs if (root / d).is_dir()])
    result = check_project(project, files, cache=cache)
    text = render_text(result.diagnostics, result.sources, relative_to=str(root))
    return text + render_json(result.diagnostics, files, relative_to=str(root)), len(files)


def new_cache(root: Path, fingerprint: str | None = None) -> CheckCache:
    return CheckCache(root / ".xe" / "cache", cache_key(), fingerprint)


def entries(root: Path) -> list[Path]:
    return sorted(p for p in (root / ".xe" / "cache").rglob("*") if p.is_file() and p.name != ".gitignore")


def test_a_warm_check_finds_exactly_what_a_cold_one_does(tmp_path: Path) -> None:
    root = library(tmp_path / "project")
    plain, count = check(root, None)
    cold = new_cache(root)
    assert check(root, cold)[0] == plain
    assert (cold.hits, cold.misses) == (0, count)
    warm = new_cache(root)
    assert check(root, warm)[0] == plain
    assert (warm.hits, warm.misses) == (count, 0)
    for code in ("C813", "C804", "C815", "C817"):  # per-file and library findings both there
        assert code in plain


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside this checkout")
def test_the_corpus_checks_the_same_warm_and_cold(tmp_path: Path, node_but_no_pwsh: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(CORPUS, root)
    (root / "catalyst.toml").write_text(CORPUS_SETTINGS, encoding="utf-8")
    plain, count = check(root, None)
    assert check(root, new_cache(root))[0] == plain
    warm = new_cache(root)
    assert check(root, warm)[0] == plain
    # Every file that compiles without a size or read problem is served from its entry.
    assert warm.misses == 0 and warm.hits >= count


def test_a_damaged_entry_is_ignored_and_replaced(tmp_path: Path) -> None:
    root = library(tmp_path / "project", 3)
    plain, count = check(root, new_cache(root))
    damaged = entries(root)
    damaged[0].write_bytes(damaged[0].read_bytes()[:-40])  # truncated
    edited = bytearray(damaged[1].read_bytes())
    edited[-20] ^= 1  # one bit of the body: the seal fails
    damaged[1].write_bytes(bytes(edited))
    damaged[2].write_bytes(b"\x00" * 10)
    warm = new_cache(root)
    assert check(root, warm)[0] == plain
    assert warm.misses == 3 and warm.hits == count - 3
    again = new_cache(root)
    check(root, again)
    assert again.misses == 0  # the damaged entries were written anew


def test_an_entry_of_another_version_is_never_read(tmp_path: Path) -> None:
    root = library(tmp_path / "project", 3)
    plain, count = check(root, new_cache(root, fingerprint="catalyst 0.0.1"))
    other = new_cache(root, fingerprint="catalyst 0.0.2")
    assert check(root, other)[0] == plain
    assert other.hits == 0 and other.misses == count


def entry_name(cache, full: str, data: bytes) -> str:
    """An entry's name, worked out here as the cache documents it (BLAKE2b, 32 bytes)."""
    inner = hashlib.blake2b(data, digest_size=32).hexdigest().encode()
    return hashlib.blake2b(
        b"%s\0%s\0%s\0" % (cache._fingerprint.encode(), os.fsencode(full), inner), digest_size=32
    ).hexdigest()


def sealed_with(key: bytes, text: bytes) -> bytes:
    """The seal of an entry's text under `key` (keyed BLAKE2b), worked out here."""
    return hashlib.blake2b(text, key=key, digest_size=32).hexdigest().encode()


def forge(root: Path, victim: str, donor: str, key: bytes) -> None:
    """Put the donor's clean result in the victim's entry, sealed with `key`."""
    cache = new_cache(root)
    name_of = {}
    for path in (victim, donor):
        data = (root / "playbooks" / path).read_bytes()
        full = str(root / "playbooks" / path)
        name_of[path] = entry_name(cache, full, data)
    donor_raw = cache._entry(name_of[donor]).read_bytes()
    head, rest = donor_raw.split(b"\n", 2)[2].split(b"\n", 1)
    head = json.loads(head)
    head[0], head[1] = name_of[victim], str(root / "playbooks" / victim)
    head[3] = _text_form((root / "playbooks" / victim).read_bytes())
    rest = rest.replace(str(root / "playbooks" / donor).encode(), str(root / "playbooks" / victim).encode())
    text = json.dumps(head).encode() + b"\n" + rest
    seal = sealed_with(key, text)
    cache._entry(name_of[victim]).write_bytes(MAGIC + seal + b"\n" + text)


def test_a_forged_entry_cannot_hide_findings(tmp_path: Path) -> None:
    """An entry claiming the broken playbook is clean is ignored unless sealed with the user's key."""
    root = library(tmp_path / "project", 3)
    # Longer than the donor, so that the donor's positions fit in it.
    (root / "playbooks" / "broken.yaml").write_text(BROKEN + "# " + "padding " * 400 + "\n")
    plain, count = check(root, new_cache(root))
    assert "C813" in plain
    forge(root, "broken.yaml", "flow-2.yaml", b"k" * 32)
    warm = new_cache(root)
    assert check(root, warm)[0] == plain
    assert warm.misses == 1
    # The same forgery sealed with the user's key is read: the seal is what kept it out.
    forge(root, "broken.yaml", "flow-2.yaml", cache_key())
    trusted = new_cache(root)
    assert check(root, trusted)[0] != plain and trusted.misses == 0


def respoil(root: Path, file: str, change) -> CheckCache:
    """Check `root` once, then give `change` each object of `file`'s entry (children
    first) to alter in place, seal the result with the user's key, and return a new
    cache to check with."""
    cache = new_cache(root)
    data = (root / "playbooks" / file).read_bytes()
    name = entry_name(cache, str(root / "playbooks" / file), data)
    head, rest = cache._entry(name).read_bytes().split(b"\n", 2)[2].split(b"\n", 1)
    body = json.loads(rest)

    def walk(node):
        if isinstance(node, dict):
            for item in node.values():
                walk(item)
            change(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(body)
    text = head + b"\n" + json.dumps(body).encode()
    cache._entry(name).write_bytes(MAGIC + sealed_with(cache_key(), text) + b"\n" + text)
    return new_cache(root)


@pytest.mark.parametrize(
    "packed, read",
    [
        (0, True),
        (3 << 32 | 9, True),
        (-1, False),
        (5 << 32 | 2, False),
        ("past the end", False),
        (True, False),
        (2.0, False),
        ([0, 2], False),
        ({"o": 0}, True),
        ({"o": -1}, False),
    ],
)
def test_a_span_kept_as_one_number_is_read_only_when_it_is_a_span_of_the_file(tmp_path: Path, packed, read) -> None:
    """Spans of the file are kept as their two offsets in one number (start << 32 | end).
    One that is not a whole number, runs backwards or ends past the text is refused with
    its entry (the file compiled again); any other is a span of the file, and read."""
    root = library(tmp_path / "project", 3)
    plain, _ = check(root, new_cache(root))
    value = (
        len((root / "playbooks" / "broken.yaml").read_text(encoding="utf-8")) + 1
        if packed == "past the end"
        else packed
    )
    spoiled = []

    def spoil(node):
        if node.get("@") == "Lit" and type(node["f"][-1]) is int:
            node["f"][-1] = value  # its span
            spoiled.append(node)

    again = respoil(root, "broken.yaml", spoil)
    assert spoiled
    findings = check(root, again)[0]
    assert again.misses == (0 if read else 1)
    if not read:
        assert findings == plain


@pytest.mark.parametrize("wrong", ["x", 7, None, [0.5, 2], [True, 3], {"@": "Lit", "f": [1, None]}])
def test_a_sealed_entry_holding_the_wrong_types_is_compiled_again(tmp_path: Path, wrong) -> None:
    """What our own bug could write under the user's key: a field holding what its class
    never keeps (a span that is text, a step whose action is a number). It is ignored and
    recompiled, never a traceback later in the check."""
    root = library(tmp_path / "project", 3)
    plain, _ = check(root, new_cache(root))

    def spoil(value):
        if value.get("@") == "Lit":
            value["f"][-1] = wrong  # its span
        if value.get("@") == "Step":
            value["f"][0] = wrong if wrong is not None else 7  # its action

    again = respoil(root, "broken.yaml", spoil)
    assert check(root, again)[0] == plain
    assert again.misses == 1


def _spoil_tagged_span(value):
    if value.get("@") == "Lit" and type(value["f"][-1]) is int:
        value["f"][-1] = {"s": ["one", 1, 1, 2]}  # a positioned span whose line is text


def _spoil_negative_span(value):
    if value.get("@") == "Lit" and type(value["f"][-1]) is int:
        value["f"][-1] = {"s": [-3, -1, -3, -1]}  # positions no span of a file has


def _spoil_code(value):
    if value.get("@") == "Diagnostic":
        value["f"][0] = "C999"  # a code no check reports: every format looks its name up


@pytest.mark.parametrize(
    "spoil",
    [_spoil_tagged_span, _spoil_negative_span, _spoil_code],
    ids=["span-of-text", "negative-span", "unknown-code"],
)
def test_a_sealed_entry_holding_what_the_encoder_never_writes_is_compiled_again(tmp_path: Path, spoil) -> None:
    """A forger who can read the user's key can seal anything; the decoder still takes
    only what the encoder writes: a span as whole numbers, each field's items of the
    classes the field holds, a literal's value a scalar. Anything else is refused with
    its entry (the file compiled again): never a traceback later in the check, never a
    result the file does not have."""
    root = library(tmp_path / "project", 3)
    plain, _ = check(root, new_cache(root))
    again = respoil(root, "broken.yaml", spoil)
    assert check(root, again)[0] == plain
    assert again.misses == 1


def test_a_plugin_appearing_recomputes_the_files_that_name_it(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "playbooks" / "uses-plugin.yaml").write_text(
        "name: uses-plugin\ndescription: d\nowner: Engineer\nsteps:\n  - shout: hello\n"
    )
    missing = Catalog(builtin_catalog().specs(), fallback=lambda name: None)
    display = builtin_catalog().get("display")
    present = Catalog(
        builtin_catalog().specs(), fallback=lambda name: replace(display, name=name) if name == "shout" else None
    )
    path = str(root / "playbooks" / "uses-plugin.yaml")
    first = new_cache(root)
    assert first.compiled(path, missing).has_errors  # an unknown action
    with_plugin = new_cache(root)
    assert not with_plugin.compiled(path, present).has_errors
    assert with_plugin.misses == 1
    same = new_cache(root)
    assert not same.compiled(path, present).has_errors and same.hits == 1


def test_a_catalog_with_actions_of_its_own_is_compiled_without_the_cache(tmp_path: Path) -> None:
    """An entry records the names a file asks beyond the built-in actions (what plugins
    answer), not actions a caller's catalog declares itself: such a catalog's results
    are neither kept nor read, and the built-in catalog's are never taken for them."""
    root = tmp_path / "project"
    (root / "playbooks").mkdir(parents=True)
    (root / "playbooks" / "uses-shout.yaml").write_text(
        "name: uses-shout\ndescription: d\nowner: Engineer\nsteps:\n  - shout: hello\n"
    )
    path = str(root / "playbooks" / "uses-shout.yaml")
    own = Catalog([*builtin_catalog().specs(), replace(builtin_catalog().get("display"), name="shout")])
    cache = new_cache(root)
    assert not cache.compiled(path, own).has_errors
    assert (cache.hits, cache.misses) == (0, 0) and entries(root) == []
    assert cache.compiled(path, builtin_catalog()).has_errors  # no plugin declares `shout`
    assert cache.misses == 1 and entries(root)
    assert not cache.compiled(path, own).has_errors  # the entry just written is not read for it
    assert cache.hits == 0


def test_no_cache_inside_git_s_own_folder(tmp_path: Path) -> None:
    """Entries are named like git's loose objects (two hex digits, then the rest): a
    `cache-dir` inside `.git` would put files git takes for damaged objects there."""
    root = library(tmp_path / "project", 1)
    (root / ".git").mkdir()
    for inside in (".git/objects", ".git", ".GIT/objects", ".git./x"):  # as a case-folding file system names it too
        (root / "catalyst.toml").write_text(f'cache-dir = "{inside}"\n', encoding="utf-8")
        assert CheckCache.for_project(load_project(root, DiagnosticSink())) is None, inside
    (root / "catalyst.toml").write_text('cache-dir = ".xe/git-cache"\n', encoding="utf-8")
    assert CheckCache.for_project(load_project(root, DiagnosticSink())) is not None


def tree(base: Path) -> set[str]:
    return {str(p.relative_to(base)) for p in base.rglob("*")}


def test_the_cli_writes_only_the_project_cache_and_the_user_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = library(tmp_path / "project", 3)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.chdir(root)
    before = tree(tmp_path)
    runner = CliRunner()
    cold = runner.invoke(cli, ["check"])
    warm = runner.invoke(cli, ["check"])
    assert cold.output == warm.output and cold.exit_code == warm.exit_code == 1
    added = tree(tmp_path) - before
    assert added, "the check wrote its cache"
    assert all(
        p.startswith(("project/.xe/cache", "home/.cache/catalyst")) or p in ("project/.xe", "home/.cache")
        for p in added
    ), added
    assert (root / ".xe" / "cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    key = home / ".cache" / "catalyst" / "cache-key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert runner.invoke(cli, ["check", "--no-cache"]).output == cold.output
    assert runner.invoke(cli, ["list", "--json"]).output == runner.invoke(cli, ["list", "--json", "--no-cache"]).output
    listed = runner.invoke(cli, ["cache", "clean"])
    # three playbooks, the broken one, and the record of the whole check (cache.replay)
    assert listed.exit_code == 0 and "removed 5 cached result(s)" in listed.output
    assert not (root / ".xe" / "cache").exists()


@pytest.mark.parametrize("cache_dir", [".", "playbooks"])
def test_a_cache_dir_shared_with_the_project_s_files_ignores_none_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_dir: str
) -> None:
    """`cache-dir` may name a folder that holds other files (the root, a folder of
    playbooks): the cache's `.gitignore` of `*` goes only into a folder of its own, else
    it would hide those files from git and from every later directory scan (the second
    check found no playbooks); and cleaning leaves the project's own `.gitignore` alone."""
    root = library(tmp_path / "project", 3)
    (root / "catalyst.toml").write_text(f'cache-dir = "{cache_dir}"\n', encoding="utf-8")
    own = root / cache_dir / ".gitignore"
    if cache_dir == ".":
        own.write_text("node_modules/\n", encoding="utf-8")
    monkeypatch.chdir(root)
    runner = CliRunner()
    plain = runner.invoke(cli, ["check", "--no-cache"])
    assert plain.exit_code == 1 and "checked 4 file(s)" in plain.output
    assert runner.invoke(cli, ["check"]).output == plain.output
    assert runner.invoke(cli, ["check"]).output == plain.output
    assert runner.invoke(cli, ["check", "--no-cache"]).output == plain.output
    cleaned = runner.invoke(cli, ["cache", "clean"])
    assert cleaned.exit_code == 0 and "removed 5 cached result(s)" in cleaned.output
    assert own.read_text(encoding="utf-8") == "node_modules/\n" if cache_dir == "." else not own.exists()
    assert sorted(p.name for p in (root / "playbooks").iterdir()) == [
        "broken.yaml",
        "flow-0.yaml",
        "flow-1.yaml",
        "flow-2.yaml",
    ]


def test_no_cache_and_the_setting_write_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = library(tmp_path / "project", 2)
    monkeypatch.chdir(root)
    CliRunner().invoke(cli, ["check", "--no-cache"])
    assert not (root / ".xe").exists()
    (root / "catalyst.toml").write_text("check-cache = false\n")
    CliRunner().invoke(cli, ["check"])
    CliRunner().invoke(cli, ["list"])
    assert not (root / ".xe").exists()


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_a_key_others_can_read_turns_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache-home"))
    assert cache_key() is not None
    (user_cache_dir() / "cache-key").chmod(0o644)
    assert cache_key() is None
    root = library(tmp_path / "project", 2)
    assert CheckCache.for_project(load_project(root, DiagnosticSink())) is None


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_cache_folder_linked_out_of_the_project_is_not_used(tmp_path: Path) -> None:
    root = library(tmp_path / "project", 2)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / ".xe").mkdir()
    (root / ".xe" / "cache").symlink_to(outside)
    assert CheckCache.for_project(load_project(root, DiagnosticSink())) is None


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_cache_folder_that_is_a_link_loop_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Following it fails (Path.resolve raises RuntimeError for a loop): the cache is off,
    and the check, the list and the what-if print what they print without it."""
    root = library(tmp_path / "project", 2)
    (root / ".xe").mkdir()
    (root / ".xe" / "cache").symlink_to("cache")
    assert CheckCache.for_project(load_project(root, DiagnosticSink())) is None
    monkeypatch.chdir(root)
    runner = CliRunner()
    for args in (["check"], ["list", "--json"]):
        plain = runner.invoke(cli, [args[0], "--no-cache", *args[1:]])
        assert plain.exception is None or isinstance(plain.exception, SystemExit)
        assert runner.invoke(cli, args).output == plain.output
    planned = runner.invoke(cli, ["run", "playbooks/flow-1.yaml", "--what-if", "-i", "feature-id=x"])
    assert planned.exception is None or isinstance(planned.exception, SystemExit), planned.exception


@pytest.mark.skipif(os.name != "posix", reason="named pipes and symbolic links")
@pytest.mark.parametrize("plant", ["a named pipe", "a link to /dev/zero"])
def test_an_entry_that_is_no_plain_file_is_never_read(tmp_path: Path, plant: str) -> None:
    """Someone who may write the project plants, in place of each entry, a named pipe
    (reading it would wait for a writer for ever: the check hung) or a link to an
    endless device (64 MiB read for each entry). The cache writes only plain files; it
    reads only them, and the check finds what it finds without a cache."""
    import subprocess

    root = library(tmp_path / "project", 2)
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache-home"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
    }

    def catalyst(*args: str) -> tuple[int, str]:
        done = subprocess.run(
            [sys.executable, "-m", "catalyst_dsl", *args], cwd=root, env=env, capture_output=True, text=True, timeout=60
        )
        return done.returncode, done.stdout

    plain = catalyst("check", "--no-cache")
    assert catalyst("check") == plain
    planted = entries(root)
    for entry in planted:
        entry.unlink()
        if plant == "a named pipe":
            os.mkfifo(entry)
        else:
            entry.symlink_to("/dev/zero")
    assert catalyst("check") == plain
    assert planted and all(entry.is_file() and not entry.is_symlink() for entry in planted)  # replaced by entries


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_shards_linked_out_of_the_project_are_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project (a cloned repository, say) may come with `.xe/cache/<shard>` links to
    folders elsewhere: entries are written only inside the project, so the check
    writes nothing through them (it checks as without a cache for those entries)."""
    root = library(tmp_path / "project", 2)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / ".xe" / "cache").mkdir(parents=True)
    for shard in range(256):
        (root / ".xe" / "cache" / f"{shard:02x}").symlink_to(outside)
    monkeypatch.chdir(root)
    runner = CliRunner()
    plain = runner.invoke(cli, ["check", "--no-cache"])
    assert runner.invoke(cli, ["check"]).output == plain.output
    assert runner.invoke(cli, ["check"]).output == plain.output
    assert list(outside.iterdir()) == []


def test_a_read_only_cache_reads_entries_and_writes_none(tmp_path: Path) -> None:
    root = library(tmp_path / "project", 4)
    project = load_project(root, DiagnosticSink())
    plain, count = check(root, None)
    reader = CheckCache.for_project(project, read_only=True)
    assert check(root, reader)[0] == plain
    assert reader.misses == count and entries(root) == []  # nothing kept: compiled each time
    check(root, new_cache(root))  # `catalyst check` keeps them
    kept = {path: path.read_bytes() for path in entries(root)}
    reader = CheckCache.for_project(project, read_only=True)
    assert check(root, reader)[0] == plain
    assert (reader.hits, reader.misses) == (count, 0)
    assert {path: path.read_bytes() for path in entries(root)} == kept


def test_a_read_only_cache_makes_no_key(tmp_path: Path) -> None:
    home = tmp_path / "cache-home"
    assert cache_key({"XDG_CACHE_HOME": str(home)}, make=False) is None
    assert not home.exists()
    made = cache_key({"XDG_CACHE_HOME": str(home)})
    assert made is not None and cache_key({"XDG_CACHE_HOME": str(home)}, make=False) == made


def test_a_what_if_plans_the_same_from_the_cache_and_writes_no_entry(tmp_path: Path, monkeypatch) -> None:
    root = library(tmp_path / "project", 3)
    monkeypatch.chdir(root)
    target = sorted((root / "playbooks").iterdir())[0].name
    runner = CliRunner()
    cold = runner.invoke(cli, ["run", f"playbooks/{target}", "--what-if", "--format", "json"])
    assert entries(root) == []
    runner.invoke(cli, ["check"])
    kept = {path: path.read_bytes() for path in entries(root)}
    assert kept
    warm = runner.invoke(cli, ["run", f"playbooks/{target}", "--what-if", "--format", "json"])
    assert (warm.exit_code, warm.output) == (cold.exit_code, cold.output)
    assert {path: path.read_bytes() for path in entries(root)} == kept


def _every_field(value, dropped=frozenset({"smap", "expected"})):
    """A record tree as plain data, every field in it (those equality leaves out too), the
    spans as their positions: what a read entry must give back exactly."""
    from catalyst_dsl._internal import records
    from catalyst_dsl.syntax.source import Span

    if isinstance(value, Span):
        return ("span", value.file, value.line, value.col, value.end_line, value.end_col)
    if records.is_record(type(value)):
        return (
            type(value).__name__,
            *(
                (f.name, _every_field(getattr(value, f.name)))
                for f in records.fields(type(value))
                if f.name not in dropped
            ),
        )
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, *map(_every_field, value))
    if isinstance(value, dict):
        return ("dict", *((k, _every_field(v)) for k, v in value.items()))
    return value


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside this checkout")
def test_a_read_entry_gives_back_the_compiled_result_field_by_field(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    sample = CORPUS / "cli-commands" / "kitchen-sink.yaml"
    shutil.copy(sample, root / sample.name)
    catalog = builtin_catalog()
    written = new_cache(root)
    compiled = written.compiled(str(root / sample.name), catalog)
    reading = new_cache(root)
    read = reading.compiled(str(root / sample.name), catalog)
    assert (reading.hits, reading.misses) == (1, 0)
    assert read.playbook == compiled.playbook
    assert _every_field(read.playbook) == _every_field(compiled.playbook)
    assert _every_field(read.diagnostics) == _every_field(compiled.diagnostics)
    assert _every_field(read.calls) == _every_field(compiled.calls)
    # The fields an entry leaves out (they serve the file's own checks) come back as their defaults.
    from catalyst_dsl.ir.nodes import Tmpl

    templates = _records_of(read.playbook, Tmpl)
    assert templates and all(t.smap is None and t.expected is None for t in templates)
    assert any(t.expected is not None for t in _records_of(compiled.playbook, Tmpl))


def _records_of(value, cls):
    from catalyst_dsl._internal import records

    stack, found = [value], []
    while stack:
        item = stack.pop()
        if isinstance(item, cls):
            found.append(item)
        if records.is_record(type(item)):
            stack.extend(getattr(item, f.name) for f in records.fields(type(item)))
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def test_the_code_fingerprint_changes_with_the_checker_s_source_files_only(tmp_path: Path) -> None:
    from catalyst_dsl.project.cache.keys import code_fingerprint

    package = tmp_path / "catalyst_dsl"
    (package / "checks" / "__pycache__").mkdir(parents=True)
    (package / "checks" / "calls.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "grammar").mkdir()
    (tmp_path / "grammar" / "expressions.lark").write_text("start: x\n", encoding="utf-8")
    first = code_fingerprint(str(package))
    assert code_fingerprint(str(package)) == first
    (package / "checks" / "__pycache__" / "calls.cpython-311.pyc").write_bytes(b"compiled")
    (package / "notes.txt").write_text("not code", encoding="utf-8")
    (package / "loop").symlink_to(package, target_is_directory=True)  # not followed: no endless walk
    assert code_fingerprint(str(package)) == first
    (package / "checks" / "calls.py").write_text("x = 22\n", encoding="utf-8")  # edited in place
    edited = code_fingerprint(str(package))
    assert edited != first
    (package / "checks" / "new.py").write_text("", encoding="utf-8")
    added = code_fingerprint(str(package))
    assert added != edited
    (tmp_path / "grammar" / "expressions.lark").write_text("start: xy\n", encoding="utf-8")
    grammar_changed = code_fingerprint(str(package))
    assert grammar_changed != added


def test_the_code_fingerprint_names_the_python_that_runs_the_checker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One source tree run by two Pythons (another standard library, another libyaml
    beside it) keeps two sets of entries."""
    from catalyst_dsl.project.cache.keys import code_fingerprint

    package = tmp_path / "catalyst_dsl"
    package.mkdir()
    (package / "x.py").write_text("", encoding="utf-8")
    here = code_fingerprint(str(package))
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert code_fingerprint(str(package)) != here
