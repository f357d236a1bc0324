"""The digests and seals of the check cache (digests.py), against hashlib's BLAKE2b."""

from __future__ import annotations

import hashlib

from catalyst_dsl import digests

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
