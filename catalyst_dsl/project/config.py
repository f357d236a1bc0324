"""Project settings: `catalyst.toml`, or `[tool.catalyst]` in `pyproject.toml`.

The project root is the nearest directory, from where the check starts and upwards,
holding either file (catalyst.toml wins when both do, as it is the more specific one).
Without one, the root is the nearest directory with `.git`, else the starting directory,
and every setting has its default. Settings are read with the project's one cattrs
converter style: strict types, unknown keys refused, kebab-case names.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import functools
from typing import Mapping, Optional, TYPE_CHECKING

from catalyst_dsl.diagnostics.ids import BAD_SETTINGS
from catalyst_dsl.diagnostics.model import DiagnosticSink
from catalyst_dsl._internal.records import factory, fields, record, replace
from catalyst_dsl.syntax.source import SourceFile, Span

if TYPE_CHECKING:
    import cattrs

# cattrs and tomllib are imported only when a settings file exists and holds something:
# most checks of a single file have none, and start-up time is part of what `catalyst
# check` promises.


def _tomllib():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    return tomllib


#: Where playbooks are looked for when nothing else is said: the native folders, then
#: kai's and cleo's (the `playbook-dirs` setting; golden plans' default too).
DEFAULT_PLAYBOOK_DIRS = ("playbooks", ".xe/playbooks", ".playbooks/playbooks", ".cleo/playbooks")


@record
class ProjectConfig:
    #: Where playbooks are found, searched in this order (project-relative).
    playbook_dirs: tuple[str, ...] = DEFAULT_PLAYBOOK_DIRS
    #: Prefix rewrites for Markdown `@` references: {"node_modules/x/playbooks/": "playbooks/"}.
    aliases: dict[str, str] = factory(dict)
    #: Roles an `owner` or reviewer may name; empty means any role is accepted.
    roles: tuple[str, ...] = ()
    #: How deep playbooks may call each other (a conditional self-call recurses up to it).
    max_depth: int = 10
    #: Where runs keep their state and locks.
    state_dir: str = ".xe/runs"
    #: `catalyst runs prune` keeps archived runs younger than this many days…
    retention_days: Optional[int] = None
    #: …and this many newest archived runs.
    retention_runs: Optional[int] = None
    #: A file (or directory) of secrets, read by the file secret provider.
    secrets_file: Optional[str] = None
    #: Secrets are also looked up in the OS keychain (service `catalyst`), after the environment.
    secrets_keyring: bool = False
    #: AI adapters in order of preference; the first installed one is used (none installed, or one unusable: an error).
    ai_adapters: tuple[str, ...] = ()
    #: The program the `command` AI adapter pipes prompts to (argv).
    ai_command: tuple[str, ...] = ()
    #: The OpenAI-compatible endpoint of the `openai` AI adapter, and its default model.
    openai_base_url: Optional[str] = None
    openai_model: Optional[str] = None
    #: With no adapter configured, use one the environment offers (runtime/adapters/detection.py).
    ai_detect: bool = True
    #: At most this many AI requests per minute (None: no limit).
    ai_rate_limit: Optional[float] = None
    #: The GitHub REST API the github-* actions call.
    github_api_url: str = "https://api.github.com"
    #: One run at a time in the project: every run also locks GLOBAL_RUN_LOCK.
    global_run_lock: bool = False
    #: Branches git-commit refuses to commit to directly.
    protected_branches: tuple[str, ...] = ()
    #: Where `catalyst://` paths are read from (read-only; may be outside the project).
    resources_dir: Optional[str] = None
    #: Where runs are kept when not in `state_dir`: a PostgreSQL URL (runtime/state/shared/),
    #: from the user's own configuration only; CATALYST_STATE_URL wins over it.
    state_url: Optional[str] = None
    #: GitHub logins and the role their pull-request reviews approve as (webhooks).
    github_reviewers: dict[str, str] = factory(dict)
    #: Who may approve as which role: approver name -> roles. Empty: roles are not verified.
    approvers: dict[str, tuple[str, ...]] = factory(dict)
    #: Approvals that release a role-restricted pause must be SSH-signed by the approver.
    signed_approvals: bool = False
    #: The OpenSSH allowed-signers file (project-relative) that signed approvals are verified against.
    allowed_signers: str = ".catalyst/allowed_signers"
    #: A machine that cannot confine programs (no Landlock) fails their steps instead of
    #: running them with only the checks of their declared writes.
    require_confinement: bool = False
    #: The prompts AI steps sent are kept in the run's snapshot (masked), for audit.
    keep_prompts: bool = True
    #: `catalyst check` reports only these codes (empty: every code).
    select: tuple[str, ...] = ()
    #: …and never these.
    ignore: tuple[str, ...] = ()
    #: A severity of the project's own for some codes: code -> error, warning or info.
    severity: dict[str, str] = factory(dict)
    #: Globs (docs/globs.md) of project paths `catalyst check` and `list` never read.
    exclude: tuple[str, ...] = ()
    #: `catalyst check` keeps each file's compiled result here, by content (project-relative).
    cache_dir: str = ".xe/cache"
    #: False: `catalyst check` neither reads nor writes that cache (as `--no-cache`).
    check_cache: bool = True
    #: The least severe of ShellCheck's levels `catalyst check` reports on bash scripts
    #: (error, warning, info, style), or off: ShellCheck is not run.
    shellcheck: str = "warning"
    #: The project's approval rules, `{action, reason, pattern}` tables, for pauses whose
    #: policy says `rules: project` (docs/running.md, "Approval policies").
    approval_rules: tuple[dict[str, str], ...] = ()


@record
class Project:
    root: Path
    config: ProjectConfig
    #: The file the settings came from, or None when every setting is a default.
    config_file: Path | None = None
    #: The settings the user's own configuration gave (USER_SETTINGS keys), which the
    #: repository could not have chosen.
    from_user: frozenset[str] = frozenset()

    def resolve(self, relative: str) -> Path:
        return self.root / relative

    @property
    def user_resources(self) -> bool:
        """Whether `resources-dir` is the user's own choice (it may then be outside the project)."""
        return "resources-dir" in self.from_user

    def resources_dir(self) -> Path | None:
        """The directory `catalyst://` paths name: the `resources-dir` setting, else the
        original engine's npm package when the project has it installed (NPM_RESOURCES).
        Unless the user's own configuration named it, it is inside the project, links
        resolved: a repository cannot point it at the machine's other files."""
        if self.config.resources_dir is not None:
            chosen = self.root / self.config.resources_dir
            return chosen if self.user_resources or stays_inside(self.root, self.config.resources_dir) else None
        installed = self.root / NPM_RESOURCES
        return installed if installed.is_dir() and stays_inside(self.root, NPM_RESOURCES) else None


