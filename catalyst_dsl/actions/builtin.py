"""Declarations of the built-in actions.

Config keys and result shapes follow the original Catalyst engine where it defines them,
so real playbooks keep working. Reserved step keys (name, condition, errorPolicy, timeout,
checkpoint, writes, isolated) are not config and do not appear here.
"""

from __future__ import annotations

from catalyst_dsl.actions.catalog import ActionSpec, Effect, WhatIf, WriteDecl
from catalyst_dsl.actions.control import CONTROL, PAUSES
from catalyst_dsl.ir.types import (
    ANY,
    BOOLEAN,
    DURATION,
    NULL,
    NUMBER,
    STRING,
    ArrayT,
    EnumT,
    ObjectT,
    obj,
    opt,
    req,
    union,
)

STRINGS = ArrayT(STRING)
STRING_MAP = ObjectT((), STRING)
OPEN = ObjectT((), ANY)
ID = union(NUMBER, STRING)

PROCESS_RESULT = obj(stdout=STRING, stderr=STRING, exitCode=NUMBER)
WRITE_RESULT = obj(path=STRING, bytesWritten=NUMBER)
HTTP_RESULT = obj(status=NUMBER, headers=STRING_MAP, body=STRING, bodyAsJson=ANY)
CREATED = obj(number=NUMBER, url=STRING, id=NUMBER)
COMMENT = obj(id=NUMBER, url=STRING)


def _spec(name, group, summary, config, primary, result, effect, what_if, **kw) -> ActionSpec:
    return ActionSpec(name, group, summary, config, primary, result, effect, what_if, **kw)


#: The control actions declare themselves beside their run (actions/control/).
_CONTROL = [module.SPEC for module in CONTROL.values()]


_HUMAN = [module.SPEC for module in PAUSES.values()]

#: AI tool grants that only look: any other grant (edit, write, bash, …) lets the AI change
#: things, so it needs allowedWritePaths (C820) and, in manual mode, an approval to run.
READ_ONLY_TOOLS = frozenset({"read", "search", "grep", "glob", "list", "web-search", "web-fetch"})


def writing_tools(tools: object) -> list[str]:
    """The grants in a step's `tools` that are not read-only (names compared without case)."""
    if not isinstance(tools, (list, tuple)) or not all(isinstance(t, str) for t in tools):
        return []  # not a list of names: the step's config check refuses it before it runs
    return [t for t in tools if t.strip().lower() not in READ_ONLY_TOOLS]


_AI_CONFIG = dict(
    context=opt(ANY, "values the prompt may use"),
    tools=opt(STRINGS, "tool grants; read-only when absent"),
    provider=opt(STRING),
    model=opt(STRING),
    role=opt(STRING),
    maxTokens=opt(NUMBER),
    inactivityTimeout=opt(DURATION),
    return_=opt(STRING, "what the answer must contain"),
    temperature=opt(NUMBER),
)
#: Who answers an `ai-prompt`: each adapter declares which of these it
#: honours (`identity_keys`), and a step using one it cannot honour fails before it is sent.
AI_IDENTITY = dict(
    command=opt(STRING, "a slash command and its arguments, run in a fresh session: the prompt's first line"),
    agent=opt(STRING, "the agent the adapter runs the prompt as"),
    skill=opt(STRING, "the skill the agent uses"),
    profile=opt(STRING, "the adapter's named profile"),
    readPaths=opt(STRINGS, "what the agent may read"),
    skills=opt(STRINGS, "skill grants; restrict-only, like tools"),
)
_AI = [
    _spec(
        "ai-prompt",
        "ai",
        "Send a prompt to the configured AI adapter. `command` puts a slash command and its arguments on the prompt's "
        "first line; `agent`, `skill`, `profile`, `readPaths` and `skills` say who answers, where the adapter can "
        "honour them.",
        obj(
            prompt=opt(STRING),
            promptFile=opt(STRING, "a file holding the prompt; its {{ }} are filled in when the step runs"),
            **_AI_CONFIG,
            **AI_IDENTITY,
        ),
        "prompt",
        ANY,
        Effect.EXTERNAL,
        WhatIf.UNKNOWN,
    ),
    _spec(
        "markdown",
        "ai",
        "Run a Markdown playbook file as a prompt.",
        obj(file=req(STRING), **_AI_CONFIG),
        "file",
        ANY,
        Effect.EXTERNAL,
        WhatIf.UNKNOWN,
    ),
]

