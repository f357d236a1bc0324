"""GitHub actions over the REST API: issues, pull requests, comments, repository facts.

- The API is the `github-api-url` setting (default https://api.github.com); requests go
  through the effects gateway like any HTTP request.
- The token is the secret `github-token` (`CATALYST_SECRET_GITHUB_TOKEN` or the
  secrets file), else the `GITHUB_TOKEN` environment variable. Creating needs one;
  `github-repo` reads public repositories without.
- The repository is the step's `repository` (`owner/name` or a GitHub URL), else the
  project's git remote `origin`, else the step fails with `RepositoryUnknown`.
- Errors: 401 `GitHubAuthError`, a spent rate limit (403 with
  `X-RateLimit-Remaining: 0` or a `Retry-After`, or 429) `GitHubRateLimited` saying when
  it resets, other 403 `GitHubForbidden`, 404 `GitHubNotFound`, 422
  `GitHubValidationFailed` with GitHub's message, anything else `GitHubError`.
- No duplicates on resume: what a step creates carries an invisible marker (an HTML
  comment naming the run and the step's journal path). Before creating an issue or a
  comment the step looks for one with its marker, and a pull request GitHub refuses as
  already existing is taken when it carries the marker; so a step that runs again after
  an interruption returns what its first attempt made.
- `waitForReview: true` on `github-pr-create` puts `waitForReview: true` in the result,
  and the run pauses after the step until the pull request's review is approved
  (`catalyst approve`, or a token handed back by whatever watches the review).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import urllib.parse
from typing import Any, Callable

from catalyst_dsl._internal.lazy_pattern import LazyPattern
from catalyst_dsl.runtime.actions.context import ActionContext
from catalyst_dsl.runtime.actions.http import USER_AGENT, decode, exchange, header, parse_json, retry_after, shown_url
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.values.jsvalues import as_written
from catalyst_dsl.project.addresses import CLEAR_TEXT_FIX, in_clear_text
from catalyst_dsl.runtime.effects.network import HttpResponse

DEFAULT_API = "https://api.github.com"
API_VERSION = "2022-11-28"
#: Reads are retried this many times after a connection error or a 5xx; writes never are.
READ_RETRIES = 2
#: Seconds a `git` query (the origin remote, the current branch) may take.
GIT_TIMEOUT = 10.0

_PART = LazyPattern(r"^[A-Za-z0-9_.-]+$")
TOKEN_HELP = "set CATALYST_SECRET_GITHUB_TOKEN (or github-token in the secrets file), or GITHUB_TOKEN"


# -- talking to the API ---------------------------------------------------------------------------------


def _api(ctx: ActionContext) -> str:
    return (getattr(ctx.settings, "github_api_url", None) or DEFAULT_API).rstrip("/")


def _token(ctx: ActionContext) -> str | None:
    return ctx.secret("github-token") or os.environ.get("GITHUB_TOKEN") or None


class GitHub:
    """The REST API as one step uses it."""

    def __init__(self, ctx: ActionContext, *, write: bool) -> None:
        self.ctx = ctx
        self.api = _api(ctx)
        self.token = _token(ctx)
        if write and not self.token:
            raise StepError(
                "GitHubAuthError", f"`{ctx.action}` needs a GitHub token, and none is set", guidance=TOKEN_HELP
            )
        exposed = in_clear_text(self.api) if self.token else None
        if exposed:
            raise StepError(
                "InsecureTransport",
                f"the GitHub API at {exposed} is reached over plain http://, so the token would "
                "cross the network unencrypted; it is not sent",
                guidance=f"fix github-api-url: {CLEAR_TEXT_FIX}",
            )

    def call(
        self, method: str, path: str, payload: Any = None, query: dict[str, str] | None = None
    ) -> tuple[Any, HttpResponse]:
        """GitHub's JSON answer and the response; a failure as the step error of its kind."""
        url = path if path.startswith(self.api + "/") else self.api + path
        if query:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(query)
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": USER_AGENT,
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        body = None
        if payload is not None:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        # A rate limit is not waited out here: GitHub's resets are minutes to an hour away.
        response = exchange(
            self.ctx,
            method,
            url,
            headers=headers,
            body=body,
            retries=READ_RETRIES if method == "GET" else 0,
            retry_rate_limit=False,
        )
        # Messages name the API path (/repos/acme/widgets/issues), not the host or the query.
        api_path = urllib.parse.urlsplit(self.api).path.rstrip("/")
        shown = urllib.parse.urlsplit(url).path
        shown = shown[len(api_path) :] if api_path and shown.startswith(api_path) else shown
        return _answer(method, shown or "/", response), response

    def find(
        self, path: str, query: dict[str, str], marker: str, accept: Callable[[dict], bool], last_page: bool
    ) -> dict | None:
        """The listed item whose body carries `marker`: on the first page, and on the last when asked."""
        items, response = self.call("GET", path, query=query)
        found = _marked_item(items, marker, accept)
        if found is None and last_page:
            last = _link(header(response.headers, "Link"), "last")
            if last and last.startswith(self.api + "/"):
                items, _ = self.call("GET", last)
                found = _marked_item(items, marker, accept)
        return found


