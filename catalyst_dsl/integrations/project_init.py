"""`catalyst init`: a native project to start from: its settings, a first playbook, and a
run state folder that keeps itself out of git. Nothing that exists is ever replaced.

The first playbook is the one docs/getting-started.md walks through (a test holds the two
equal), so a newcomer who ran `init` reads about the file in front of them.
"""

from __future__ import annotations

from pathlib import Path

from catalyst_dsl._internal.records import record
from catalyst_dsl.runtime.state import durable
from catalyst_dsl.runtime.state.git_ignored import IGNORE_TEXT

SETTINGS = """\
# catalyst's settings for this project; docs/configuration.md lists every one.

# Where playbooks are found, in this order. `catalyst check` with no path checks them all.
playbook-dirs = ["playbooks"]

# The roles a playbook's `owner:` and `reviewers:` may name. A role is a part people play
# (Engineer, Architect, Product Manager), not a person. While this list is empty any role
# is accepted; list your team's roles and a misspelt one becomes an error.
roles = []

# Where runs keep their state (snapshots, locks): this machine's records, kept out of git.
state-dir = ".xe/runs"
"""

FIRST_PLAYBOOK = """\
# playbooks/first.yaml
name: first
description: Greet someone and write the greeting down
owner: Engineer                        # the role that answers for this playbook
reviewers:
  required: [Engineer]                 # the role that may approve its checkpoint
allowedWritePaths: ["greetings/**"]    # the only place its steps may write
inputs:
  - string: who
    default: world
steps:
  - var: greeting                      # sets the variable `greeting`
    value: "hello {{ who }}"
  - display: "{{ greeting }}"
  - checkpoint: "Write the greeting down?"
  - file-write: "greetings/{{ who }}.txt"
    content: "{{ greeting }}"
"""

#: What `init` writes, by path from the project root, in the order it says so.
FILES = {
    "catalyst.toml": SETTINGS,
    "playbooks/first.yaml": FIRST_PLAYBOOK,
}
STATE_IGNORE = ".xe/runs/.gitignore"


@record
class Started:
    """What `init` did: the paths it wrote, or the ones that stopped it (then it wrote none)."""

    created: tuple[str, ...]
    in_the_way: tuple[str, ...]


class NotWritten(Exception):
    """The file system refused a file `init` meant to write; what it had written is removed."""

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(f"{path}: {error.strerror or error}")
        self.path, self.reason = path, error.strerror or str(error)


def init(root: Path) -> Started:
    """Write the settings and the first playbook into `root` unless one of them (or settings
    in `pyproject.toml`) is there already: then write nothing. The run state's `.gitignore`
    is written when missing. Raises NotWritten, having removed its own files again, when
    the file system refuses one."""
    blocked = [_in_the_way(root, path) for path in FILES]
    state = _in_the_way(root, STATE_IGNORE)
    blocked.append(state if state != STATE_IGNORE else None)  # an existing .gitignore there is kept
    in_the_way = list(dict.fromkeys(path for path in blocked if path))
    if _settings_in_pyproject(root / "pyproject.toml"):
        in_the_way.append("pyproject.toml [tool.catalyst]")
    if in_the_way:
        return Started(created=(), in_the_way=tuple(in_the_way))
    created: list[str] = []
    folders: list[Path] = []  # made by init, removed again (deepest first) if it fails
    writing = ""
    try:
        for path, text in [*FILES.items(), (STATE_IGNORE, IGNORE_TEXT.decode("utf-8"))]:
            writing = path
            missing = [p for p in reversed((root / path).relative_to(root).parents) if not (root / p).exists()]
            for folder in missing:
                (root / folder).mkdir(mode=0o700 if path == STATE_IGNORE else 0o777)
                folders.append(root / folder)
            if durable.create(root / path, text.encode("utf-8"), mode=0o644):
                created.append(path)
    except OSError as error:
        for path in created:
            (root / path).unlink(missing_ok=True)
        for folder in reversed(folders):
            folder.rmdir()
        raise NotWritten(writing, error) from None
    return Started(created=tuple(created), in_the_way=())


def _in_the_way(root: Path, path: str) -> str | None:
    """`path` when it exists, or the file where a folder on the way to it should be."""
    target = root / path
    if target.exists() or target.is_symlink():
        return path
    for parent in target.relative_to(root).parents:
        if (root / parent).exists() and not (root / parent).is_dir():
            return parent.as_posix()
    return None


def _settings_in_pyproject(path: Path) -> bool:
    from catalyst_dsl.project.config import _has_tool_table

    return path.is_file() and _has_tool_table(path)