_PROCESS_CONFIG = dict(cwd=opt(STRING, "working directory"), env=opt(STRING_MAP, "environment variables"))
_PROCESS = [
    _spec(
        "bash",
        "process",
        "Run a bash script.",
        obj(script=req(STRING), **_PROCESS_CONFIG),
        "script",
        PROCESS_RESULT,
        Effect.EXTERNAL,
        WhatIf.UNKNOWN,
        shell_like=True,
        script=("script", "bash"),
    ),
    _spec(
        "powershell",
        "process",
        "Run a PowerShell script with pwsh.",
        obj(script=req(STRING), **_PROCESS_CONFIG),
        "script",
        PROCESS_RESULT,
        Effect.EXTERNAL,
        WhatIf.UNKNOWN,
        shell_like=True,
        requires="pwsh",
        script=("script", "powershell"),
    ),
    _spec(
        "command",
        "process",
        "Run a program with arguments, no shell.",
        obj(argv=req(STRINGS), **_PROCESS_CONFIG),
        "argv",
        PROCESS_RESULT,
        Effect.EXTERNAL,
        WhatIf.UNKNOWN,
        shell_like=True,
        script=("argv", "argv"),
    ),
    _spec(
        "script",
        "process",
        "Run JavaScript with node; get() and set() reach playbook variables.",
        obj(code=req(STRING), cwd=opt(STRING)),
        "code",
        ANY,
        Effect.EXTERNAL,
        WhatIf.UNKNOWN,
        shell_like=True,
        requires="node",
        script=("code", "javascript"),
    ),
    _spec(
        "test",
        "process",
        "Run the project's test command; fails on a non-zero exit.",
        obj(
            command=req(STRING),
            reports=opt(STRINGS),
            coverageReport=opt(STRING),
            coverageThreshold=opt(NUMBER),
            **_PROCESS_CONFIG,
        ),
        "command",
        obj(exitCode=NUMBER, stdout=STRING, stderr=STRING, reports=STRINGS, coverage=union(NUMBER, NULL)),
        Effect.EXTERNAL,
        WhatIf.UNKNOWN,
        shell_like=True,
        script=("command", "bash"),
    ),
]

_FILES = [
    _spec(
        "file-read",
        "files",
        "Read a file as text.",
        obj(path=req(STRING), encoding=opt(STRING)),
        "path",
        STRING,
        Effect.READ,
        WhatIf.RUN,
    ),
    _spec(
        "file-write",
        "files",
        "Write text to a file (front matter for .md files, find/replace before writing).",
        obj(
            path=req(STRING), content=opt(STRING), encoding=opt(STRING), replace=opt(STRING_MAP), frontMatter=opt(OPEN)
        ),
        "path",
        WRITE_RESULT,
        Effect.WRITE,
        WhatIf.DIFF,
        writes=(WriteDecl("path", "file"),),
    ),
    _spec(
        "file-exists",
        "files",
        "Whether a file exists.",
        obj(path=req(STRING)),
        "path",
        BOOLEAN,
        Effect.READ,
        WhatIf.RUN,
    ),
    _spec(
        "file-list",
        "files",
        "List files under a directory matching a glob pattern.",
        obj(path=req(STRING), pattern=opt(STRING), relativeTo=opt(EnumT(("root", "cwd", "absolute")))),
        "path",
        STRINGS,
        Effect.READ,
        WhatIf.RUN,
    ),
    _spec(
        "file-delete",
        "files",
        "Delete a file; true when it was deleted.",
        obj(path=req(STRING)),
        "path",
        BOOLEAN,
        Effect.WRITE,
        WhatIf.DIFF,
        writes=(WriteDecl("path", "file"),),
    ),
    _spec(
        "json-read", "files", "Read and parse a JSON file.", obj(path=req(STRING)), "path", ANY, Effect.READ, WhatIf.RUN
    ),
    _spec(
        "json-write",
        "files",
        "Serialize a value to a JSON file.",
        obj(path=req(STRING), value=req(ANY), pretty=opt(BOOLEAN)),
        "path",
        WRITE_RESULT,
        Effect.WRITE,
        WhatIf.DIFF,
        writes=(WriteDecl("path", "file"),),
    ),
    _spec(
        "gitignore-edit",
        "files",
        "Add or remove patterns in a named section of a .gitignore file.",
        obj(path=req(STRING), header=opt(STRING), add=opt(STRINGS), remove=opt(STRINGS)),
        "path",
        obj(path=STRING, bytesWritten=NUMBER, changed=BOOLEAN),
        Effect.WRITE,
        WhatIf.DIFF,
        writes=(WriteDecl("path", "file"),),
    ),
]