def _marked_item(items: Any, marker: str, accept: Callable[[dict], bool]) -> dict | None:
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, dict) and marker in str(item.get("body") or "") and accept(item):
            return item
    return None


def _link(value: str | None, rel: str) -> str | None:
    """The URL of `rel` in a Link header (`<url>; rel="next", <url>; rel="last"`)."""
    for part in (value or "").split(","):
        match = re.match(r"\s*<([^>]*)>(.*)", part)
        if not match:
            continue
        for parameter in match.group(2).split(";"):
            key, _, words = parameter.partition("=")
            if key.strip().lower() == "rel" and rel in words.strip().strip('"').split():
                return match.group(1)
    return None


def _answer(method: str, path: str, response: HttpResponse) -> Any:
    is_json, data = parse_json(decode(response))
    status = response.status
    if 200 <= status <= 299:
        if not is_json and status != 204:
            raise StepError(
                "GitHubError",
                f"GitHub answered {method} {path} with {status}, but not with JSON",
                metadata={"status": status},
                guidance="check the github-api-url setting",
            )
        return data
    raise _failure(method, path, response, data if isinstance(data, dict) else {})


def _failure(method: str, path: str, response: HttpResponse, data: dict) -> StepError:
    status = response.status
    said = str(data.get("message") or "").strip()
    errors = data.get("errors") if isinstance(data.get("errors"), list) else []
    metadata: dict[str, Any] = {
        "status": status,
        "message": said or None,
        "errors": errors,
        "documentationUrl": data.get("documentation_url"),
    }
    where = f"{method} {path}"
    if status == 401:
        return StepError(
            "GitHubAuthError",
            f"GitHub refused the token for {where} ({said or 'Bad credentials'})",
            guidance=f"the token is wrong or expired: {TOKEN_HELP}",
            metadata=metadata,
        )
    remaining = (header(response.headers, "X-RateLimit-Remaining") or "").strip()
    wait = retry_after(response.headers)
    if status == 429 or (status == 403 and (remaining == "0" or wait is not None)):
        when, resets = _reset(response, wait)
        metadata.update(resetsAt=resets, retryAfter=wait)
        return StepError(
            "GitHubRateLimited",
            f"GitHub's rate limit is spent ({where}): {when}",
            guidance=(
                "wait, then resume the run; an errorPolicy for GitHubRateLimited with retryCount retries by itself"
            ),
            metadata=metadata,
        )
    if status == 403:
        return StepError(
            "GitHubForbidden",
            f"GitHub refused {where}: {said or 'Forbidden'}",
            guidance="the token lacks the permission this needs (its scopes or the app's permissions)",
            metadata=metadata,
        )
    if status == 404:
        return StepError(
            "GitHubNotFound",
            f"GitHub has nothing at {where} ({said or 'Not Found'})",
            guidance=(
                "check the repository and the number; "
                "GitHub also answers 404 for a private repository the token cannot see"
            ),
            metadata=metadata,
        )
    if status == 422:
        details = "; ".join(_problem(e) for e in errors if _problem(e))
        text = said or "Validation Failed"
        return StepError(
            "GitHubValidationFailed",
            f"GitHub refused {where}: {text}" + (f" ({details})" if details else ""),
            metadata=metadata,
        )
    return StepError(
        "GitHubError", f"GitHub answered {where} with {status}" + (f": {said}" if said else ""), metadata=metadata
    )


def _problem(error: Any) -> str:
    if isinstance(error, str):
        return error
    if not isinstance(error, dict):
        return ""
    if error.get("message"):
        return str(error["message"])
    parts = [str(error[k]) for k in ("resource", "field") if error.get(k)]
    return ".".join(parts) + (f": {error['code']}" if error.get("code") else "")


