"""Steps marked `cache:` reuse a result kept for the same action, config and adapter:
sealed with the run key, never for a config holding a secret, never in a what-if, and
only on steps whose effects a reused result cannot skip (C831)."""

from __future__ import annotations

import json

from catalyst_dsl.runtime.state.result_cache import FOLDER, ResultCache, material

ASK = """
name: ask
description: asks, reusing an answer for a day
owner: Engineer
inputs:
  - string: topic
    default: search
steps:
  - name: answer
    ai-prompt: "Summarise {{topic}}"
    cache: true
  - log-info: "{{answer}}"
"""

SECRET_ASK = """
name: ask
description: asks with a token in the prompt
owner: Engineer
inputs:
  - string: token
    secret: true
steps:
  - name: answer
    ai-prompt: "Summarise with {{token}}"
    cache: true
"""

REUSED = "stands in for running it again (cache:)"


def entries(project) -> list:
    folder = project.state_dir / FOLDER
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def test_the_same_step_reuses_its_answer_and_another_config_does_not(project):
    project.playbook("ask", ASK)
    first = project.run("ask", "--mode", "autonomous")
    assert first.exit_code == 0 and REUSED not in first.output and "│ mock answer to: Summarise search" in first.output
    second = project.run("ask", "--mode", "autonomous")
    assert second.exit_code == 0 and REUSED in second.output, second.output
    assert "│ mock answer" not in second.output and "[info] mock answer to: Summarise search" in second.output
    other = project.run("ask", "--mode", "autonomous", topic="graphs")
    assert REUSED not in other.output and len(entries(project)) == 2


def test_a_config_holding_a_secret_is_never_kept(project):
    project.playbook("ask", SECRET_ASK)
    result = project.run("ask", "--mode", "autonomous", token="s3cr3t-token")
    assert result.exit_code == 0
    assert "not cached: its config holds a secret" in result.output
    assert entries(project) == []


def test_a_what_if_neither_reads_nor_writes_the_kept_results(project):
    project.playbook("ask", ASK)
    assert project.run("ask", "--what-if").exit_code == 0
    assert entries(project) == []


def test_an_entry_catalyst_did_not_write_is_never_read(project):
    project.playbook("ask", ASK)
    assert project.run("ask", "--mode", "autonomous").exit_code == 0
    [entry] = entries(project)
    data = json.loads(entry.read_text())
    body = json.loads(data["body"])
    body["result"] = "an answer of the repository's choosing"
    entry.write_text(json.dumps({"body": json.dumps(body), "mac": data["mac"]}))
    rerun = project.run("ask", "--mode", "autonomous")
    assert REUSED not in rerun.output and "repository's choosing" not in rerun.output


def test_entries_expire_and_are_sealed_by_the_key(tmp_path):
    cache = ResultCache(tmp_path, b"k" * 32)
    key = material("ai-prompt", {"prompt": "x"})
    cache.put(key, {"text": "hi"}, 60.0, now=1000.0)
    assert cache.get(key, now=1059.0) == ({"text": "hi"}, 1000.0)
    assert cache.get(key, now=1060.0) is None
    assert ResultCache(tmp_path, b"j" * 32).get(key, now=1001.0) is None
    assert cache.get(material("ai-prompt", {"prompt": "y"}), now=1001.0) is None


def test_cache_clean_steps_removes_the_kept_results(project):
    project.playbook("ask", ASK)
    assert project.run("ask", "--mode", "autonomous").exit_code == 0
    cleaned = project.cli("cache", "clean", "--steps")
    assert cleaned.exit_code == 0 and "removed 1 kept step result(s)" in cleaned.output
    assert entries(project) == []


def test_cache_on_a_step_whose_effects_would_be_skipped_is_an_error(project):
    project.playbook(
        "bad",
        """
        name: bad
        description: caches a write
        owner: Engineer
        steps:
          - file-write: out.txt
            content: x
            cache: true
          - name: edit
            ai-prompt: "Fix it"
            tools: [read, edit]
            cache: 1h
    """,
    )
    checked = project.cli("check", "--no-cache", "playbooks/bad.yaml")
    assert checked.exit_code == 1
    assert "C831" in checked.output and "`file-write` changes files" in checked.output
    assert "its AI is given tools that change things (edit)" in checked.output


