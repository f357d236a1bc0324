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

import pytest

from tests.helpers.corpus import SHARED_CORPUS

CORPUS = SHARED_CORPUS / "catalyst"
KITCHEN_SINK = CORPUS / "cli-commands" / "kitchen-sink.yaml"

needs_node = pytest.mark.skipif(
    shutil.which("node") is None, reason="script steps run JavaScript with node, which is not installed"
)


def outputs(project) -> dict:
    snap = project.snapshot()
    assert snap["status"] == "completed", snap.get("error")
    return snap["outputs"]


# -- get('xe://…') reads the file; a missing one is undefined ------------------------------------------


def test_get_with_a_protocol_path_is_the_file_content_and_undefined_when_missing(project):
    project.write(".xe/notes.md", "twelve chars")
    project.playbook(
        "reader",
        """
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
    """,
    )
    result = project.run("reader")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {
        "length": 12,
        "text": "twelve chars",
        "scratch": "scratch",
        "missing": True,
        "undefined": True,
    }


# -- protocol paths find their file by extension, as the original engine does ------------------------


def test_protocol_paths_try_md_then_json_when_the_path_itself_is_missing(project):
    project.write(".xe/product.md", "# Product\n")
    project.write(".xe/settings.json", '{"a": 1}')
    project.write(".xe/both", "plain")
    project.write(".xe/both.md", "markdown")
    project.playbook(
        "found",
        """
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
    """,
    )
    result = project.run("found")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {
        "product": "# Product\n",
        "settings": {"a": 1},
        "both": "plain",
        "exists": True,
        "path": ".xe/product.md",
        "missing-path": ".xe/nothing",
        "on-disk": "yes\n",
    }


def test_a_protocol_path_found_by_neither_extension_is_still_file_not_found(project):
    project.playbook(
        "absent",
        """
        name: absent
        description: nothing to find
        owner: Engineer
        steps:
          - file-read: xe://absent
    """,
    )
    result = project.run("absent")
    assert result.exit_code == 2
    assert "FileNotFound: 'xe://absent' does not exist" in result.output