def _reset(response: HttpResponse, wait: float | None) -> tuple[str, str | None]:
    """How the message says when the limit resets, and the reset time (ISO 8601 UTC) if known."""
    if wait is not None:  # a secondary limit: its Retry-After is what counts
        return f"GitHub asks to wait {wait:.0f}s before retrying", None
    value = (header(response.headers, "X-RateLimit-Reset") or "").strip()
    # Seconds since the epoch in ASCII digits ("²" passes isdigit(), not int()), within what a clock shows.
    if value.isascii() and value.isdigit() and len(value) <= 11:
        at = int(value)
        minutes = max(0, round((at - time.time()) / 60))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
        return f"it resets at {time.strftime('%H:%M:%S UTC', time.gmtime(at))} (in about {minutes} min)", stamp
    return "GitHub did not say when it resets; wait a minute before retrying", None


# -- what the step names --------------------------------------------------------------------------------


def _hosts(api: str) -> set[str]:
    hosts = {"github.com", "www.github.com", "ssh.github.com"}
    host = (urllib.parse.urlsplit(api).hostname or "").lower()
    if host:
        hosts.add(host[4:] if host.startswith("api.") else host)
    return hosts


def parse_repository(text: str, hosts: set[str]) -> tuple[str, str] | None:
    """(owner, name) of `owner/name` or of a GitHub URL (https, ssh, scp-like `git@host:o/r.git`)."""
    text = text.strip()
    if "://" not in text and re.match(r"^[^/@:]+/[^/@:]+$", text):
        host, path = None, text
    else:
        scp = re.match(r"^(?:[^@/:]+@)?([^/:]+):(?!/)(.+)$", text) if "://" not in text else None
        if scp:
            host, path = scp.group(1), scp.group(2)
        else:
            try:
                parts = urllib.parse.urlsplit(text)
                host, path = parts.hostname, parts.path
            except ValueError:
                return None
        if not host or host.lower() not in hosts:
            return None
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    pieces = path.split("/")
    if len(pieces) != 2 or not all(_PART.match(p) and p.strip(".") for p in pieces):
        return None
    return pieces[0], pieces[1]


def _git(ctx: ActionContext, *args: str) -> str | None:
    """The trimmed output of a git query in the project, or None when git cannot answer."""
    if shutil.which("git") is None:
        return None
    left = ctx.remaining()
    outcome = ctx.gateway.run_process(
        ["git", *args],
        declared_writes=(),
        cwd=None,
        env={"GIT_TERMINAL_PROMPT": "0"},
        confined=False,
        timeout=GIT_TIMEOUT if left is None else min(left, GIT_TIMEOUT),
        # Not shown: a remote URL may hold a token.
        on_output=lambda stream, line: None,
    )
    if outcome.exit_code != 0 or outcome.timed_out:
        return None
    return outcome.stdout.strip() or None


def _repository(ctx: ActionContext, config: dict, api: str) -> tuple[str, str]:
    hosts = _hosts(api)
    given = config.get("repository")
    if given is not None:
        found = parse_repository(given, hosts) if isinstance(given, str) else None
        if found is None:
            raise StepError("InvalidConfig", f"`repository` should be owner/name (or a GitHub URL), got {given!r}")
        return found
    remote = _git(ctx, "remote", "get-url", "origin")
    if remote is None:
        raise StepError(
            "RepositoryUnknown",
            f"`{ctx.action}` has no `repository`, and the project has no git remote `origin` to take it from",
            guidance="set repository: owner/name on the step",
        )
    found = parse_repository(remote, hosts)
    if found is None:
        raise StepError(
            "RepositoryUnknown",
            f"the git remote origin ({shown_url(remote)}) is not a GitHub repository",
            guidance="set repository: owner/name on the step",
        )
    return found


def branch_protected(ctx: ActionContext, branch: str) -> str | None:
    """`owner/name` when GitHub protects `branch` of the origin's repository, else None.

    Asked only with a token (GitHub shows protection to those who may push) and an
    `origin` on GitHub; a branch GitHub does not have (404: it will be created) is not
    protected. A failure to ask is the StepError of its kind, for the caller to weigh.
    """
    if _token(ctx) is None:
        return None
    remote = _git(ctx, "remote", "get-url", "origin")
    found = parse_repository(remote, _hosts(_api(ctx))) if remote else None
    if found is None:
        return None
    owner, name = found
    try:
        data, _ = GitHub(ctx, write=False).call(
            "GET", f"{_repo_path(owner, name)}/branches/{urllib.parse.quote(branch, safe='')}"
        )
    except StepError as error:
        if error.code == "GitHubNotFound":
            return None
        raise
    return f"{owner}/{name}" if isinstance(data, dict) and data.get("protected") is True else None


