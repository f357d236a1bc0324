"""The AI adapter found in the environment when the settings configure none: claude or
llm on PATH, else OPENAI_API_KEY with OPENAI_MODEL; said once by the run and by the
what-if, never written into a plan, and never a program the repository planted."""

from __future__ import annotations

import os
import stat
from types import SimpleNamespace

import pytest

from catalyst_dsl.runtime.adapters.detection import OPENAI_API, detect

ASKS = """
name: asks
description: one prompt
owner: Engineer
steps:
  - name: answer
    ai-prompt: "Say hi"
  - log-info: "{{answer}}"
"""


def program(directory, name: str, script: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def settings(**given):
    base = dict(ai_detect=True, ai_adapters=(), ai_command=(), openai_base_url=None, openai_model=None)
    return SimpleNamespace(**{**base, **given})


def test_claude_on_path_comes_first(tmp_path):
    program(tmp_path / "bin", "claude", "cat\n")
    program(tmp_path / "bin", "llm", "cat\n")
    found = detect(settings(), {"PATH": str(tmp_path / "bin"), "OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"})
    assert (found.adapter, found.settings, found.because) == (
        "command",
        {"ai_command": (str(tmp_path / "bin" / "claude"), "-p")},
        "claude on PATH",
    )


def test_openai_needs_a_key_and_a_model():
    assert detect(settings(), {"PATH": "", "OPENAI_API_KEY": "k"}) is None
    found = detect(settings(), {"PATH": "", "OPENAI_API_KEY": "k", "OPENAI_MODEL": "gpt-x"})
    assert found.settings == {"openai_base_url": OPENAI_API, "openai_model": "gpt-x"}


@pytest.mark.parametrize(
    "given",
    [
        {"ai_detect": False},
        {"ai_adapters": ("mock",)},
        {"ai_command": ("my-ai",)},
        {"openai_model": "m"},
    ],
)
def test_any_adapter_setting_or_ai_detect_false_turns_it_off(tmp_path, given):
    program(tmp_path / "bin", "claude", "cat\n")
    assert detect(settings(**given), {"PATH": str(tmp_path / "bin")}) is None


def test_a_program_inside_the_project_or_on_a_relative_path_is_never_taken(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    program(root / "tools", "claude", "echo planted\n")
    monkeypatch.chdir(root)
    assert detect(settings(), {"PATH": f"{root / 'tools'}{os.pathsep}tools{os.pathsep}."}, root=root) is None


def test_a_run_uses_the_detected_program_and_says_so(project, tmp_path, monkeypatch):
    program(tmp_path / "bin", "claude", 'echo "claude answers: $(cat)"\n')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    project.playbook("asks", ASKS)
    result = project.run("asks", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "AI steps use the command adapter (`claude -p`), found in the environment (claude on PATH)" in result.output
    assert "claude answers: Say hi" in result.output and "mock answer" not in result.output


def test_the_what_if_says_which_adapter_a_run_would_use_and_the_plan_does_not_change(project, tmp_path, monkeypatch):
    project.playbook("asks", ASKS)
    plain = project.run("asks", "--what-if", "--format", "json")
    program(tmp_path / "bin", "claude", "cat\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    detected = project.run("asks", "--what-if", "--format", "json")
    assert plain.exit_code == detected.exit_code == 0, detected.output
    said = "a run's AI steps would use the command adapter (`claude -p`)"
    assert said in detected.stderr and said not in plain.stderr
    assert detected.stdout == plain.stdout


def test_ai_detect_false_keeps_the_mock(project, tmp_path, monkeypatch):
    program(tmp_path / "bin", "claude", "echo planted\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    project.settings("ai-detect = false\n")
    project.playbook("asks", ASKS)
    result = project.run("asks", "--mode", "autonomous")
    assert result.exit_code == 0 and "mock answer to: Say hi" in result.output


@pytest.mark.parametrize("first", ["inside", "relative"])
def test_the_program_found_is_the_one_run_not_one_earlier_on_path(project, tmp_path, monkeypatch, first):
    # Detection skips the project's directory; the run must not look the name up again
    # on the whole PATH, where the repository's own `claude` comes first.
    program(tmp_path / "bin", "claude", 'echo "claude answers: $(cat)"\n')
    program(project.root / "tools", "claude", "echo planted\n")
    entry = str(project.root / "tools") if first == "inside" else "tools"
    monkeypatch.setenv("PATH", os.pathsep.join([entry, str(tmp_path / "bin"), os.environ["PATH"]]))
    project.playbook("asks", ASKS)
    result = project.run("asks", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "claude answers: Say hi" in result.output and "planted" not in result.output


def test_a_program_linked_into_the_project_is_never_taken(project, tmp_path, monkeypatch):
    program(project.root / "tools", "claude", "echo planted\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "claude").symlink_to(project.root / "tools" / "claude")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    project.playbook("asks", ASKS)
    result = project.run("asks", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "planted" not in result.output and "mock answer to: Say hi" in result.output


@pytest.mark.parametrize("provider", ["command", "\"{{which}}\""])
def test_a_step_naming_the_detected_adapter_is_told_too(project, tmp_path, monkeypatch, provider):
    program(tmp_path / "bin", "claude", 'echo "claude answers: $(cat)"\n')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    named = ASKS.replace('    ai-prompt: "Say hi"\n', f'    ai-prompt: "Say hi"\n    provider: {provider}\n')
    project.playbook("asks", named.replace("steps:", "inputs:\n  - string: which\n    default: command\nsteps:"))
    result = project.run("asks", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert "claude answers: Say hi" in result.output
    assert result.output.count("AI steps use the command adapter (`claude -p`), found in the environment") == 1


def test_the_what_if_says_so_for_a_step_naming_the_detected_adapter(project, tmp_path, monkeypatch):
    program(tmp_path / "bin", "claude", "cat\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    project.playbook(
        "asks", ASKS.replace('    ai-prompt: "Say hi"\n', '    ai-prompt: "Say hi"\n    provider: command\n')
    )
    planned = project.run("asks", "--what-if", "--format", "json")
    assert planned.exit_code == 0, planned.output
    assert "a run's AI steps would use the command adapter (`claude -p`)" in planned.stderr
