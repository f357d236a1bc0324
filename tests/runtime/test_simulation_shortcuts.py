"""The shortcuts that keep a what-if's simulation cheap give what the long way gives."""

from __future__ import annotations

import datetime
import re

import pytest

from catalyst_dsl.runtime import events


@pytest.mark.parametrize("nanos", [0, 1_700_000_000_123_456_789, 1_700_000_000_999_999_999, 4_102_444_799_000_001_000])
def test_a_log_stamp_is_the_time_datetime_would_write(monkeypatch, nanos):
    monkeypatch.setattr(events, "_second", (-1, ""))
    monkeypatch.setattr(events.time, "time_ns", lambda: nanos)
    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
        microseconds=nanos // 1000
    )
    assert events.utc_now() == moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_a_log_stamp_follows_the_clock_past_the_second_it_kept(monkeypatch):
    clock = iter([1_700_000_000_500_000_000, 1_700_000_000_900_000_000, 1_700_000_001_000_002_000])
    monkeypatch.setattr(events, "_second", (-1, ""))
    monkeypatch.setattr(events.time, "time_ns", lambda: next(clock))
    stamps = [events.utc_now() for _ in range(3)]
    assert stamps == ["2023-11-14T22:13:20.500000Z", "2023-11-14T22:13:20.900000Z", "2023-11-14T22:13:21.000002Z"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", s) for s in stamps)


def test_a_name_is_read_from_the_scopes_then_the_inputs_and_missing_is_a_key_error(tmp_path):
    from catalyst_dsl.runtime.engine.scope import RunEnv, Scope

    outer = Scope(None, {"shadowed": "variable", "none": None})
    env = RunEnv(Scope(outer, {"inner": 1}), {"shadowed": "input", "only-input": 2}, tmp_path, lambda: [])
    assert [env.lookup(n) for n in ("inner", "shadowed", "only-input", "none")] == [1, "variable", 2, None]
    assert env.lookup("inputs") == {"shadowed": "input", "only-input": 2}
    with pytest.raises(KeyError):
        env.lookup("nowhere")
    with pytest.raises(KeyError):
        outer.lookup("inner")


def test_a_reference_that_cannot_be_read_fails_where_it_stands(tmp_path):
    from catalyst_dsl.runtime.values.evaluate import EvaluationError, render
    from catalyst_dsl.runtime.engine.scope import RunEnv, Scope

    env = RunEnv(Scope(None, {"a": {"b": None}}), {}, tmp_path, lambda: [])
    with pytest.raises(EvaluationError) as missing:
        render("x {{ nowhere }}", env)
    assert (missing.value.message, missing.value.start, missing.value.end) == ("'nowhere' is not defined", 5, 12)
    with pytest.raises(EvaluationError) as null:
        render("{{a.b.c}}", env)
    assert null.value.message == "cannot read 'c' of null: 'a.b' is null"
