"""The corpus's kitchen-sink playbook, run offline, and the runtime fixes it called for.

Issue 6: "The kitchen-sink playbook from ../shared/corpus/catalyst/cli-commands/ runs
offline to completion with its skip inputs set, where node is available." The playbook
ends in a `catch: default` that returns `success: true` whatever failed, so an exit code
of 0 alone proves nothing: the run must end through its own final `return`, without
`error-encountered`.

Each fix the playbook needed has a focused test below, on a small playbook of its own.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "catalyst"
KITCHEN_SINK = CORPUS / "cli-commands" / "kitchen-sink.yaml"

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="script steps run JavaScript with node, which is not installed")


def outputs(project) -> dict:
    snap = project.snapshot()
    assert snap["status"] == "completed", snap.get("error")
    return snap["outputs"]


# -- get('xe://…') reads the file; a missing one is undefined ------------------------------------------


def test_get_with_a_protocol_path_is_the_file_content_and_undefined_when_missing(project):
    project.write(".xe/notes.md", "twelve chars")
    project.playbook("reader", """
        name: reader
        description: get() on protocol paths
        owner: Engineer
        steps:
          - file-write: temp://scratch.txt
            content: scratch
          - return:
              length: ${{ get('xe://notes.md').length }}
              text: ${{ get('xe://notes') }}
              scratch: ${{ get('temp://scratch.txt') }}
              missing: ${{ !get('xe://no-such-file') }}
              undefined: ${{ get('xe://no-such-file') === undefined }}
    """)
    result = project.run("reader")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"length": 12, "text": "twelve chars", "scratch": "scratch", "missing": True,
                                "undefined": True}


# -- protocol paths find their file by extension, as the original engine does ------------------------


def test_protocol_paths_try_md_then_json_when_the_path_itself_is_missing(project):
    project.write(".xe/product.md", "# Product\n")
    project.write(".xe/settings.json", '{"a": 1}')
    project.write(".xe/both", "plain")
    project.write(".xe/both.md", "markdown")
    project.playbook("found", """
        name: found
        description: extension auto-detection
        owner: Engineer
        steps:
          - name: product
            file-read: xe://product
          - name: settings
            json-read: xe://settings
          - name: both
            file-read: xe://both
          - name: exists
            file-exists: xe://product
          - name: on-disk
            bash: test -f "{{xe://product}}" && echo yes
          - return:
              product: "{{product}}"
              settings: "{{settings}}"
              both: "{{both}}"
              exists: "{{exists}}"
              path: "{{xe://product}}"
              missing-path: "{{xe://nothing}}"
              on-disk: "{{on-disk.stdout}}"
    """)
    result = project.run("found")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"product": "# Product\n", "settings": {"a": 1}, "both": "plain", "exists": True,
                                "path": ".xe/product.md", "missing-path": ".xe/nothing", "on-disk": "yes\n"}


def test_a_protocol_path_found_by_neither_extension_is_still_file_not_found(project):
    project.playbook("absent", """
        name: absent
        description: nothing to find
        owner: Engineer
        steps:
          - file-read: xe://absent
    """)
    result = project.run("absent")
    assert result.exit_code == 2
    assert "FileNotFound: 'xe://absent' does not exist" in result.output


def test_an_extension_candidate_is_checked_like_the_path_itself(project, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    (project.root / ".xe").mkdir()
    (project.root / ".xe" / "leak.md").symlink_to(outside)
    project.playbook("leak", """
        name: leak
        description: a candidate that leads outside
        owner: Engineer
        steps:
          - file-read: xe://leak
    """)
    result = project.run("leak")
    assert result.exit_code == 2
    assert "secret" not in result.output
    assert "FileNotFound" in result.output  # the candidate does not count as found; the path itself is missing


def test_reading_a_catalyst_resource_says_they_are_not_shipped(project):
    project.playbook("resource", """
        name: resource
        description: reads catalyst's own resources
        owner: Engineer
        steps:
          - try:
              - file-read: catalyst://standards/auq
            catch:
              - code: FileNotFound
                steps:
                  - return:
                      said: "{{$error.message}}"
    """)
    result = project.run("resource")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"said": "cannot read 'catalyst://standards/auq': catalyst:// resources are not shipped with this version of catalyst"}


# -- json-read: malformed JSON is JsonParseError ---------------------------------------------------------


def test_malformed_json_is_json_parse_error_which_a_catch_matches(project):
    project.write("bad.json", "{ not actually json")
    project.playbook("parse", """
        name: parse
        description: JsonParseError
        owner: Engineer
        steps:
          - try:
              - json-read: bad.json
            catch:
              - code: JsonParseError
                steps:
                  - return:
                      caught: "{{$error.code}}"
    """)
    result = project.run("parse")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"caught": "JsonParseError"}


# -- a named script step is the value its code returned ----------------------------------------------


SCRIPTED = """
    name: scripted
    description: a script's returned value and set() values
    owner: Engineer
    steps:
      - name: stamp
        script: |
          set('count', 5);
          return { n: 2, ok: true };
      - name: flag
        script: return get('stamp').ok && get('stamp.n') === 2;
      - checkpoint: "go on?"
      - return:
          stamp: "{{stamp}}"
          n: "{{stamp.n}}"
          flag: "{{flag}}"
          count: "{{count}}"
