"""Build and install a tiny plugin wheel, for tests that need a really installed plugin.

`build_wheel` writes a pure-Python wheel by hand (zipfile, RECORD with real hashes), so
no build backend or network is needed; `install_wheel` installs it with pip into a
folder that a subprocess then puts on PYTHONPATH.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Mapping

import catalyst_dsl

HELLO_MODULE = textwrap.dedent(
    '''\
    """A catalyst action plugin for tests: `hello` greets someone."""

    from types import SimpleNamespace

    from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
    from catalyst_dsl.ir.types import STRING, obj, opt


    def run(ctx, config):
        return {"greeting": "hello, " + config.get("who", "world")}


    SPEC = ActionSpec("hello", "plugins", "Greet someone.", obj(who=opt(STRING, "who to greet")), "who",
                      obj(greeting=STRING), Effect.PURE, WhatIf.RUN)
    ACTION = SimpleNamespace(spec=SPEC, run=run)
    '''
)

HELLO_ENTRY_POINTS = {"catalyst.actions": {"hello": "catalyst_hello_plugin:ACTION"}}


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"sha256={digest}"


def build_wheel(
    directory: Path,
    *,
    name: str = "catalyst_hello_plugin",
    version: str = "0.1",
    modules: Mapping[str, str] | None = None,
    entry_points: Mapping[str, Mapping[str, str]] | None = None,
) -> Path:
    """A wheel in `directory` holding `modules` ({"file.py": source}) and `entry_points`.

    The defaults make `catalyst_hello_plugin`, which registers the action `hello`.
    """
    modules = {f"{name}.py": HELLO_MODULE} if modules is None else modules
    entry_points = HELLO_ENTRY_POINTS if entry_points is None else entry_points
    dist_info = f"{name}-{version}.dist-info"
    groups = "".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in items.items()) + "\n"
        for group, items in entry_points.items()
    )
    files = {
        **{path: source.encode("utf-8") for path, source in modules.items()},
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: catalyst test plugin\n"
        ).encode(),
        f"{dist_info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: catalyst-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        f"{dist_info}/entry_points.txt": groups.encode("utf-8"),
    }
    record = (
        "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files.items())
        + f"{dist_info}/RECORD,,\n"
    )
    directory.mkdir(parents=True, exist_ok=True)
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
        archive.writestr(f"{dist_info}/RECORD", record)
    return wheel


def install_wheel(wheel: Path, target: Path) -> None:
    """pip-install `wheel` into `target` (offline, no dependencies); fails loudly with pip's output."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise AssertionError(f"pip install failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")


def plugin_env(target: Path) -> dict[str, str]:
    """The environment for a subprocess that sees the plugins in `target` and this checkout."""
    # The checkout goes on the path too: the editable install may point elsewhere.
    checkout = str(Path(catalyst_dsl.__file__).resolve().parent.parent)
    paths = [str(target), checkout, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
