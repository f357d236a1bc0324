"""No silent fallback to the mock: an AI adapter that is configured but cannot be used stops
the run before any step with what is missing and where to set it; the mock answers only when
nothing is configured, and the run says so once."""

from __future__ import annotations

import json
import sys

import pytest

from catalyst_dsl.project.config import ProjectConfig
from catalyst_dsl.runtime.adapters.builtin import precedence, unusable_adapters
from catalyst_dsl.runtime.adapters.choice import MOCK_NOTICE

ASKS = """
    name: asks
    description: two prompts and a log line
    owner: Engineer
    steps:
      - log-info: "before the prompts"
      - name: first
        ai-prompt: "Say hi"
      - name: second
        ai-prompt: "Say bye"
      - log-info: "{{first}} / {{second}}"
"""


def _refused(project, result, *said: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    for text in said:
        assert text in result.output, result.output
    # Refused at pre-flight: no step ran, no snapshot was made, the mock never answered.
    assert "before the prompts" not in result.output and "mock answer" not in result.output
    assert not project.snapshot_files()


def _configure(project, settings: str) -> None:
    """The settings, those a repository may not give in the user's own configuration."""
    from catalyst_dsl.project.config import USER_SETTINGS

    lines = settings.splitlines(keepends=True)
    project.settings("".join(line for line in lines if line.split(" ")[0] not in USER_SETTINGS))
    project.user_settings("".join(line for line in lines if line.split(" ")[0] in USER_SETTINGS))


@pytest.mark.parametrize(
    "settings, said, fix",
    [
        (
            'ai-adapters = ["openai"]\n',
            "the AI adapter 'openai' (ai-adapters) cannot be used: the openai-base-url setting is not set",
            (
                'help: set openai-base-url in ~/.config/catalyst/config.toml, '
                'e.g. openai-base-url = "https://api.openai.com/v1"; or remove it from ai-adapters'
            ),
        ),
        (
            'ai-adapters = ["openai"]\nopenai-base-url = "https://ai.example.com/v1"\nopenai-model = "m"\n',
            "the AI adapter 'openai' (ai-adapters) cannot be used: it has no API key for ai.example.com",
            (
                "help: set the secret 'openai-api-key' "
                "(CATALYST_SECRET_OPENAI_API_KEY, or secrets-file) or $OPENAI_API_KEY"
            ),
        ),
        (
            'ai-adapters = ["openai"]\nopenai-base-url = "ftp:/nowhere"\n',
            "openai-base-url is 'ftp:/nowhere', which is not an http(s) URL",
            "help: fix openai-base-url in ~/.config/catalyst/config.toml",
        ),
        (
            'openai-model = "gpt-x"\n',
            "the AI adapter 'openai' (ai-adapters) cannot be used: the openai-base-url setting is not set",
            "openai-base-url",
        ),
        (
            'ai-command = ["no-such-ai-program-4711", "--quiet"]\n',
            (
                "cannot be used: its program `no-such-ai-program-4711` (the first word of ai-command) "
                "is not found on PATH or is not executable"
            ),
            "help: install the program, or fix ai-command in ~/.config/catalyst/config.toml",
        ),
        (
            'ai-adapters = ["openai"]\nopenai-base-url = "http://127.0.0.1:9/v1"\n',
            "the openai AI adapter has no model: the step names none and openai-model is not set",
            "help: set openai-model in catalyst.toml, or `model:` on the step",
        ),
    ],
)
def test_a_configured_but_unusable_adapter_stops_the_run_before_any_step(project, monkeypatch, settings, said, fix):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _configure(project, settings)
    project.playbook("asks", ASKS)
    result = project.run("asks")
    _refused(project, result, "error: step first (line 6) cannot get its AI adapter: ", said, "; nothing was run", fix)
    # Every step that cannot get its adapter is listed, not only the first.
    assert "step second (line 8): " in result.output


def test_a_key_for_a_plain_http_server_elsewhere_stops_the_run_before_any_step(project, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-4711")
    project.settings('ai-adapters = ["openai"]\nopenai-model = "m"\n')
    project.user_settings('openai-base-url = "http://ai.example.com/v1"\n')
    project.playbook("asks", ASKS)
    result = project.run("asks")
    _refused(
        project,
        result,
        "cannot be used: the OpenAI-compatible server at ai.example.com is reached over plain http://",
        "help: fix openai-base-url in ~/.config/catalyst/config.toml: use an https:// URL, or a server on this machine",
    )
    assert "sk-test-key-4711" not in result.output


def test_a_step_naming_an_unconfigured_built_in_adapter_is_refused(project, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    project.playbook(
        "named",
        """
        name: named
        description: a prompt to the command adapter, which is not set up
        owner: Engineer
        steps:
          - log-info: "before the prompts"
          - name: asked
            ai-prompt:
              prompt: Say hi
              provider: command
    """,
    )
    _refused(
        project,
        project.run("named"),
        "AI provider 'command' cannot be used: the ai-command setting is not set",
        'help: set ai-command in ~/.config/catalyst/config.toml, e.g. ai-command = ["llm", "-m", "gpt-4o"]',
    )


def test_a_provider_chosen_by_a_template_is_refused_at_its_step(project):
    project.playbook(
        "templated",
        """
        name: templated
        description: the provider comes from an input
        owner: Engineer
        inputs:
          - name: via
            type: string
        steps:
          - log-info: "before the prompt"
          - name: asked
            ai-prompt:
              prompt: Say hi
              provider: "{{via}}"
    """,
    )
    result = project.run("templated", via="openai")
    assert result.exit_code == 2, result.output
    assert "before the prompt" in result.output and "mock answer" not in result.output
    assert project.snapshot()["error"]["code"] == "AIAdapterUnavailable"
    assert "the openai-base-url setting is not set" in project.snapshot()["error"]["message"]


def test_with_nothing_configured_the_mock_answers_and_the_run_says_so_once(project):
    project.playbook("asks", ASKS)
    result = project.run("asks")
    assert result.exit_code == 0, result.output
    assert result.output.count(MOCK_NOTICE) == 1 and f"note: {MOCK_NOTICE}" in result.output
    assert "mock answer to: Say hi / mock answer to: Say bye" in result.output
    logged = project.run("asks", "--log-format", "json")
    notices = [json.loads(line) for line in logged.output.splitlines() if line.startswith("{") and '"notice"' in line]
    assert [(n["event"], n["level"], n["message"]) for n in notices] == [("notice", "info", f"note: {MOCK_NOTICE}")]
    assert notices[0]["runId"]


def test_a_playbook_without_ai_steps_or_naming_the_mock_says_nothing(project):
    project.settings('ai-adapters = ["openai"]\n')  # unusable, but no step asks an AI
    project.playbook(
        "quiet",
        """
        name: quiet
        description: no prompt at all
        owner: Engineer
        steps:
          - log-info: "hello"
    """,
    )
    result = project.run("quiet")
    assert result.exit_code == 0, result.output
    project.settings("")
    project.playbook(
        "chosen",
        """
        name: chosen
        description: the mock by name
        owner: Engineer
        steps:
          - ai-prompt:
              prompt: Say hi
              provider: mock
    """,
    )
    result = project.run("chosen")
    assert result.exit_code == 0 and MOCK_NOTICE not in result.output, result.output


def test_ai_command_alone_configures_the_command_adapter(project):
    reverse = [sys.executable, "-c", "import sys; print(sys.stdin.read().strip()[::-1])"]
    project.user_settings(f"ai-command = {json.dumps(reverse)}\n")
    project.playbook("asks", ASKS)
    result = project.run("asks")
    assert result.exit_code == 0, result.output
    assert "ih yaS\n / eyb yaS\n" in result.output and MOCK_NOTICE not in result.output


def test_what_the_settings_configure():
    assert precedence(ProjectConfig()) == ()
    assert precedence(ProjectConfig(ai_adapters=("claude", "openai"), ai_command=("x",))) == ("claude", "openai")
    assert precedence(ProjectConfig(ai_command=("x",), openai_base_url="http://localhost:1")) == ("command", "openai")
    none = lambda name: None  # noqa: E731
    local = ProjectConfig(ai_command=(sys.executable,), openai_base_url="http://localhost:8080/v1")
    assert unusable_adapters(local, none, environ={}) == {}
    for host in ("127.0.0.1", "[::1]", "ollama.localhost"):
        assert "openai" not in unusable_adapters(ProjectConfig(openai_base_url=f"http://{host}:1"), none, environ={})
    remote = ProjectConfig(openai_base_url="https://api.example.com")
    assert "openai" in unusable_adapters(remote, none, environ={})
    assert "openai" not in unusable_adapters(remote, none, environ={"OPENAI_API_KEY": "sk-x"})
    assert "openai" not in unusable_adapters(remote, {"openai-api-key": "sk-y"}.get, environ={})
