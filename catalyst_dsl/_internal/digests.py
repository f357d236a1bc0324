"""The digests and seals of what catalyst keeps for itself: the check cache's entry names,
fingerprints and seals, and the facts a cached check is replayed against.

All are BLAKE2b (32 bytes; keyed for a seal, which RFC 7693 makes a MAC without HMAC's
two passes). It comes from `_blake2`, CPython's own module for it, which is what
`hashlib.blake2b` is: importing `hashlib` also loads OpenSSL (about 2.5 ms of a start
that only reads the cache), as the standard library's `random` avoids by taking its
SHA-512 from the builtin module the same way. Another Python without `_blake2` gets
hashlib's; one without BLAKE2 at all, SHA-256 and HMAC.

Digests other programs or saved state read (a plan's `planHash`, a run's loop items,
webhook and approval signatures) stay SHA-256 where they are made.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # not CPython, or one built without its own BLAKE2 module
    try:
        from hashlib import blake2b
    except ImportError:  # a Python without BLAKE2 at all (some FIPS builds leave it out)
        blake2b = None

try:
    from _operator import _compare_digest as _same
except ImportError:  # not CPython
    from hmac import compare_digest as _same

SIZE = 32

if blake2b is not None:

    def hexdigest(data: bytes) -> str:
        return blake2b(data, digest_size=SIZE).hexdigest()

    def hasher():
        """A digest to feed piece by piece (`update`), then read with `hexdigest()`."""
        return blake2b(digest_size=SIZE)

    def seal(key: bytes, data: bytes) -> bytes:
        """The seal of `data` under `key` (at most 64 bytes), as ASCII hex."""
        return blake2b(data, key=key, digest_size=SIZE).hexdigest().encode("ascii")

else:
    # Without BLAKE2, SHA-256 and HMAC-SHA256 (32 bytes too): a check still runs and its
    # cache still seals. Names made so differ from a BLAKE2b Python's, so neither reads
    # the other's entries.
    import hashlib
    import hmac

    def hexdigest(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    def hasher():
        """A digest to feed piece by piece (`update`), then read with `hexdigest()`."""
        return hashlib.sha256()

    def seal(key: bytes, data: bytes) -> bytes:
        """The seal of `data` under `key`, as ASCII hex."""
        return hmac.new(key, data, hashlib.sha256).hexdigest().encode("ascii")


def sealed(key: bytes, data: bytes, given: bytes) -> bool:
    """Whether `given` is the seal of `data` under `key`, compared in constant time."""
    return _same(given, seal(key, data))
