"""What `catalyst check` reports and how it exits: suppression comments, the `select`,
`ignore`, `severity` and `exclude` settings, `.gitignore`, --strict, --quiet, colour."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from catalyst_dsl.cli.main import cli

#: A playbook with one warning (C409, line 6) and no error.
SLOW = 'name: {name}\ndescription: x\nowner: Engineer\nsteps:\n  - display: "waiting"\n    timeout: 600000{tail}\n'


def make(tmp_path: Path, settings: str = "", **playbooks: str) -> Path:
    (tmp_path / "catalyst.toml").write_text(settings)
    (tmp_path / "playbooks").mkdir(exist_ok=True)
    for name, text in playbooks.items():
        path = tmp_path / "playbooks" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def check(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str, env: dict | None = None):
    monkeypatch.chdir(root)
    return CliRunner().invoke(cli, ["check", *args], env=env, catch_exceptions=False)


def codes(output: str) -> list[str]:
    return [
        line.split("]")[0].split("[")[1]
        for line in output.splitlines()
        if line.startswith(("error[", "warning[", "info["))
    ]


def test_trailing_comment_silences_its_line(tmp_path, monkeypatch) -> None:
    root = make(tmp_path, **{"slow.yaml": SLOW.format(name="slow", tail="  # catalyst: ignore[C409]")})
    result = check(root, monkeypatch)
    assert codes(result.output) == [] and result.exit_code == 0


def test_comment_alone_silences_the_next_line_only(tmp_path, monkeypatch) -> None:
    text = SLOW.format(name="slow", tail="").replace("    timeout", "    # catalyst: ignore[C409]\n    timeout")
    root = make(tmp_path, **{"slow.yaml": text, "other.yaml": SLOW.format(name="other", tail="")})
    result = check(root, monkeypatch)
    # The other file's C409 is not touched by a comment in slow.yaml.
    assert codes(result.output) == ["C409"] and "other.yaml:6:" in result.output


def test_file_suppression_and_several_codes(tmp_path, monkeypatch) -> None:
    text = "# catalyst: ignore-file[C817, C409]\n" + SLOW.format(name="slow", tail="") + '  - bash: "make"\n'
    result = check(make(tmp_path, **{"slow.yaml": text}), monkeypatch)
    assert codes(result.output) == []


def test_markdown_takes_html_comments(tmp_path, monkeypatch) -> None:
    text = "---\nname: notes\ndescription: x\nowner: Engineer\n---\n\n{comment}\n\n## Steps\n\nSay hello.\n"
    # The file has no C817: the HTML comment is read (and reported as unused).
    root = make(tmp_path, **{"notes.md": text.format(comment="<!-- catalyst: ignore-file[C817] -->")})
    result = check(root, monkeypatch)
    assert codes(result.output) == ["C040"] and "notes.md:7:" in result.output
    # A `#` line in Markdown is a heading, not a suppression.
    (tmp_path / "playbooks" / "notes.md").write_text(text.format(comment="# catalyst: ignore-file[C817]"))
    assert codes(check(tmp_path, monkeypatch).output) == []


def test_unused_and_unknown_suppressions_are_warnings(tmp_path, monkeypatch) -> None:
    text = SLOW.format(name="slow", tail="  # catalyst: ignore[C409, C502, C9O9]")
    result = check(make(tmp_path, **{"slow.yaml": text}), monkeypatch)
    assert codes(result.output) == ["C040", "C041"]
    assert "the suppression of C502 silences nothing: no C502 on line 6" in result.output
    assert "unknown code 'C9O9'" in result.output
    assert result.exit_code == 0
    assert check(tmp_path, monkeypatch, "--strict").exit_code == 1


def test_a_suppression_inside_a_value_is_data(tmp_path, monkeypatch) -> None:
    text = SLOW.format(name="slow", tail="").replace('"waiting"', '"50%#catalyst: ignore[C409]"')
    assert codes(check(make(tmp_path, **{"slow.yaml": text}), monkeypatch).output) == ["C409"]


def test_select_ignore_and_severity(tmp_path, monkeypatch) -> None:
    playbooks = {"slow.yaml": SLOW.format(name="slow", tail="") + '  - bash: "make"\n'}
    root = make(tmp_path, **playbooks)
    assert codes(check(root, monkeypatch).output) == ["C409", "C817"]
    make(tmp_path, 'ignore = ["C817"]\n')
    assert codes(check(root, monkeypatch).output) == ["C409"]
    make(tmp_path, 'select = ["C817"]\n')
    assert codes(check(root, monkeypatch).output) == ["C817"]
    make(tmp_path, 'severity.C409 = "error"\n')
    result = check(root, monkeypatch)
    assert "error[C409]" in result.output and result.exit_code == 1
    make(tmp_path, '[severity]\nC409 = "info"\n')
    result = check(root, monkeypatch, "--strict")
    assert "info[C409]" in result.output and result.exit_code == 0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ('select = ["C409", "C4O9"]\n', "setting 'select': unknown code 'C4O9'"),
        ('ignore = ["X1"]\n', "setting 'ignore': unknown code 'X1'"),
        ('severity.C409 = "fatal"\n', "setting 'severity': 'fatal' for C409 is not a severity"),
        ('severity.C999 = "error"\n', "setting 'severity': unknown code 'C999'"),
        ('exclude = ["/abs/**"]\n', "setting 'exclude': '/abs/**' is not a valid pattern"),
        ('exclude = "drafts"\n', "setting 'exclude': expected a list of strings"),
    ],
)
def test_bad_rule_settings_are_errors(tmp_path, monkeypatch, settings, message) -> None:
    root = make(tmp_path, settings, **{"slow.yaml": SLOW.format(name="slow", tail="")})
    result = check(root, monkeypatch)
    assert "error[C801]: " + message in result.output
    assert result.exit_code == 1
    # The bad setting keeps its default: the other findings are still reported.
    assert "C409" in codes(result.output)


def _user_config(tmp_path, monkeypatch, toml: str) -> None:
    home = tmp_path / "config-home"
    (home / "catalyst").mkdir(parents=True, exist_ok=True)
    (home / "catalyst" / "config.toml").write_text(toml, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))


def test_a_github_api_over_plain_http_to_another_machine_is_an_error(tmp_path, monkeypatch) -> None:
    # github-api-url is the user's own setting (a repository may not choose where the token goes)
    _user_config(tmp_path, monkeypatch, 'github-api-url = "http://github.example.com/api/v3"\n')
    root = make(tmp_path, "", **{"slow.yaml": SLOW.format(name="slow", tail="")})
    result = check(root, monkeypatch)
    assert "error[C801]: setting 'github-api-url' reaches github.example.com over plain http://" in result.output
    assert "help: use an https:// URL, or a server on this machine" in result.output
    assert result.exit_code == 1
    _user_config(tmp_path, monkeypatch, 'github-api-url = "http://127.0.0.1:8080"\n')
    assert "C801" not in codes(check(root, monkeypatch).output)


def test_ignore_never_hides_bad_settings(tmp_path, monkeypatch) -> None:
    root = make(tmp_path, 'ignore = ["C801"]\nmax-depth = 0\n', **{"slow.yaml": SLOW.format(name="slow", tail="")})
    assert "C801" in codes(check(root, monkeypatch).output)


def test_exclude_globs(tmp_path, monkeypatch) -> None:
    broken = "name: broken\nsteps: []\n"
    root = make(
        tmp_path,
        'exclude = ["playbooks/drafts/**", "**/*.wip.yaml"]\n',
        **{"drafts/a.yaml": broken, "b.wip.yaml": broken, "ok.yaml": SLOW.format(name="ok", tail="")},
    )
    result = check(root, monkeypatch)
    assert result.exit_code == 0 and "checked 1 file(s)" in result.output
    # A named file is excluded too (a pre-commit hook names each changed file).
    result = check(root, monkeypatch, "playbooks/b.wip.yaml", "playbooks/ok.yaml")
    assert "checked 1 file(s)" in result.output


def test_directory_scans_skip_what_gitignore_ignores(tmp_path, monkeypatch) -> None:
    broken = "name: broken\nsteps: []\n"
    good = SLOW.format(name="{}", tail="")
    root = make(
        tmp_path,
        **{
            "build/out.yaml": broken,
            "gen/a.yaml": broken,
            "gen/keep.yaml": good.format("keep"),
            "deep/x.yaml": broken,
            "deep/y.yaml": good.format("y"),
            "ok.yaml": good.format("ok"),
        },
    )
    # git's rules: a pattern with an inner `/` is anchored where its .gitignore is, a
    # later `!` re-includes, a deeper .gitignore speaks for its own directory.
    (root / ".gitignore").write_text(
        "# generated\nbuild/\ngen/*.yaml\nplaybooks/gen/*.yaml\n!playbooks/gen/keep.yaml\n"
    )
    (root / "playbooks" / "deep" / ".gitignore").write_text("x.yaml\n")
    result = check(root, monkeypatch)
    assert "checked 3 file(s)" in result.output, result.output
    assert result.exit_code == 0
    # Named explicitly, an ignored file is checked.
    assert check(root, monkeypatch, "playbooks/deep/x.yaml").exit_code == 1


def test_strict_and_quiet(tmp_path, monkeypatch) -> None:
    root = make(tmp_path, **{"slow.yaml": SLOW.format(name="slow", tail="")})
    plain = check(root, monkeypatch)
    assert plain.exit_code == 0 and codes(plain.output) == ["C409"]
    strict = check(root, monkeypatch, "--strict")
    assert strict.exit_code == 1 and codes(strict.output) == ["C409"]
    quiet = check(root, monkeypatch, "--quiet")
    assert quiet.exit_code == 0 and quiet.output == "checked 1 file(s): 0 error(s), 1 warning(s)\n"
    quiet_strict = check(root, monkeypatch, "--quiet", "--strict")
    assert codes(quiet_strict.output) == ["C409"]
    quiet_json = json.loads(check(root, monkeypatch, "--quiet", "--format", "json").output)
    assert quiet_json["diagnostics"] == [] and quiet_json["summary"] == {"error": 0, "warning": 1, "info": 0}


@pytest.mark.parametrize(
    ("env", "coloured"),
    [
        ({}, False),
        ({"FORCE_COLOR": "1"}, True),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        ({"FORCE_COLOR": ""}, False),
    ],
)
def test_colour_follows_no_color_and_force_color(tmp_path, monkeypatch, env, coloured) -> None:
    root = make(tmp_path, **{"slow.yaml": SLOW.format(name="slow", tail="")})
    output = check(root, monkeypatch, env=env).output
    assert ("\x1b[1;33mwarning[C409]\x1b[0m" in output) is coloured
    assert ("\x1b" in output) is coloured


def test_wants_colour_on_a_terminal_only() -> None:
    from catalyst_dsl.diagnostics.text import wants_colour

    assert wants_colour(True, {}) and not wants_colour(False, {})
    assert not wants_colour(True, {"NO_COLOR": "1"})
    assert wants_colour(False, {"FORCE_COLOR": "true"})


def test_each_comment_matches_its_own_finding_among_thousands(tmp_path, monkeypatch) -> None:
    """2,000 findings, each silenced by the comment on its line, and three comments with
    nothing to silence: findings are matched to comments by (file, code, line)."""
    steps = "".join(f'  - display: "{i}"\n    timeout: 600000 # catalyst: ignore[C409]\n' for i in range(2000))
    steps += "".join(f'  - display: "x{i}" # catalyst: ignore[C409]\n' for i in range(3))
    root = make(tmp_path, **{"many.yaml": "name: many\ndescription: x\nowner: Engineer\nsteps:\n" + steps})
    result = check(root, monkeypatch)
    assert codes(result.output) == ["C040"] * 3


def test_gitignore_holds_when_the_project_is_reached_through_a_symlink(tmp_path, monkeypatch) -> None:
    real = tmp_path / "real"
    real.mkdir()
    make(real, **{"ok.yaml": SLOW.format(name="ok", tail=""), "gen/bad.yaml": "name: bad\nsteps: []\n"})
    (real / ".gitignore").write_text("gen/\n")
    (tmp_path / "link").symlink_to(real)
    result = check(tmp_path, monkeypatch, "link/playbooks")
    assert "checked 1 file(s)" in result.output and result.exit_code == 0


def test_a_gitignore_with_patterns_git_would_pass_over(tmp_path, monkeypatch) -> None:
    """Invalid patterns are passed over (as git does) and the valid ones around them still
    apply; a pattern that makes a backtracking matcher take exponential time on a long
    file name is matched by RE2 and the check completes."""
    root = make(
        tmp_path,
        **{
            "ok.yaml": SLOW.format(name="ok", tail=""),
            "gen/bad.yaml": "name: bad\nsteps: []\n",
            "a" * 200 + ".yaml": "name: x\n",
        },
    )
    (root / ".gitignore").write_text(
        "!\n\\\n[z-a]\n" + "a" * 100_000 + "\n" + "*a" * 40 + "b\ngen/\n" + "a" * 150 + "*.yaml\n\xff\n"
    )
    result = check(root, monkeypatch)
    assert "checked 1 file(s)" in result.output and result.exit_code == 0


@pytest.mark.parametrize(
    ("name", "text", "lines"),
    [
        ("catalyst.toml", '[aliases]\n"a/" = "../x/"\n"b/" = "ok/"\n"c/" = "/abs/"\n', [2, 4]),
        ("pyproject.toml", '[tool.catalyst.aliases]\n"a/" = "../x/"\n', [2]),
        # An inline table has no line of each alias: the setting's own line.
        ("catalyst.toml", 'max-depth = 3\naliases = { "a/" = "../x/", "b/" = "../y/" }\n', [2, 2]),
    ],
)
def test_each_alias_that_leads_out_of_the_project_is_reported_at_its_line(
    tmp_path: Path, name: str, text: str, lines: list[int]
) -> None:
    from catalyst_dsl.diagnostics.model import DiagnosticSink
    from catalyst_dsl.project.config import read_config

    settings = tmp_path / name
    settings.write_text(text)
    sink = DiagnosticSink()
    assert read_config(settings, sink).aliases == {}
    assert [(d.code, d.span.line) for d in sink.items] == [("C801", line) for line in lines]
