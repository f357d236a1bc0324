"""`file-write` with `frontMatter`: YAML before the content of a Markdown file, written
with the real values (a secret's too: only logs and plans mask), and only for `.md`."""

from __future__ import annotations

PLAYBOOK = """
    name: notes
    description: a Markdown file with front matter
    owner: Engineer
    inputs:
      - string: title
        required: true
      - string: token
        secret: true
    steps:
      - file-write: notes/out.md
        content: "# Body\\n"
        frontMatter:
          title: "{{title}}"
          count: 3
          tags: [a, b]
          key: "Bearer {{token}}"
      - file-write: notes/out.txt
        content: plain
        frontMatter:
          title: not for a text file
"""


def test_front_matter_is_yaml_before_the_content_with_the_real_values(project):
    project.playbook("notes", PLAYBOOK)
    result = project.run("notes", title="Hello: world", token="s3cr3t-token-value")
    assert result.exit_code == 0, result.output
    assert project.read("notes/out.md") == (
        "---\ntitle: 'Hello: world'\ncount: 3\ntags:\n- a\n- b\nkey: Bearer s3cr3t-token-value\n---\n# Body\n"
    )
    assert project.read("notes/out.txt") == "plain"
    assert "s3cr3t-token-value" not in result.output


def test_a_what_if_shows_the_front_matter_with_the_secret_masked(project):
    project.playbook("notes", PLAYBOOK)
    result = project.cli("run", "notes", "--what-if", "-i", "title=Hello", "-i", "token=s3cr3t-token-value")
    assert result.exit_code == 0, result.output
    assert "+title: Hello" in result.output and "+count: 3" in result.output
    assert "s3cr3t-token-value" not in result.output