def test_a_result_holding_a_secret_is_never_kept(project):
    # The prompt holds no secret, but the answer echoes one (an agent that read it).
    project.user_settings('ai-command = ["/bin/sh", "-c", "cat >/dev/null; echo s3cr3t-tokenabcdef"]\n')
    project.playbook(
        "ask",
        SECRET_ASK.replace('"Summarise with {{token}}"', '"Summarise"'),
    )
    result = project.run("ask", "--mode", "autonomous", token="s3cr3t-tokenabcdef")
    assert result.exit_code == 0, result.output
    assert "not cached: its result holds a secret" in result.output
    assert entries(project) == []


def test_an_edited_prompt_file_is_asked_again(project):
    project.playbook(
        "ask",
        """
        name: ask
        description: asks what a file says
        owner: Engineer
        steps:
          - name: answer
            ai-prompt:
              promptFile: prompts/question.md
            cache: true
        """,
    )
    project.write("prompts/question.md", "first question")
    assert REUSED not in project.run("ask", "--mode", "autonomous").output
    assert REUSED in project.run("ask", "--mode", "autonomous").output
    project.write("prompts/question.md", "second question")
    again = project.run("ask", "--mode", "autonomous")
    assert REUSED not in again.output and "mock answer to: second question" in again.output


def test_a_plugins_ai_action_may_not_reuse_a_result():
    from catalyst_dsl.actions.caching import refusal
    from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf
    from catalyst_dsl.ir import nodes as ir
    from catalyst_dsl.ir.types import ANY, obj

    spec = ActionSpec(
        "ai-fix", "ai", "asks an AI, then pushes its fix", obj(), None, ANY, Effect.EXTERNAL, WhatIf.UNKNOWN
    )
    step = ir.Step(action="ai-fix", config=ir.MapV(()))
    assert "runs a program" in refusal(step, spec)


def test_no_result_is_kept_or_reused_with_the_key_kept_in_the_state_directory(project, tmp_path, monkeypatch):
    # A home where the key cannot be made: the run falls back to a key in the state
    # directory, which a repository could commit together with an entry it sealed.
    (tmp_path / "not-a-directory").write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "not-a-directory" / "config"))
    monkeypatch.delenv("CATALYST_RUN_KEY", raising=False)
    project.playbook("ask", ASK)
    assert project.run("ask", "--mode", "autonomous").exit_code == 0
    second = project.run("ask", "--mode", "autonomous")
    assert second.exit_code == 0 and REUSED not in second.output
    assert entries(project) == []


def test_a_link_in_place_of_the_folder_is_never_written_through(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / FOLDER).symlink_to(elsewhere)
    cache = ResultCache(tmp_path / "state" / FOLDER, b"k" * 32)
    key = material("ai-prompt", {"prompt": "x"})
    cache.put(key, {"text": "hi"}, 60.0, now=1000.0)
    assert list(elsewhere.iterdir()) == [] and cache.get(key, now=1001.0) is None


def test_cache_clean_steps_removes_nothing_but_entries_and_never_through_a_link(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "package.json").write_text("{}", encoding="utf-8")
    project.state_dir.mkdir(parents=True, exist_ok=True)
    (project.state_dir / FOLDER).symlink_to(elsewhere)
    cleaned = project.cli("cache", "clean", "--steps")
    assert cleaned.exit_code == 0 and "removed 0 kept step result(s)" in cleaned.output
    assert (elsewhere / "package.json").exists()
    (project.state_dir / FOLDER).unlink()
    (project.state_dir / FOLDER).mkdir()
    (project.state_dir / FOLDER / "notes.json").write_text("{}", encoding="utf-8")
    assert "removed 0 kept step result(s)" in project.cli("cache", "clean", "--steps").output
    assert (project.state_dir / FOLDER / "notes.json").exists()
