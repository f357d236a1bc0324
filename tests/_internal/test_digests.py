"""The digests and seals of the check cache (digests.py), against hashlib's BLAKE2b."""

from __future__ import annotations

import hashlib

from catalyst_dsl._internal import digests

KEY = bytes(range(32))


def test_a_digest_is_blake2b_of_32_bytes() -> None:
    assert digests.hexdigest(b"playbook") == hashlib.blake2b(b"playbook", digest_size=32).hexdigest()
    fed = digests.hasher()
    fed.update(b"play")
    fed.update(b"book")
    assert fed.hexdigest() == digests.hexdigest(b"playbook")
    assert len(digests.hexdigest(b"")) == 64


def test_a_seal_is_keyed_blake2b_and_holds_only_for_its_key_and_text() -> None:
    seal = digests.seal(KEY, b"entry")
    assert seal == hashlib.blake2b(b"entry", key=KEY, digest_size=32).hexdigest().encode()
    assert digests.sealed(KEY, b"entry", seal)
    assert not digests.sealed(KEY, b"entry ", seal)
    assert not digests.sealed(bytes(32), b"entry", seal)
    assert not digests.sealed(KEY, b"entry", seal[:-1])
    assert not digests.sealed(KEY, b"entry", seal.upper())
    # a seal is not the plain digest of the text: without the key it cannot be made
    assert not digests.sealed(KEY, b"entry", digests.hexdigest(b"entry").encode())


# A Python built without BLAKE2 (no `_blake2`, so no `hashlib.blake2b`; some FIPS
# builds) made every cached check, a what-if and a check naming a plugin's action end in
# an ImportError traceback from digests.py; they run there on SHA-256 and HMAC.
def test_a_python_without_blake2_still_checks_with_its_cache(tmp_path) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parents[2]
    project = tmp_path / "project"
    project.mkdir()
    (project / "catalyst.toml").write_text("", encoding="utf-8")
    (project / "one.yaml").write_text(
        "name: one\ndescription: d\nowner: Engineer\nsteps:\n  - some-plugin-action: 1\n", encoding="utf-8"
    )
    probe = (
        "import sys\nsys.modules['_blake2'] = None  # as if the build had none\n"
        "import logging\nlogging.disable()  # hashlib logs each hash it lacks\n"
        "from catalyst_dsl._internal import digests\nassert digests.blake2b is None\n"
        "from catalyst_dsl.project.cache import store\n"
        "cache = store.CheckCache(store.Path('cache'), bytes(32), 'build')\n"
        "cache.write_sealed('ab' * 32, b'body')\n"
        "assert cache.read_sealed('ab' * 32) == b'body'\n"
        "assert store.CheckCache(store.Path('cache'), bytes(range(32)), 'build')"
        ".read_sealed('ab' * 32) is None\n"
        "sys.argv = ['catalyst', 'check', 'one.yaml']\n"
        "from catalyst_dsl.cli.main import main\nmain()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CACHE_HOME": str(tmp_path / "cache-home")}
    for _ in range(2):  # written, then read
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=project, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 1, done.stderr  # the unknown action is an error, not a crash
        assert "Traceback" not in done.stderr and "checked 1 file(s): 1 error(s)" in done.stdout, (
            done.stdout + done.stderr
        )
    assert list((project / ".xe" / "cache").glob("??/*"))