def stays_inside(root: Path, relative: str) -> bool:
    """Whether `root / relative`, every link resolved, is still inside `root` (a path the
    system cannot resolve, one with a NUL character, is not)."""
    try:
        real_root = Path(os.path.realpath(root))
        real = Path(os.path.realpath(root / relative))
    except (OSError, ValueError):
        return False
    return real == real_root or real_root in real.parents


#: Settings that reach outside the project: a directory anywhere on the machine, a program
#: to run, an address that is sent the user's credentials. A repository is not trusted with
#: them (a pull request's `catalyst.toml` would choose them), so they are taken only from
#: the user's own configuration (USER_CONFIG); `resources-dir` only when it leaves the project.
USER_SETTINGS = ("resources-dir", "ai-command", "openai-base-url", "github-api-url", "state-url")

#: The user's own configuration, under $XDG_CONFIG_HOME (docs/configuration.md).
USER_CONFIG = "~/.config/catalyst/config.toml"


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """`$XDG_CONFIG_HOME/catalyst`, else `~/.config/catalyst`; None when there is no home."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME")
    if not base:
        home = environ.get("HOME") or os.path.expanduser("~")
        if not home or home == "~":
            return None
        base = os.path.join(home, ".config")
    return Path(base) / "catalyst"


#: Where npm installs the original engine's package, whose files `catalyst://` names there;
#: a project that already uses it needs no setting.
NPM_RESOURCES = "node_modules/@xerilium/catalyst"


SETTINGS = {f.name.replace("_", "-"): f for f in fields(ProjectConfig)}


def _strict(kind: type, word: str):
    def hook(value, _type):
        if type(value) is not kind:
            raise TypeError(f"expected {word}, got {_toml_type(value)}")
        return value

    return hook


def _strings(value, _type) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list of strings, got {_toml_type(value)}")
    for item in value:
        if not isinstance(item, str):
            raise TypeError(f"expected a list of strings, found {_toml_type(item)} {item!r}")
    return tuple(value)


def _string_table(value, _type) -> dict[str, str]:
    if not isinstance(value, dict):
        raise TypeError(f"expected a table of strings, got {_toml_type(value)}")
    for key, item in value.items():
        if not isinstance(item, str):
            raise TypeError(f"expected a table of strings, but '{key}' is {_toml_type(item)}")
    return dict(value)


def _roles_table(value, _type) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise TypeError(f"expected a table of role lists, got {_toml_type(value)}")
    table = {}
    for key, item in value.items():
        if not isinstance(item, list) or not all(isinstance(role, str) for role in item):
            raise TypeError(f"expected a list of role names for '{key}', got {_toml_type(item)}")
        table[key] = tuple(item)
    return table


#: The keys of one approval rule, and its actions (runtime/approvals/policy.py).
APPROVAL_RULE_KEYS = ("action", "reason", "pattern")
APPROVAL_RULE_ACTIONS = ("require-human", "auto-approve")


def _approval_rules(value, _type) -> tuple[dict[str, str], ...]:
    if not isinstance(value, list):
        raise TypeError(f"expected an array of tables, got {_toml_type(value)}")
    rules = []
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) != set(APPROVAL_RULE_KEYS)
            or not all(isinstance(v, str) for v in item.values())
        ):
            raise ValueError("each rule is a table of three strings: action, reason and pattern")
        rules.append(dict(item))
    return tuple(rules)


def _toml_type(value: object) -> str:
    return {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


@functools.cache
def _converter() -> cattrs.Converter:
    import cattrs

    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(str, _strict(str, "a string"))
    conv.register_structure_hook(int, _strict(int, "an integer"))
    conv.register_structure_hook(bool, _strict(bool, "a boolean"))
    conv.register_structure_hook_func(lambda t: t == tuple[str, ...], _strings)
    conv.register_structure_hook_func(lambda t: t == dict[str, str], _string_table)
    conv.register_structure_hook_func(lambda t: t == dict[str, tuple[str, ...]], _roles_table)
    conv.register_structure_hook_func(lambda t: t == tuple[dict[str, str], ...], _approval_rules)
    return conv


@functools.cache
def _setting_types() -> dict[str, object]:
    """Each setting's type, from the annotations of ProjectConfig (kept as text)."""
    import typing

    hints = typing.get_type_hints(ProjectConfig)
    return {key: hints[f.name] for key, f in SETTINGS.items()}