def test_an_extension_candidate_is_checked_like_the_path_itself(project, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    (project.root / ".xe").mkdir()
    (project.root / ".xe" / "leak.md").symlink_to(outside)
    project.playbook(
        "leak",
        """
        name: leak
        description: a candidate that leads outside
        owner: Engineer
        steps:
          - file-read: xe://leak
    """,
    )
    result = project.run("leak")
    assert result.exit_code == 2
    assert "secret" not in result.output
    assert "FileNotFound" in result.output  # the candidate does not count as found; the path itself is missing


def test_without_resources_reading_catalyst_paths_says_where_to_set_them(project):
    project.playbook(
        "resource",
        """
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
    """,
    )
    result = project.run("resource")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {
        "said": "cannot read 'catalyst://standards/auq': this project has no catalyst:// resources"
    }
    unguarded = project.playbook(
        "unguarded",
        """
        name: unguarded
        description: reads a resource without a handler
        owner: Engineer
        steps:
          - file-read: catalyst://standards/auq
    """,
    )
    assert unguarded.is_file()
    failed = project.run("unguarded")
    assert failed.exit_code == 2
    assert "set `resources-dir` in catalyst.toml" in failed.output


RESOURCES = """
    name: resources
    description: every way to read a resource
    owner: Engineer
    steps:
      - name: text
        file-read: catalyst://standards/auq
      - name: listed
        file-list:
          path: catalyst://playbooks
          pattern: "*.md"
      - name: absolute
        file-list:
          path: catalyst://standards
          relativeTo: absolute
      - name: again
        file-read: "{{listed.0}}"
      - name: exists
        file-exists: catalyst://standards/auq
      - name: missing
        file-exists: catalyst://standards/none
      - return:
          text: "{{text}}"
          got: ${{ get('catalyst://standards/auq') }}
          path: "{{catalyst://standards/auq}}"
          listed: "{{listed}}"
          absolute: "{{absolute}}"
          again: "{{again}}"
          exists: "{{exists}}"
          missing: "{{missing}}"
"""


def test_resources_are_read_from_the_resources_dir_setting_even_outside_the_project(project, tmp_path):
    shared = tmp_path / "shared-resources"
    (shared / "standards").mkdir(parents=True)
    (shared / "playbooks").mkdir()
    (shared / "standards" / "auq.md").write_text("ask well", encoding="utf-8")
    (shared / "playbooks" / "a.md").write_text("# A", encoding="utf-8")
    project.user_settings(f'resources-dir = "{shared.as_posix()}"\n')
    project.playbook("resources", RESOURCES)
    result = project.run("resources")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {
        "text": "ask well",
        "got": "ask well",
        "path": str(shared.resolve() / "standards" / "auq.md"),
        "listed": ["catalyst://playbooks/a.md"],
        "absolute": [str(shared.resolve() / "standards" / "auq.md")],
        "again": "# A",
        "exists": True,
        "missing": False,
    }


def test_without_a_setting_resources_are_the_original_engines_npm_package(project):
    package = "node_modules/@xerilium/catalyst"
    project.write(f"{package}/standards/auq.md", "ask well")
    project.write(f"{package}/playbooks/a.md", "# A")
    project.playbook("resources", RESOURCES)
    result = project.run("resources")
    assert result.exit_code == 0, result.output
    final = outputs(project)
    assert final["text"] == "ask well" and final["listed"] == ["catalyst://playbooks/a.md"]
    assert final["path"] == f"{package}/standards/auq.md"  # inside the project: project-relative


def test_resources_are_never_written_and_never_left(project, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("not a resource", encoding="utf-8")
    package = project.root / "node_modules/@xerilium/catalyst"
    (package / "standards").mkdir(parents=True)
    (package / "standards" / "leak.md").symlink_to(outside)
    project.write("node_modules/@xerilium/catalyst/standards/auq.md", "ask well")
    # Writes are refused before the run (C812); a computed path would be refused when it runs.
    for name, step, code, said in [
        (
            "write",
            "{file-write: 'catalyst://standards/auq.md', content: changed}",
            1,
            "catalyst:// holds catalyst's own resources, which are read-only",
        ),
        (
            "delete",
            "file-delete: catalyst://standards/auq.md",
            1,
            "catalyst:// holds catalyst's own resources, which are read-only",
        ),
        (
            "computed",
            "{file-write: \"{{inputs.where}}\", content: changed}",
            2,
            "catalyst:// holds catalyst's own resources, which are read-only",
        ),
        (
            "link",
            "file-read: catalyst://standards/leak.md",
            2,
            "a symbolic link leads it outside the resources directory",
        ),
    ]:
        project.playbook(
            name,
            f"""
            name: {name}
            description: tries to get around the resources' walls
            owner: Engineer
            inputs:
              - string: where
                default: catalyst://standards/auq.md
            steps:
              - {step}
        """,
        )
        result = project.run(name)
        assert result.exit_code == code, (name, result.output)
        assert said in result.output, (name, result.output)
        assert "not a resource" not in result.output
    assert project.read("node_modules/@xerilium/catalyst/standards/auq.md") == "ask well"
    # `..` is refused where it is written (the checker); a computed one stays inside:
    # catalyst://standards/../../x is the resources' own x.
    project.write("node_modules/@xerilium/catalyst/x.md", "inner")
    project.playbook(
        "dots",
        """
        name: dots
        description: climbs with ..
        owner: Engineer
        inputs:
          - string: where
            default: catalyst://standards/../../x.md
        steps:
          - name: got
            file-read: "{{inputs.where}}"
          - return:
              got: "{{got}}"
    """,
    )
    dots = project.run("dots")
    assert dots.exit_code == 0, dots.output
    run_id = dots.output.split(" · run ", 1)[1].split()[0]
    assert project.snapshot(run_id)["outputs"] == {"got": "inner"}


def test_resources_inside_the_project_cannot_be_written_by_their_project_path_either(project):
    project.write("node_modules/@xerilium/catalyst/standards/auq.md", "ask well")
    for name, step in [
        ("direct", "{file-write: 'node_modules/@xerilium/catalyst/standards/auq.md', content: changed}"),
        ("placed", "{file-write: '{{catalyst://standards/auq}}', content: changed}"),
        ("deleted", "{file-delete: '{{catalyst://standards/auq}}'}"),
    ]:
        project.playbook(
            name,
            f"""
            name: {name}
            description: writes into the resources through the project
            owner: Engineer
            steps:
              - {step}
        """,
        )
        result = project.run(name)
        assert result.exit_code == 2, (name, result.output)
        assert "is in the catalyst:// resources directory, which is read-only" in result.output
    assert project.read("node_modules/@xerilium/catalyst/standards/auq.md") == "ask well"


def test_hostile_resource_paths_fail_as_steps_never_as_tracebacks(project):
    package = project.root / "node_modules/@xerilium/catalyst"
    package.mkdir(parents=True)
    (package / "loop").symlink_to("loop")
    project.playbook(
        "hostile",
        """
        name: hostile
        description: paths that cannot be read
        owner: Engineer
        inputs:
          - string: nul
            default: "standards/a\\u0000b"
        steps:
          - var: nul-said
            value: ""
          - name: exists
            file-exists: "catalyst://{{inputs.nul}}"
          - try:
              - return:
                  got: ${{ get('catalyst://' + inputs.nul) }}
            catch:
              - code: FileNotFound
                steps:
                  - var: nul-said
                    value: "{{$error.message}}"
          - try:
              - return:
                  got: ${{ get('catalyst://loop') }}
            catch:
              - code: PermissionDenied
                steps:
                  - return:
                      exists: "{{exists}}"
                      nul: "{{nul-said}}"
                      loop: "{{$error.message}}"
    """,
    )
    result = project.run("hostile")
    assert result.exit_code == 0, result.output
    final = outputs(project)
    assert final["exists"] is False
    assert "holds a NUL character" in final["nul"]
    # A loop of links is refused like a link out: the walk beneath the resources never ends.
    assert final["loop"] == "cannot read 'catalyst://loop': its symbolic links form a loop (or nest too deeply)"


def test_a_failed_runs_fix_follows_its_last_line_and_is_a_json_field(project):
    import json

    project.playbook(
        "fails",
        """
        name: fails
        description: fails with guidance
        owner: Engineer
        steps:
          - throw: BadThing
            message: it broke
            guidance: |
              first do this
              then that
    """,
    )
    result = project.run("fails")
    assert result.exit_code == 2
    assert result.output.splitlines()[-3:] == [
        result.output.splitlines()[-3],
        "  fix: first do this",
        "       then that",
    ]
    assert result.output.splitlines()[-3].endswith("BadThing: it broke")
    as_json = project.run("fails", "--log-format", "json")
    last = json.loads(as_json.output.strip().splitlines()[-1])
    assert last["message"].endswith("BadThing: it broke") and last["guidance"] == "first do this\nthen that\n"


# -- cwd: an absolute directory is taken as meant ----------------------------------------------------


def test_an_absolute_working_directory_is_used_and_a_relative_one_stays_in_the_project(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    project.playbook(
        "places",
        f"""
        name: places
        description: programs started outside the project
        owner: Engineer
        steps:
          - name: where
            bash: pwd
            cwd: {elsewhere.as_posix()}
          - return:
              where: "{{{{where.stdout}}}}"
    """,
    )
    result = project.run("places")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"where": f"{elsewhere.resolve()}\n"}
    for name, cwd, said in [
        ("missing", (tmp_path / "no-such-dir").as_posix(), "FileNotFound: the working directory"),
        ("missing-inside", "no/such/dir", "does not exist or is not a directory"),
        ("climbing", "../..", "PermissionDenied: the working directory '../..' climbs out of the project"),
        ("resource", "catalyst://standards", "catalyst:// holds catalyst's own resources"),
    ]:
        project.playbook(
            name,
            f"""
            name: {name}
            description: a bad working directory
            owner: Engineer
            steps:
              - bash: pwd
                cwd: {cwd}
        """,
        )
        failed = project.run(name)
        assert failed.exit_code == 2, failed.output
        assert said in failed.output, failed.output


# -- json-read: malformed JSON is JsonParseError ---------------------------------------------------------


def test_malformed_json_is_json_parse_error_which_a_catch_matches(project):
    project.write("bad.json", "{ not actually json")
    project.playbook(
        "parse",
        """
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
    """,
    )
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
    project.playbook(
        "logged",
        """
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
    """,
    )
    result = project.run("logged")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"all": 4, "warnings": 2, "error": "four", "none": 0}


# -- playbook: temp://… runs the playbook the run wrote there ----------------------------------------


def test_a_playbook_written_to_temp_is_checked_then_run(project):
    project.playbook(
        "parent",
        r"""
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
    """,
    )
    result = project.run("parent")
    assert result.exit_code == 0, result.output
    assert outputs(project) == {"greeting": "hello Ann"}
    assert project.snapshot()["permissions"]["calls"]["child"] == {
        "file": "temp://child.yaml",
        "inheritPermissions": False,
    }


def test_a_broken_playbook_in_temp_is_refused_with_its_first_error(project):
    project.playbook(
        "parent",
        """
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
    """,
    )
    result = project.run("parent")
    assert result.exit_code == 2
    assert "InvalidPlaybook: temp://child.yaml has errors" in result.output


def test_a_playbook_never_written_to_temp_is_not_found(project):
    project.playbook(
        "parent",
        """
        name: parent
        description: calls what it never wrote
        owner: Engineer
        steps:
          - playbook: temp://never.yaml
    """,
    )
    result = project.run("parent")
    assert result.exit_code == 2
    assert "PlaybookNotFound" in result.output and "has not written it" in result.output


# -- the kitchen sink itself ---------------------------------------------------------------------------


@pytest.mark.skipif(not KITCHEN_SINK.is_file(), reason="the shared corpus is not beside this checkout")
@needs_node
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
    # The original engine's package, where npm installs it: catalyst:// reads from there.
    project.write("node_modules/@xerilium/catalyst/standards/auq.md", "# Asking the user questions\n")
    project.write("node_modules/@xerilium/catalyst/standards/style.md", "# Style\n")
    project.write("node_modules/@xerilium/catalyst/playbooks/create-feature.md", "# Create a feature\n")
    project.write("node_modules/@xerilium/catalyst/playbooks/actions/feature-spec.md", "# Write the spec\n")
    project.write("package.json", '{"name": "demo", "version": "1.0.0"}\n')

    checked = project.cli("check", "playbooks/kitchen-sink.yaml")
    assert checked.exit_code == 0, checked.output

    result = project.run(
        "kitchen-sink", "--mode", "autonomous", skip_ai="true", skip_checkpoints="true", skip_github="true"
    )
    assert result.exit_code == 0, result.output
    final = outputs(project)
    assert "error-encountered" not in final, result.output  # not ended by the catch-all
    assert final["success"] is True and final["actions-demonstrated-count"] == 39
    assert "Child playbook says: Hello from the nested playbook! AwesomeSauce Launch Team" in result.output
    assert "DNS resolution failed" in result.output or "Network error" in result.output