"""


@needs_node
def test_a_named_script_step_is_its_returned_value(project):
    project.playbook("scripted", SCRIPTED)
    result = project.run("scripted", "--mode", "autonomous")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"stamp": {"n": 2, "ok": True}, "n": 2, "flag": True, "count": 5}
    # The journal keeps what resume needs: the value and the set() values.
    assert project.step("stamp")["result"] == {"result": {"n": 2, "ok": True}, "set": {"count": 5}}


@needs_node
def test_a_script_step_restored_on_resume_is_its_returned_value_too(project):
    project.playbook("scripted", SCRIPTED)
    assert project.run("scripted").exit_code == 4
    run_id = project.run_id()
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert outputs(project) == {"stamp": {"n": 2, "ok": True}, "n": 2, "flag": True, "count": 5}


# -- logs(level) ---------------------------------------------------------------------------------------


def test_logs_with_a_level_keeps_only_that_level(project):
    project.playbook("logged", """
        name: logged
        description: logs() and logs(level)
        owner: Engineer
        steps:
          - log-info: one
          - log-warning: two
          - log-warning: three
          - log-error: four
          - return:
              all: ${{ logs().length }}
              warnings: ${{ logs('warning').length }}
              error: ${{ logs('error')[0].message }}
              none: ${{ logs('trace').length }}
    """)
    result = project.run("logged")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"all": 4, "warnings": 2, "error": "four", "none": 0}


# -- playbook: temp://… runs the playbook the run wrote there ----------------------------------------


def test_a_playbook_written_to_temp_is_checked_then_run(project):
    project.playbook("parent", r"""
        name: parent
        description: writes a playbook, then calls it
        owner: Engineer
        inputs:
          - string: who
            default: Ann
        steps:
          - file-write: temp://child.yaml
            content: |
              # written for {{who}}
              name: child
              description: a generated playbook
              owner: Engineer
              inputs:
                - string: name
              steps:
                - return:
                    greeting: "hello \{{name}}"
          - name: called
            playbook: temp://child.yaml
            inputs:
              name: "{{who}}"
          - return:
              greeting: "{{called.greeting}}"
    """)
    result = project.run("parent")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"greeting": "hello Ann"}
    assert project.snapshot()["permissions"]["calls"]["child"] == {"file": "temp://child.yaml", "inheritPermissions": False}


def test_a_broken_playbook_in_temp_is_refused_with_its_first_error(project):
    project.playbook("parent", """
        name: parent
        description: writes a broken playbook, then calls it
        owner: Engineer
        steps:
          - file-write: temp://child.yaml
            content: |
              name: child
              description: no steps
              owner: Engineer
              steps: []
          - playbook: temp://child.yaml
    """)
    result = project.run("parent")
    assert result.exit_code == 2
    assert "InvalidPlaybook: temp://child.yaml has errors" in result.output


def test_a_playbook_never_written_to_temp_is_not_found(project):
    project.playbook("parent", """
        name: parent
        description: calls what it never wrote
        owner: Engineer
        steps:
          - playbook: temp://never.yaml
    """)
    result = project.run("parent")
    assert result.exit_code == 2
    assert "PlaybookNotFound" in result.output and "has not written it" in result.output


# -- the kitchen sink itself ---------------------------------------------------------------------------


@pytest.mark.skipif(not KITCHEN_SINK.is_file(), reason="the shared corpus is not beside this checkout")
@needs_node
@pytest.mark.xfail(strict=True, reason=(
    "open blockers (lines of kitchen-sink.yaml): catalyst:// resources are not shipped (auq-standard 308, "
    "catalyst-md-files 506, standards-absolute 516); `cwd: /tmp` is refused (directory-info 1025, env-test 1083)"))
def test_kitchen_sink_runs_offline_to_its_own_return(project, monkeypatch):
    # Offline for certain: every HTTP request goes to a proxy port nobody listens on.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    shutil.copyfile(KITCHEN_SINK, project.root / "playbooks" / "kitchen-sink.yaml")
    # What it reads from the project: its product doc (xe://product is .xe/product.md in a
    # Catalyst project) and the files Act II checks for.
    project.write(".xe/product.md", "# AwesomeSauce\n\nThe product the grand tour launches.\n")
    project.write("README.md", "# demo\n")
    project.write("package.json", '{"name": "demo", "version": "1.0.0"}\n')

    checked = project.cli("check", "playbooks/kitchen-sink.yaml")
    assert checked.exit_code == 0, checked.output

    result = project.run("kitchen-sink", "--mode", "autonomous", skip_ai="true", skip_checkpoints="true", skip_github="true")
    assert result.exit_code == 0, result.output
    final = outputs(project)
    assert "error-encountered" not in final, result.output  # not ended by the catch-all
    assert final["success"] is True and final["actions-demonstrated-count"] == 39
    assert "Child playbook says: Hello from the nested playbook! AwesomeSauce Launch Team" in result.output
    assert "DNS resolution failed" in result.output or "Network error" in result.output