def _setting_value(key: str, value: object) -> object:
    """The value of setting `key` (a known one) as ProjectConfig holds it; raises what
    the converter's hooks raise (TypeError, ValueError, cattrs' validation errors)."""
    return _converter().structure(value, _setting_types()[key])


def find_root(start: Path, cwd: Path | None = None, ceiling: Path | None = None) -> tuple[Path, Path | None]:
    """The project root for a check starting at `start`, and the settings file if any.

    The nearest directory, from `start` up, holding `catalyst.toml`, a `pyproject.toml`
    (its `[tool.catalyst]` table, if any, is the settings) or `.git`. Without any marker,
    the working directory when `start` is inside it (as the original engine resolves
    against it: `catalyst check playbooks/a.yaml` and `catalyst check` then agree), else
    `start`'s own directory. With a `ceiling` (the language server's workspace, which it
    never reads outside of), no directory above it is looked at, and the root is the
    ceiling when no marker is found below it.
    """
    # os.path's tests, not Path's: a name the system refuses (too long, a NUL) is no file
    # to them, where Path's raise (an editor may name any document).
    start = start.absolute()
    if os.path.isfile(start):
        # The project is around the place the file is named from, not where a link to it
        # leads (a link out of the project must not carry the check into another one).
        start = start.parent
    start = start.resolve()
    directories = [start, *start.parents]
    if ceiling is not None and (ceiling := ceiling.resolve()) in directories:
        directories = directories[: directories.index(ceiling) + 1]
    for directory in directories:
        candidate = directory / "catalyst.toml"
        if os.path.isfile(candidate):
            return directory, candidate
        pyproject = directory / "pyproject.toml"
        if os.path.isfile(pyproject):
            return directory, (pyproject if _has_tool_table(pyproject) else None)
        if os.path.exists(directory / ".git"):
            return directory, None
    if ceiling is not None and ceiling in directories:
        return ceiling, None
    here = (cwd or Path.cwd()).resolve()
    return (here if start == here or here in start.parents else start), None


