"""The package's modules served from one file of compiled code (catalyst_dsl/_internal/bundle.py).

Each test runs Python on a copy of the package, with bytecode written (the suite itself
may run with PYTHONDONTWRITEBYTECODE) to a folder of its own, and looks only at what a
user could see: which files appear, what the modules say, what the commands print.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import catalyst_dsl
from catalyst_dsl._internal import bundle

REPOSITORY = Path(catalyst_dsl.__file__).resolve().parents[1]
TAG = sys.implementation.cache_tag


def _copy_package(target: Path) -> Path:
    """The package (and the grammar beside it) copied under `target`, times kept."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPOSITORY / "catalyst_dsl", target / "catalyst_dsl", ignore=ignore)
    shutil.copytree(REPOSITORY / "grammar", target / "grammar", ignore=ignore)
    return target


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return _copy_package(tmp_path / "code")


def _python(code_root: Path, script: str, *, prefix: Path | None, cwd: Path | None = None, **extra: str):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CATALYST_CODE_BUNDLE")}
    env["PYTHONPATH"] = str(code_root)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if prefix is not None:
        env["PYTHONPYCACHEPREFIX"] = str(prefix)
    env.update(extra)
    return subprocess.run(
        [sys.executable, "-c", script], cwd=cwd or code_root.parent, env=env, capture_output=True, text=True
    )


def _bundle_file(code_root: Path, prefix: Path | None) -> Path:
    package = (code_root / "catalyst_dsl").resolve()
    name = f"catalyst-modules.{TAG}.bin"
    if prefix is None:
        return package / "__pycache__" / name
    return prefix / str(package).lstrip(os.sep) / name


def _pyc(code_root: Path, prefix: Path, module: str) -> Path:
    source = (code_root / "catalyst_dsl" / module).resolve()
    return prefix / str(source.parent).lstrip(os.sep) / f"{source.stem}.{TAG}.pyc"