def protection_or_warning(ctx: ActionContext, branch: str, warn: Callable[[str], None]) -> str | None:
    """`branch_protected`, with a failure to ask said through `warn` (and taken as not
    protected: GitHub itself still refuses a push it protects)."""
    try:
        return branch_protected(ctx, branch)
    except StepError as error:
        warn(
            f"could not read GitHub's protection of '{branch}' ({error.code}: {error.message}); "
            "GitHub still refuses a push it protects"
        )
        return None


def _repo_path(owner: str, name: str) -> str:
    return f"/repos/{urllib.parse.quote(owner, safe='')}/{urllib.parse.quote(name, safe='')}"


def _text(config: dict, key: str, required: bool = False) -> str | None:
    value = config.get(key)
    if value is None:
        if required:
            raise StepError("InvalidConfig", f"`{key}` is required")
        return None
    if not isinstance(value, str):
        raise StepError("InvalidConfig", f"`{key}` should be text, got {as_written(value)}")
    if required and not value.strip():
        raise StepError("InvalidConfig", f"`{key}` is empty")
    return value


def _strings(config: dict, key: str) -> list[str] | None:
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise StepError("InvalidConfig", f"`{key}` should be a list of text, got {as_written(value)}")
    return list(value)


def _number(config: dict, key: str) -> int:
    value = config.get(key)
    if isinstance(value, str) and re.fullmatch(r"\s*#?\d+\s*", value):
        value = int(value.strip().lstrip("#"))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 1:
        given = as_written(config.get(key))
        raise StepError("InvalidConfig", f"`{key}` should be an issue or pull request number, got {given}")
    return int(value)


def _marker(ctx: ActionContext) -> str:
    """What marks an object as made by this step of this run (stable across resumes)."""
    where = (ctx.path or ctx.step_id).replace("--", "-")
    return f"<!-- catalyst: run {ctx.run_id.replace('--', '-')}, step {where} -->"


def _with_marker(body: str | None, marker: str) -> str:
    text = (body or "").rstrip()
    return f"{text}\n\n{marker}" if text else marker


def _field(data: Any, key: str, what: str) -> Any:
    if not isinstance(data, dict) or data.get(key) is None:
        raise StepError(
            "GitHubError",
            f"GitHub's answer about {what} has no `{key}`",
            metadata={"answer": data if isinstance(data, dict) else None},
        )
    return data[key]


def _created(data: Any, what: str) -> dict[str, Any]:
    return {
        "number": _field(data, "number", what),
        "url": _field(data, "html_url", what),
        "id": _field(data, "id", what),
    }


def _comment_result(data: Any) -> dict[str, Any]:
    return {"id": _field(data, "id", "the comment"), "url": _field(data, "html_url", "the comment")}


# -- the actions -------------------------------------------------------------------------------------


def issue_create(ctx: ActionContext, config: dict) -> dict[str, Any]:
    gh = GitHub(ctx, write=True)
    owner, name = _repository(ctx, config, gh.api)
    title = _text(config, "title", required=True)
    base = _repo_path(owner, name)
    marker = _marker(ctx)
    existing = gh.find(
        f"{base}/issues",
        {"state": "all", "sort": "created", "direction": "desc", "per_page": "100"},
        marker,
        lambda item: "pull_request" not in item,
        last_page=False,
    )
    if existing is not None:
        result = _created(existing, "the issue")
        ctx.log(
            "info",
            (
                f"issue #{result['number']} was created by an earlier attempt of this step; "
                f"not creating another: {result['url']}"
            ),
            None,
        )
        return result
    payload: dict[str, Any] = {"title": title, "body": _with_marker(_text(config, "body"), marker)}
    for key in ("labels", "assignees"):
        values = _strings(config, key)
        if values is not None:
            payload[key] = values
    data, _ = gh.call("POST", f"{base}/issues", payload)
    result = _created(data, "the new issue")
    ctx.log("info", f"created issue #{result['number']} in {owner}/{name}: {result['url']}", None)
    return result