def repository_root(start: Path) -> Path | None:
    """The work tree of the git repository `start` is in (the nearest directory, from
    `start` up, holding `.git`), or None outside one. Code-scanning services name files
    from there: a project checked from a subdirectory is still annotated at the right path."""
    start = start.resolve()
    for directory in [start, *start.parents]:
        if (directory / ".git").exists():
            return directory
    return None


def _has_tool_table(path: Path) -> bool:
    try:
        return (
            re.search(r"^\s*\[\s*tool\s*\.\s*catalyst\s*[\].]", path.read_text(encoding="utf-8"), re.MULTILINE)
            is not None
        )
    except (OSError, UnicodeDecodeError):
        return False


def settings_source(project: Project) -> SourceFile | None:
    """The settings file's text, to show findings in it; None without one or when it
    cannot be read (reported as C801 when the settings were read)."""
    if project.config_file is None:
        return None
    try:
        return SourceFile(str(project.config_file), project.config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def load_project(start: Path, sink: DiagnosticSink, ceiling: Path | None = None) -> Project:
    """The project around `start`, looked for no higher than `ceiling` (find_root); a bad
    settings file is reported (C801) and defaults used. The user's own configuration
    (USER_CONFIG) adds the settings a repository may not choose (USER_SETTINGS)."""
    root, config_file = find_root(start, ceiling=ceiling)
    config = ProjectConfig() if config_file is None else read_config(config_file, sink, root=root)
    user = user_config_dir()
    user_file = user / "config.toml" if user is not None else None
    if user_file is None or not user_file.is_file():
        return Project(root, config, config_file)
    own = read_config(user_file, sink, user=True)
    given = {
        key: getattr(own, SETTINGS[key].name)
        for key in USER_SETTINGS
        if getattr(own, SETTINGS[key].name) != SETTINGS[key].default
    }
    merged = replace(config, **{SETTINGS[key].name: value for key, value in given.items()})
    return Project(root, merged, config_file, frozenset(given))


def read_config(path: Path, sink: DiagnosticSink, *, root: Path | None = None, user: bool = False) -> ProjectConfig:
    """The settings of a repository's settings file (at `root`), or with `user` of the user's
    own configuration, which holds only USER_SETTINGS."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        sink.report(
            BAD_SETTINGS,
            f"cannot read the settings file: {exc}",
            SourceFile(str(path), "").span(0),
            help="fix or remove the file; defaults are used meanwhile",
        )
        return ProjectConfig()
    if not text:
        # An empty file (`touch catalyst.toml`, marking the project's root) sets nothing:
        # no TOML parser is imported to read it (tomllib costs every command about 2 ms).
        return ProjectConfig()
    source = SourceFile(str(path), text)
    tomllib = _tomllib()
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib puts the position in the message: "... (at line 3, column 7)".
        where = re.search(r"\s*\(at line (\d+), column (\d+)\)$", str(exc))
        offset = source.offset(int(where.group(1)), int(where.group(2))) if where else 0
        reason = str(exc)[: where.start()] if where else str(exc)
        sink.report(
            BAD_SETTINGS,
            f"the settings file is not valid TOML: {reason}",
            source.span(offset, offset + 1),
            help="fix the TOML syntax; defaults are used meanwhile",
        )
        return ProjectConfig()
    table_header = None
    if path.name == "pyproject.toml":
        tool = document.get("tool", {})
        table = tool.get("catalyst", {}) if isinstance(tool, dict) else None
        table_header = "tool.catalyst"
    else:
        table = document
    if not isinstance(table, dict):
        sink.report(
            BAD_SETTINGS,
            "[tool.catalyst] is not a table",
            source.span(0),
            help="write the settings as keys under [tool.catalyst]",
        )
        return ProjectConfig()
    # Each bad setting is reported at its line; the good ones are kept.
    good = {}
    for key, value in table.items():
        problem = _problem(key, value) or (
            _user_problem(key) if user else _repository_problem(key, value, root or path.parent)
        )
        # Aliases are checked apart: each one that leads out is reported at its own line.
        outside = _aliases_outside(value) if key == "aliases" and problem is None else []
        if problem is None and not outside:
            good[key] = value
            # Kept all the same: falling back to the default API would send the token elsewhere;
            # the step refuses to send it instead.
            problem = _token_in_clear_text(key, value)
        for name, directory in outside:
            message, hint = _outside(key, directory)
            span = _key_span(source, name, f"{table_header}.{key}" if table_header else key)
            if span.line == 1 and span.col == 1:  # not written as `[aliases]` (an inline table)
                span = _key_span(source, key, table_header)
            sink.report(BAD_SETTINGS, message, span, help=hint)
        if problem is not None:
            message, hint = problem
            sink.report(BAD_SETTINGS, message, _key_span(source, key, table_header), help=hint)
    return ProjectConfig(**{SETTINGS[key].name: _setting_value(key, value) for key, value in good.items()})


def _problem(key: str, value: object) -> tuple[str, str] | None:
    from catalyst_dsl.diagnostics.suggest import suggest

    if key not in SETTINGS:
        return f"unknown setting '{key}'", suggest(key, SETTINGS) or f"the settings are: {', '.join(SETTINGS)}"
    import cattrs

    try:
        _setting_value(key, value)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        return (
            f"setting '{key}': {'; '.join(_leaf_messages(exc))}",
            "the settings and their types are listed in docs/configuration.md",
        )
    if key in ("retention-days", "retention-runs") and value is not None and value < 0:
        return f"setting '{key}' is {value}; it cannot be negative", "leave it out to keep every run"
    if key == "resources-dir" and not value.strip():
        return (
            "setting 'resources-dir' is empty",
            "name the directory that holds the catalyst:// resources, or leave the setting out",
        )
    if key == "shellcheck" and value not in SHELLCHECK_LEVELS:
        return (
            f"setting 'shellcheck': '{value}' is not one of ShellCheck's levels",
            f"use one of {', '.join(SHELLCHECK_LEVELS)}",
        )
    if key == "max-depth" and value < 1:
        return f"setting 'max-depth' is {value}; it must be at least 1", "10 is the default"
    if key == "approvers" and any(not name.strip() or not re.fullmatch(r"[^\s\x00-\x1f\x7f]+", name) for name in value):
        return (
            "setting 'approvers': an approver name is empty or holds spaces or control characters",
            "name approvers as their allowed-signers principals, e.g. \"ana@example.com\"",
        )
    rule = _rule_problem(key, value)
    if rule is not None:
        return rule
    if key == "approval-rules":
        from catalyst_dsl.syntax.regex import PatternError, check_pattern

        for item in value:
            if item["action"] not in APPROVAL_RULE_ACTIONS:
                return (
                    f"setting 'approval-rules': '{item['action']}' is not an action",
                    f"use {' or '.join(APPROVAL_RULE_ACTIONS)}",
                )
            try:
                check_pattern(item["pattern"])
            except PatternError as error:
                return (
                    f"setting 'approval-rules': the pattern of rule '{item['reason']}' cannot be used: {error.message}",
                    "fix the regular expression (RE2); write (?i) at its start to ignore case",
                )
    directories = {
        "playbook-dirs": lambda: list(value),
        "state-dir": lambda: [value],
        "secrets-file": lambda: [value],
        "cache-dir": lambda: [value],
        "allowed-signers": lambda: [value],
    }
    for directory in directories.get(key, list)():
        if _leaves_project(directory):
            return _outside(key, directory)
    return None


def _aliases_outside(aliases: dict[str, str]) -> list[tuple[str, str]]:
    """The aliases (name, directory) whose directory is outside the project."""
    return [(name, directory) for name, directory in aliases.items() if _leaves_project(directory)]


def _leaves_project(directory: str) -> bool:
    return bool(
        directory.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", directory) or ".." in re.split(r"[/\\]", directory)
    )


def _outside(key: str, directory: str) -> tuple[str, str]:
    return (
        f"setting '{key}': '{directory}' is outside the project",
        "use a path relative to the project root, without '..'",
    )


def _token_in_clear_text(key: str, value: object) -> tuple[str, str] | None:
    """The GitHub API setting when it would carry the token unencrypted to another machine."""
    if key != "github-api-url":
        return None
    from catalyst_dsl.project.addresses import CLEAR_TEXT_FIX, in_clear_text

    exposed = in_clear_text(str(value))
    if exposed is None:
        return None
    return (
        (
            f"setting 'github-api-url' reaches {exposed} over plain http://: "
            "the GitHub token would cross the network unencrypted"
        ),
        CLEAR_TEXT_FIX,
    )


def _repository_problem(key: str, value: object, root: Path) -> tuple[str, str] | None:
    """A USER_SETTINGS setting the repository's file gives: refused, except a `resources-dir`
    that stays inside the project (`..` and links resolved)."""
    if key not in USER_SETTINGS:
        return None
    fix = (
        f"move it to your own configuration, {USER_CONFIG} (docs/configuration.md); "
        "a repository's settings are not trusted with it"
    )
    if key != "resources-dir":
        return f"setting '{key}' reaches outside the project, so a repository's settings file may not give it", fix
    if value.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", value) or not stays_inside(root, value):
        return (
            (
                f"setting 'resources-dir': '{value}' leads outside the project, "
                "so a repository's settings file may not give it"
            ),
            f"use a directory inside the project, or {fix[0].lower()}{fix[1:]}",
        )
    return None


def _user_problem(key: str) -> tuple[str, str] | None:
    if key in USER_SETTINGS:
        return None
    return (
        f"setting '{key}' belongs to the project, not to your own configuration",
        f"put it in the project's catalyst.toml; {USER_CONFIG} holds only {', '.join(USER_SETTINGS)}",
    )


def _rule_problem(key: str, value) -> tuple[str, str] | None:
    """Unknown codes in `select`, `ignore` and `severity`, bad severities, bad `exclude` globs."""
    from catalyst_dsl.diagnostics.codes import CODES
    from catalyst_dsl.diagnostics.selection import codes_named
    from catalyst_dsl.diagnostics.suggest import suggest

    codes = {"select": lambda: list(value), "ignore": lambda: list(value), "severity": lambda: list(value)}.get(
        key, list
    )()
    for code in codes:
        # `select` and `ignore` also take prefixes of codes (C4: every C4xx), `severity` only codes.
        known = bool(codes_named(code)) if key in ("select", "ignore") else code in CODES
        if not known:
            return f"setting '{key}': unknown code '{code}'", suggest(
                code, CODES
            ) or "the codes are listed in docs/diagnostics.md"
    if key == "severity":
        for code, level in value.items():
            if level not in SEVERITIES:
                return (
                    f"setting 'severity': '{level}' for {code} is not a severity",
                    f"use one of {', '.join(SEVERITIES)}",
                )
    if key == "exclude":
        from catalyst_dsl.paths.globs import Glob, GlobError

        for pattern in value:
            try:
                Glob.compile(pattern)
            except GlobError as exc:
                return (
                    f"setting 'exclude': '{pattern}' is not a valid pattern: {exc.message}",
                    "patterns are project-relative globs (docs/globs.md), e.g. \"playbooks/drafts/**\"",
                )
    return None


#: What the `shellcheck` setting may say: the least severe level reported, or off.
SHELLCHECK_LEVELS = ("error", "warning", "info", "style", "off")

#: The severities `severity.<code>` may give.
SEVERITIES = ("error", "warning", "info")


def _leaf_messages(exc: BaseException) -> list[str]:
    import cattrs

    if isinstance(exc, cattrs.BaseValidationError):
        return [m for sub in exc.exceptions for m in _leaf_messages(sub)]
    return [str(exc)]


def _key_span(source: SourceFile, key: str, header: str | None) -> Span:
    """Where `key = …` (or a `[key]` table) is written: tomllib keeps no positions."""
    home = header or ""
    full = f"{header}.{key}" if header else key
    assignment = re.compile(r"^\s*([\"']?)" + re.escape(key) + r"\1\s*=")
    table = ""
    for number, line in enumerate(source.text.split("\n"), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            table = stripped.strip("[] ").replace(" ", "")
            if table == full:
                start = source.offset(number, line.index("[") + 1)
                return source.span(start, start + len(stripped))
        elif table == home and assignment.match(line):
            start = source.offset(number, line.index(key) + 1)
            return source.span(start, start + len(key))
    return source.span(0)


def relative_to_root(project: Project, path: str | os.PathLike[str]) -> str:
    """A project-relative, `/`-separated path (or the absolute path when it is outside)."""
    absolute = Path(path).resolve()
    try:
        return absolute.relative_to(project.root).as_posix()
    except ValueError:
        return absolute.as_posix()