def _http(method: str, body: bool) -> ActionSpec:
    config = dict(
        url=req(STRING),
        headers=opt(STRING_MAP),
        retries=opt(NUMBER),
        expectedStatus=opt(union(NUMBER, ArrayT(NUMBER))),
        responseSchema=opt(OPEN, "JSON Schema for the response body"),
    )
    if body:
        config.update(
            body=opt(ANY), contentType=opt(STRING), retryMutation=opt(BOOLEAN, "retry this non-idempotent request too")
        )
    read_only = method in ("get",)
    return _spec(
        f"http-{method}",
        "http",
        f"Send an HTTP {method.upper()} request.",
        obj(**config),
        "url",
        HTTP_RESULT,
        Effect.NETWORK,
        WhatIf.RUN if read_only else WhatIf.DESCRIBE,
        url="url",
    )


_HTTP = [_http("get", False), _http("post", True), _http("put", True), _http("patch", True), _http("delete", False)]

_REPO = dict(repository=opt(STRING, "owner/name; the current repository when absent"))
_GIT = [
    _spec(
        "git-branch",
        "git",
        "Switch to a branch, creating it if needed.",
        obj(name=req(STRING), requireNew=opt(BOOLEAN), base=opt(STRING)),
        "name",
        obj(name=STRING, created=BOOLEAN),
        Effect.WRITE,
        WhatIf.DESCRIBE,
        writes=(WriteDecl("name", "branch"),),
        requires="git",
    ),
    _spec(
        "git-commit",
        "git",
        "Commit the files matching the patterns; idempotent on resume.",
        obj(message=req(STRING), files=opt(STRINGS), push=opt(BOOLEAN), pull=opt(BOOLEAN)),
        "message",
        obj(sha=STRING, files=STRINGS, created=BOOLEAN),
        Effect.WRITE,
        WhatIf.DESCRIBE,
        writes=(WriteDecl("files", "files"),),
        requires="git",
    ),
]
_GITHUB = [
    _spec(
        "github-issue-create",
        "github",
        "Create an issue.",
        obj(title=req(STRING), body=opt(STRING), labels=opt(STRINGS), assignees=opt(STRINGS), **_REPO),
        "title",
        CREATED,
        Effect.NETWORK,
        WhatIf.DESCRIBE,
    ),
    _spec(
        "github-issue-comment",
        "github",
        "Comment on an issue.",
        obj(issue=req(ID), body=req(STRING), **_REPO),
        "issue",
        COMMENT,
        Effect.NETWORK,
        WhatIf.DESCRIBE,
    ),
    _spec(
        "github-pr-create",
        "github",
        "Open a pull request, optionally pausing the run until it is reviewed.",
        obj(
            title=req(STRING),
            body=opt(STRING),
            head=opt(STRING),
            base=opt(STRING),
            draft=opt(BOOLEAN),
            waitForReview=opt(BOOLEAN, "pause the run until the review is approved"),
            **_REPO,
        ),
        "title",
        obj(number=NUMBER, url=STRING, id=NUMBER, waitForReview=BOOLEAN),
        Effect.NETWORK,
        WhatIf.DESCRIBE,
        pauses_for_review=True,
    ),
    _spec(
        "github-pr-comment",
        "github",
        "Comment on a pull request.",
        obj(pr=req(ID), body=req(STRING), **_REPO),
        "pr",
        COMMENT,
        Effect.NETWORK,
        WhatIf.DESCRIBE,
    ),
    _spec(
        "github-repo",
        "github",
        "Read repository information.",
        obj(**_REPO),
        "repository",
        obj(ANY, owner=STRING, name=STRING, fullName=STRING, defaultBranch=STRING, url=STRING),
        Effect.NETWORK,
        WhatIf.RUN,
    ),
]

_LOG_CONFIG = dict(
    message=req(STRING), action=opt(STRING, "what the message is about"), source=opt(STRING), data=opt(ANY)
)
_CONSOLE = [
    _spec(
        "display",
        "console",
        "Show a message to the user.",
        obj(message=req(STRING)),
        "message",
        NULL,
        Effect.PURE,
        WhatIf.RUN,
    ),
    *[
        _spec(
            f"log-{level}",
            "console",
            f"Write a {level} log entry (queried with logs()).",
            obj(**_LOG_CONFIG),
            "message",
            NULL,
            Effect.PURE,
            WhatIf.RUN,
        )
        for level in ("error", "warning", "info", "verbose", "debug", "trace")
    ],
]

BUILTIN_ACTIONS: list[ActionSpec] = [*_CONTROL, *_HUMAN, *_AI, *_PROCESS, *_FILES, *_HTTP, *_GIT, *_GITHUB, *_CONSOLE]