def test_a_process_writes_the_modules_it_used_and_the_next_reads_them_from_it(copy: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "pyc"
    first = _python(copy, "import catalyst_dsl.compiler", prefix=prefix)
    assert first.returncode == 0, first.stderr
    assert _bundle_file(copy, prefix).is_file()
    compiled = _pyc(copy, prefix, "compiler.py")
    assert compiled.is_file()  # the first process compiled it as Python does

    compiled.unlink()
    second = _python(
        copy,
        "import catalyst_dsl.compiler as c, inspect; "
        "print(c.__file__); print(c.__spec__.origin); print('def ' in inspect.getsource(c))",
        prefix=prefix,
    )
    assert second.returncode == 0, second.stderr
    origin = str((copy / "catalyst_dsl" / "compiler.py").resolve())
    assert second.stdout.split() == [origin, origin, "True"]
    assert not compiled.exists()  # served from the bundle: Python had nothing to compile


def test_an_edited_module_is_compiled_from_its_source_and_the_bundle_follows(copy: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "pyc"
    assert _python(copy, "import catalyst_dsl.compiler", prefix=prefix).returncode == 0
    source = copy / "catalyst_dsl" / "compiler.py"
    source.write_text(source.read_text(encoding="utf-8") + "\nEDITED = 'yes'\n", encoding="utf-8")

    edited = _python(copy, "import catalyst_dsl.compiler as c; print(c.EDITED)", prefix=prefix)
    assert (edited.returncode, edited.stdout.strip()) == (0, "yes"), edited.stderr

    _pyc(copy, prefix, "compiler.py").unlink()
    again = _python(copy, "import catalyst_dsl.compiler as c; print(c.EDITED)", prefix=prefix)
    assert (again.returncode, again.stdout.strip()) == (0, "yes"), again.stderr
    assert not _pyc(copy, prefix, "compiler.py").exists()  # the edited module is in the bundle now


@pytest.mark.parametrize(
    "damage",
    [
        "empty",
        "not a bundle",
        "another version",
        "no index",
        "index of another shape",
        "code that is not code",
        "code past the end",
        "truncated",
    ],
)
def test_a_damaged_or_foreign_bundle_is_ignored_and_written_again(copy: Path, tmp_path: Path, damage: str) -> None:
    import marshal

    prefix = tmp_path / "pyc"
    assert _python(copy, "import catalyst_dsl.compiler", prefix=prefix).returncode == 0
    path = _bundle_file(copy, prefix)
    good = path.read_bytes()
    entries = bundle.decode(good)
    assert "catalyst_dsl.compiler" in entries
    header = bundle.FORMAT + b"\n"
    damaged = {
        "empty": b"",
        "not a bundle": b"not a bundle at all",
        "another version": good.replace(b"catalyst-modules 2", b"catalyst-modules 9", 1),
        "no index": header + (10**6).to_bytes(8, "little") + b"\x00" * 40,
        "index of another shape": header
        + len(shape := marshal.dumps({"catalyst_dsl.compiler": ("compiler.py", "time", 1, 0, 0)})).to_bytes(8, "little")
        + shape,
        "code that is not code": bundle.encode(
            {name: (*entry[:3], marshal.dumps(["not", "code"])) for name, entry in entries.items()}
        ),
        "code past the end": good[: len(good) - 10],
        "truncated": good[: len(good) // 2],
    }[damage]
    path.write_bytes(damaged)
    for module in ("compiler.py", "__init__.py"):
        _pyc(copy, prefix, module).unlink(missing_ok=True)

    run = _python(copy, "import catalyst_dsl.compiler as c; print(c.__name__)", prefix=prefix)
    assert (run.returncode, run.stdout.strip(), run.stderr) == (0, "catalyst_dsl.compiler", "")
    assert "catalyst_dsl.compiler" in bundle.decode(path.read_bytes())  # written again, whole


def test_no_bundle_is_written_where_python_writes_no_bytecode(copy: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "pyc"
    run = _python(copy, "import catalyst_dsl.compiler", prefix=prefix, PYTHONDONTWRITEBYTECODE="1")
    assert run.returncode == 0, run.stderr
    assert not _bundle_file(copy, prefix).exists()


def test_the_bundle_can_be_turned_off(copy: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "pyc"
    script = (
        "import sys, catalyst_dsl.compiler; from catalyst_dsl._internal.bundle import BundleFinder; "
        "print(any(isinstance(f, BundleFinder) for f in sys.meta_path))"
    )
    off = _python(copy, script, prefix=prefix, CATALYST_CODE_BUNDLE="off")
    assert (off.returncode, off.stdout.strip()) == (0, "False"), off.stderr
    assert not _bundle_file(copy, prefix).exists()
    on = _python(copy, script, prefix=prefix)
    assert (on.returncode, on.stdout.strip()) == (0, "True"), on.stderr


def test_a_moved_copy_names_its_own_files(tmp_path: Path) -> None:
    first = _copy_package(tmp_path / "first")
    assert _python(first, "import catalyst_dsl.compiler", prefix=None).returncode == 0
    assert _bundle_file(first, None).is_file()
    moved = tmp_path / "moved"
    shutil.copytree(first, moved)  # times kept, the bundle in __pycache__ with it
    shutil.rmtree(first)
    run = _python(
        moved,
        "import catalyst_dsl.compiler as c\n"
        "mine = [v for v in vars(c).values() if getattr(v, '__module__', '') == c.__name__]\n"
        "f = next(v for v in mine if hasattr(v, '__code__'))\n"
        "print(c.__file__); print(f.__code__.co_filename)",
        prefix=None,
    )
    assert run.returncode == 0, run.stderr
    origin = str((moved / "catalyst_dsl" / "compiler.py").resolve())
    assert run.stdout.split() == [origin, origin]


def test_commands_print_the_same_through_the_bundle(copy: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "catalyst.toml").write_text("", encoding="utf-8")
    shutil.copy(REPOSITORY / "playbooks" / "research.yaml", project / "research.yaml")
    prefix = tmp_path / "pyc"
    script = "import sys; from catalyst_dsl.cli.program import main; sys.argv = ['catalyst', *sys.argv[1:]]; main()"

    def run(*argv: str, **extra: str) -> tuple[int, str]:
        done = subprocess.run(
            [sys.executable, "-c", script, *argv],
            cwd=project,
            env={
                **{k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CATALYST_CODE_BUNDLE")},
                "PYTHONPATH": str(copy),
                "PYTHONPYCACHEPREFIX": str(prefix),
                "XDG_CACHE_HOME": str(tmp_path / "cache-home"),
                **extra,
            },
            capture_output=True,
            text=True,
        )
        return done.returncode, done.stdout + done.stderr

    commands = [("check", "--no-cache", "research.yaml"), ("run", "research.yaml", "--what-if", "-i", "topic=x")]
    without = [run(*argv, CATALYST_CODE_BUNDLE="off") for argv in commands]
    run(*commands[0])  # writes the bundle
    assert _bundle_file(copy, prefix).is_file()
    served = [run(*argv) for argv in commands]
    assert served == without


def test_a_link_planted_at_the_temporary_name_is_not_written_through(copy: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched", encoding="utf-8")
    script = (
        "import os, catalyst_dsl.compiler\n"
        "from catalyst_dsl._internal import bundle\n"
        "path = bundle.bundle_path()\n"
        "os.makedirs(os.path.dirname(path), exist_ok=True)\n"
        f"os.symlink({str(victim)!r}, f'{{path}}.{{os.getpid()}}.tmp')\n"
    )
    run = _python(copy, script, prefix=tmp_path / "pyc")
    assert (run.returncode, run.stderr) == (0, "")
    assert victim.read_text(encoding="utf-8") == "untouched"