def _comment(ctx: ActionContext, config: dict, key: str, kind: str) -> dict[str, Any]:
    gh = GitHub(ctx, write=True)
    owner, name = _repository(ctx, config, gh.api)
    number = _number(config, key)
    body = _text(config, "body", required=True)
    comments = f"{_repo_path(owner, name)}/issues/{number}/comments"
    marker = _marker(ctx)
    existing = gh.find(comments, {"per_page": "100"}, marker, lambda item: True, last_page=True)
    if existing is not None:
        result = _comment_result(existing)
        ctx.log(
            "info",
            (
                f"the comment on {kind} #{number} was made by an earlier attempt of this step; "
                f"not commenting again: {result['url']}"
            ),
            None,
        )
        return result
    data, _ = gh.call("POST", comments, {"body": _with_marker(body, marker)})
    result = _comment_result(data)
    ctx.log("info", f"commented on {kind} #{number} of {owner}/{name}: {result['url']}", None)
    return result


def issue_comment(ctx: ActionContext, config: dict) -> dict[str, Any]:
    return _comment(ctx, config, "issue", "issue")


def pr_comment(ctx: ActionContext, config: dict) -> dict[str, Any]:
    # A pull request's conversation comments are issue comments in the REST API.
    return _comment(ctx, config, "pr", "pull request")


def pr_create(ctx: ActionContext, config: dict) -> dict[str, Any]:
    gh = GitHub(ctx, write=True)
    owner, name = _repository(ctx, config, gh.api)
    title = _text(config, "title", required=True)
    repo = _repo_path(owner, name)
    # symbolic-ref names the branch even before its first commit, and fails on a detached HEAD.
    head = _text(config, "head") or _git(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
    if not head:
        raise StepError(
            "InvalidConfig",
            "`github-pr-create` has no `head`, and the project is not on a branch to take it from",
            guidance="set head: the branch to merge",
        )
    base = _text(config, "base")
    if not base:
        data, _ = gh.call("GET", repo)
        base = str(_field(data, "default_branch", f"{owner}/{name}"))
    marker = _marker(ctx)
    payload = {
        "title": title,
        "head": head,
        "base": base,
        "body": _with_marker(_text(config, "body"), marker),
        "draft": config.get("draft") is True,
    }
    try:
        data, _ = gh.call("POST", f"{repo}/pulls", payload)
        made = "created"
    except StepError as error:
        if error.code != "GitHubValidationFailed" or "already exists" not in error.message.lower():
            raise
        # Ours, from an earlier attempt of this step? Then it is the answer; else the refusal stands.
        qualified = head if ":" in head else f"{owner}:{head}"
        data = gh.find(
            f"{repo}/pulls",
            {"head": qualified, "base": base, "state": "open", "per_page": "100"},
            marker,
            lambda item: True,
            last_page=False,
        )
        if data is None:
            raise
        made = "was created by an earlier attempt of this step; not creating another:"
    result = {**_created(data, "the pull request"), "waitForReview": config.get("waitForReview") is True}
    ctx.log("info", f"pull request #{result['number']} ({head} into {base}) {made} {result['url']}", None)
    return result


def repo(ctx: ActionContext, config: dict) -> dict[str, Any]:
    gh = GitHub(ctx, write=False)
    owner, name = _repository(ctx, config, gh.api)
    data, _ = gh.call("GET", _repo_path(owner, name))
    what = f"{owner}/{name}"
    found_owner = _field(data, "owner", what)
    return {
        "owner": found_owner.get("login") if isinstance(found_owner, dict) else str(found_owner),
        "name": _field(data, "name", what),
        "fullName": _field(data, "full_name", what),
        "defaultBranch": _field(data, "default_branch", what),
        "url": _field(data, "html_url", what),
        "id": data.get("id"),
        "private": data.get("private"),
        "visibility": data.get("visibility"),
        "description": data.get("description"),
        "archived": data.get("archived"),
        "fork": data.get("fork"),
        "cloneUrl": data.get("clone_url"),
        "sshUrl": data.get("ssh_url"),
        "topics": data.get("topics") or [],
    }


ACTIONS = {
    "github-issue-create": issue_create,
    "github-issue-comment": issue_comment,
    "github-pr-create": pr_create,
    "github-pr-comment": pr_comment,
    "github-repo": repo,
}
