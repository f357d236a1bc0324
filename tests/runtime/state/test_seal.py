"""The seal's MAC is compared whole: a seal whose MAC is cut short, or wrong in one
character anywhere, never verifies. A check of a prefix, or of the characters the
forger kept, would let a rewritten snapshot through with a seal made up in part."""

from __future__ import annotations

import pytest

from catalyst_dsl.runtime.state.integrity import seal
from catalyst_dsl.runtime.state.integrity.run_key import RunKey

KEY = RunKey(b"k" * 32, "test", True)
BODY = b'{"run": "sealed", "steps": []}'
FIELDS = {"run": seal.digest('"sealed"')}


def _sealed() -> dict:
    return seal.make(KEY, 3, BODY, FIELDS, "a" * 64)


def test_the_seal_it_made_verifies() -> None:
    assert seal.verifies(KEY, _sealed(), BODY)


@pytest.mark.parametrize("kept", [0, 1, 16, 32, 63])
def test_a_mac_cut_short_never_verifies(kept: int) -> None:
    made = _sealed()
    made["mac"] = made["mac"][:kept]
    assert not seal.verifies(KEY, made, BODY)


@pytest.mark.parametrize("at", [0, 31, 32, 63])
def test_a_mac_wrong_in_one_character_never_verifies(at: int) -> None:
    made = _sealed()
    mac = made["mac"]
    made["mac"] = mac[:at] + ("0" if mac[at] != "0" else "1") + mac[at + 1 :]
    assert not seal.verifies(KEY, made, BODY)


def test_a_mac_with_more_after_it_never_verifies() -> None:
    made = _sealed()
    made["mac"] += "0"
    assert not seal.verifies(KEY, made, BODY)


def test_the_body_the_number_the_link_and_the_digests_are_sealed() -> None:
    made = _sealed()
    assert not seal.verifies(KEY, made, BODY + b" ")
    assert not seal.verifies(KEY, {**made, "seq": 4}, BODY)
    assert not seal.verifies(KEY, {**made, "fields": {"run": seal.digest('"other"')}}, BODY)
    assert not seal.verifies(KEY, {**made, "prev": "b" * 64}, BODY)
    assert not seal.verifies(RunKey(b"j" * 32, "test", True), made, BODY)
