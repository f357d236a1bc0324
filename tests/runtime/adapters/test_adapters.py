"""AI adapters: the deterministic mock, its scripts, streaming, and choosing an adapter."""

import json
import textwrap

import pytest

from catalyst_dsl.runtime.adapters.choosing import select_adapter
from catalyst_dsl.runtime.adapters.interface import (
    AI_ADAPTER_ERROR,
    AI_ADAPTER_UNAVAILABLE,
    SCRIPT_ENV,
    AdapterError,
    AIAdapter,
    Unusable,
    collect,
)
from catalyst_dsl.runtime.adapters.mock import MockAdapter, split
from catalyst_dsl.runtime.errors import StepError


def _ask(adapter, prompt, **options):
    return collect(adapter.invoke(prompt, (), options))


def _script(tmp_path, text, name="script.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_mock_default_answer_is_deterministic():
    adapter = MockAdapter(environ={})
    prompt = "\n   \n  Summarise the spec in three bullets.  \nMore context here"
    assert isinstance(adapter, AIAdapter) and adapter.name == "mock"
    assert _ask(adapter, prompt) == "mock answer to: Summarise the spec in three bullets."
    assert _ask(MockAdapter(environ={}), prompt) == _ask(adapter, prompt)


def test_mock_default_answer_repeats_the_whole_first_line():
    assert _ask(MockAdapter(environ={}), "x" * 200) == "mock answer to: " + "x" * 200
    assert _ask(MockAdapter(environ={}), "\n  \nfirst\nsecond") == "mock answer to: first"
    assert _ask(MockAdapter(environ={}), "") == "mock answer to: "


def test_scripted_responses_in_order(tmp_path):
    path = _script(
        tmp_path,
        """\
        - response: first
        - response: second
        """,
    )
    adapter = MockAdapter(path, environ={})
    assert [_ask(adapter, "q"), _ask(adapter, "q")] == ["first", "second"]
    with pytest.raises(AdapterError, match="no unused entry") as caught:
        _ask(adapter, "q")
    assert caught.value.code == AI_ADAPTER_ERROR and "repeat" in caught.value.guidance


def test_match_picks_the_first_unused_matching_entry(tmp_path):
    path = _script(
        tmp_path,
        """\
        - match: '(?i)review'
          response: looks good
        - match: '^Plan'
          response: step 1
          repeat: true
        - response: anything else
        """,
    )
    adapter = MockAdapter(environ={SCRIPT_ENV: str(path)})
    assert _ask(adapter, "Plan the work") == "step 1"
    assert _ask(adapter, "Please REVIEW this") == "looks good"
    assert _ask(adapter, "Plan again") == "step 1"  # repeat: true
    assert _ask(adapter, "review once more") == "anything else"  # the review entry is spent
    assert _ask(adapter, "Plan a third time") == "step 1"


def test_json_response(tmp_path):
    _script(tmp_path, json.dumps([{"json": {"verdict": "ok", "score": 9, "notes": ["é"]}}]), name="script.json")
    answer = _ask(MockAdapter(environ={}, root=tmp_path), "q", script="script.json")
    assert json.loads(answer) == {"verdict": "ok", "score": 9, "notes": ["é"]}


def test_chunks_stream_through_collect(tmp_path):
    path = _script(
        tmp_path,
        """\
        - response: abcdefgh
          chunks: 3
        """,
    )
    seen = []
    answer = collect(MockAdapter(path, environ={}).invoke("q", ["file-read"], {}), on_chunk=seen.append)
    assert seen == ["abc", "def", "gh"]
    assert answer == "abcdefgh"


def test_split_gives_exactly_n_pieces():
    assert split("ab", 4) == ["a", "b", "", ""]
    assert split("", 1) == [""]


def test_error_entry_raises_its_code(tmp_path):
    path = _script(
        tmp_path,
        """\
        - error: RateLimitExceeded
        - response: recovered
        """,
    )
    adapter = MockAdapter(path, environ={})
    with pytest.raises(StepError) as caught:
        _ask(adapter, "q")
    assert isinstance(caught.value, AdapterError) and caught.value.code == "RateLimitExceeded"
    assert _ask(adapter, "q") == "recovered"


def test_script_precedence_option_then_env_then_setting(tmp_path):
    option = _script(tmp_path, "- {response: from option, repeat: true}\n", "option.yaml")
    env = _script(tmp_path, "- {response: from env, repeat: true}\n", "env.yaml")
    setting = _script(tmp_path, "- {response: from setting, repeat: true}\n", "setting.yaml")
    assert (
        _ask(MockAdapter("setting.yaml", root=tmp_path, environ={SCRIPT_ENV: str(env)}), "q", script=str(option))
        == "from option"
    )
    assert _ask(MockAdapter("setting.yaml", root=tmp_path, environ={SCRIPT_ENV: str(env)}), "q") == "from env"
    assert _ask(MockAdapter("setting.yaml", root=tmp_path, environ={}), "q") == "from setting"
    assert setting.exists()


@pytest.mark.parametrize(
    "text, problem",
    [
        ("- response: [unclosed\n", "invalid YAML at line 2, column 1: expected ',' or ']'"),
        ("response: x\n", "must be a list of entries, not a mapping"),
        ("", "is empty"),
        ("- just text\n", "entry 1 must be a mapping, not a string"),
        ("- {response: ok}\n- {respnse: x}\n", "entry 2: unknown key 'respnse' \\(did you mean 'response'\\?\\)"),
        ("- {response: x, chunks: two}\n", "entry 1, 'chunks': expected an integer, got a string"),
        ("- {response: x, chunks: 0}\n", "'chunks' is 0; it must be at least 1"),
        ("- {match: '(', response: x}\n", "entry 1, 'match': not a valid regular expression"),
        ("- {response: x, json: 1}\n", "exactly one of 'response', 'json' or 'error'; it has response and json"),
        ("- {error: not pascal}\n", "PascalCase"),
    ],
)
def test_malformed_script_names_file_and_problem(tmp_path, text, problem):
    path = _script(tmp_path, text)
    with pytest.raises(AdapterError, match=problem) as caught:
        _ask(MockAdapter(path, environ={}), "q")
    assert caught.value.code == AI_ADAPTER_ERROR
    assert str(path) in caught.value.message


def test_malformed_json_script(tmp_path):
    path = _script(tmp_path, '[{"response": "x",}]', name="s.json")
    with pytest.raises(AdapterError, match="invalid JSON at line 1, column 19"):
        _ask(MockAdapter(path, environ={}), "q")


def test_missing_script(tmp_path):
    with pytest.raises(AdapterError, match="cannot be read"):
        _ask(MockAdapter(tmp_path / "nope.yaml", environ={}), "q")


def test_collect_refuses_non_text_chunks():
    with pytest.raises(AdapterError, match="bytes instead of text"):
        collect(iter(["ok", b"raw"]))


# --- choosing -----------------------------------------------------------------------------


class _Named:
    def __init__(self, name, options):
        self.name = name
        self.options = options

    def invoke(self, prompt, tools, options):
        yield f"{self.name}: {prompt}"


def _factory(name):
    return lambda options: _Named(name, options)


AVAILABLE = {"claude": _factory("claude"), "copilot": _factory("copilot")}


def test_explicit_provider_wins():
    assert select_adapter("copilot", ["claude", "copilot"], AVAILABLE).name == "copilot"
    assert select_adapter("mock", ["claude"], AVAILABLE).name == "mock"


def test_first_available_of_precedence():
    assert select_adapter(None, ["gemini", "copilot", "claude"], AVAILABLE).name == "copilot"


def test_mock_only_when_nothing_is_configured():
    assert isinstance(select_adapter(None, [], {}), MockAdapter)
    assert isinstance(select_adapter(None, [], AVAILABLE), MockAdapter)
    with pytest.raises(
        AdapterError, match="none of the AI adapters of the ai-adapters setting is installed: gemini"
    ) as caught:
        select_adapter(None, ["gemini"], AVAILABLE)
    assert caught.value.code == AI_ADAPTER_UNAVAILABLE and "install the plugin" in caught.value.guidance


def test_a_configured_but_unusable_adapter_is_an_error_with_the_fix_never_the_mock():
    broken = {"openai": Unusable("the openai-base-url setting is not set", "set openai-base-url in catalyst.toml")}
    with pytest.raises(
        AdapterError,
        match="the AI adapter 'openai' \\(ai-adapters\\) cannot be used: the openai-base-url setting is not set",
    ) as caught:
        select_adapter(None, ["openai", "claude"], {**AVAILABLE, "openai": _factory("openai")}, unusable=broken)
    assert caught.value.guidance == "set openai-base-url in catalyst.toml; or remove it from ai-adapters"
    with pytest.raises(
        AdapterError, match="AI provider 'openai' cannot be used: the openai-base-url setting is not set"
    ):
        select_adapter("openai", [], AVAILABLE, unusable=broken)
    # A plugin not installed here is skipped for the next one listed; the mock only when listed.
    assert select_adapter(None, ["gemini", "claude"], AVAILABLE, unusable=broken).name == "claude"
    assert isinstance(select_adapter(None, ["gemini", "mock"], AVAILABLE, unusable=broken), MockAdapter)


def test_callers_mock_factory_is_used():
    configured = MockAdapter(environ={})
    assert select_adapter(None, [], {"mock": lambda options: configured}) is configured


def test_options_reach_the_factory():
    adapter = select_adapter("claude", [], AVAILABLE, options={"model": "big"})
    assert adapter.options == {"model": "big"}


def test_unknown_provider_lists_the_available_ones():
    with pytest.raises(AdapterError, match="'cluade' is not available; available: claude, copilot, mock") as caught:
        select_adapter("cluade", ["claude"], AVAILABLE)
    assert caught.value.code == AI_ADAPTER_UNAVAILABLE
    assert caught.value.guidance == "did you mean 'claude'?"


def test_factory_failure_is_an_adapter_error():
    def broken(options):
        raise RuntimeError("no credentials")

    with pytest.raises(AdapterError, match="'broken' failed to start: RuntimeError: no credentials") as caught:
        select_adapter("broken", [], {"broken": broken})
    assert caught.value.code == AI_ADAPTER_UNAVAILABLE
