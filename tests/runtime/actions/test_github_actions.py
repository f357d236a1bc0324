"""The github-* actions against a fake GitHub REST API (tests/helpers/fake_github.py).

Most tests call the actions directly with an ActionContext over a real gateway; the
`test_cli_*` tests run playbooks through `catalyst run` and need the actions registered
in catalyst_dsl/runtime/actions/__init__.py.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from catalyst_dsl.project.config import ProjectConfig
from catalyst_dsl.runtime.actions import github as gh
from catalyst_dsl.runtime.actions import http as http_actions
from catalyst_dsl.runtime.errors import StepError
from catalyst_dsl.runtime.simulation.recording import RecordingPerformer

from tests.helpers import fake_github as fakes
from tests.helpers import http_servers as servers

TOKEN = fakes.TOKEN
ACTIONS = gh.ACTIONS


@pytest.fixture(autouse=True)
def no_ambient_token(monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)


def context(tmp_path, fake, action: str, *, token: str | None = TOKEN, path: str = "steps/0", performer=None):
    return servers.action_context(
        tmp_path,
        action,
        settings=ProjectConfig(github_api_url=fake.url),
        secrets={"github-token": token} if token else {},
        path=path,
        performer=performer,
    )


def failure(action: str, ctx, config) -> StepError:
    with pytest.raises(StepError) as caught:
        ACTIONS[action](ctx, config)
    return caught.value


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=root,
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"},
    )


def git_project(tmp_path, remote: str | None, branch: str = "feature") -> None:
    root = tmp_path / "project"
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    git(root, "checkout", "-q", "-b", branch)
    if remote is not None:
        git(root, "remote", "add", "origin", remote)


# -- creating ---------------------------------------------------------------------------------------------


def test_issue_create_returns_number_url_and_id(tmp_path, fake):
    ctx, log = context(tmp_path, fake, "github-issue-create")
    result = ACTIONS["github-issue-create"](
        ctx,
        {"title": "Broken", "body": "It broke.", "labels": ["bug"], "assignees": ["ann"], "repository": "acme/widgets"},
    )
    [issue] = fake.issues()
    assert result == {"number": 1, "url": "https://github.com/acme/widgets/issues/1", "id": issue["id"]}
    assert (
        issue["title"] == "Broken" and issue["labels"] == [{"name": "bug"}] and issue["assignees"] == [{"login": "ann"}]
    )
    assert issue["body"].startswith("It broke.\n\n<!-- catalyst: run 20260101-000000-t-001, step steps/0 -->")
    [post] = fake.writes()
    sent = lambda name: http_actions.header(post["headers"], name)  # noqa: E731 - urllib changes the case of names
    assert sent("Authorization") == f"Bearer {TOKEN}"
    assert sent("Accept") == "application/vnd.github+json"
    assert sent("X-GitHub-Api-Version") == gh.API_VERSION
    assert TOKEN not in log.text()
    assert "created issue #1" in log.text()


def test_issue_and_pull_request_comments_return_id_and_url(tmp_path, fake):
    fake.add_issue("acme/widgets", "an issue")
    ctx, _ = context(tmp_path, fake, "github-issue-comment")
    first = ACTIONS["github-issue-comment"](ctx, {"issue": 1, "body": "on it", "repository": "acme/widgets"})
    ctx, _ = context(tmp_path, fake, "github-pr-comment", path="steps/1")
    second = ACTIONS["github-pr-comment"](ctx, {"pr": "#1", "body": "looks good", "repository": "acme/widgets"})
    comments = fake.comments[("acme/widgets", 1)]
    assert first == {"id": comments[0]["id"], "url": comments[0]["html_url"]}
    assert second == {"id": comments[1]["id"], "url": comments[1]["html_url"]}
    assert comments[1]["body"].startswith("looks good\n\n<!-- catalyst:")


def test_a_comment_on_a_missing_issue_is_not_found(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-issue-comment")
    error = failure("github-issue-comment", ctx, {"issue": 9, "body": "x", "repository": "acme/widgets"})
    assert error.code == "GitHubNotFound" and "/repos/acme/widgets/issues/9/comments" in error.message


def test_pr_create_opens_a_pull_request(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-pr-create")
    result = ACTIONS["github-pr-create"](
        ctx, {"title": "Add it", "head": "feature", "base": "main", "draft": True, "repository": "acme/widgets"}
    )
    [pull] = fake.pulls()
    assert result == {
        "number": 1,
        "url": "https://github.com/acme/widgets/pull/1",
        "id": pull["id"],
        "waitForReview": False,
    }
    assert pull["draft"] is True and pull["head"]["ref"] == "feature" and pull["base"]["ref"] == "main"


def test_pr_create_takes_the_base_from_the_default_branch(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-pr-create")
    ACTIONS["github-pr-create"](ctx, {"title": "t", "head": "feature", "repository": "acme/widgets"})
    assert fake.pulls()[0]["base"]["ref"] == "main"
    assert [r["method"] for r in fake.requests] == ["GET", "POST"]


def test_pr_create_takes_repository_and_head_from_git(tmp_path, fake):
    git_project(tmp_path, "git@github.com:acme/widgets.git", branch="other")
    ctx, _ = context(tmp_path, fake, "github-pr-create")
    ACTIONS["github-pr-create"](ctx, {"title": "t", "base": "main"})
    assert fake.pulls()[0]["head"]["label"] == "acme:other"


def test_pr_create_on_a_detached_head_needs_head(tmp_path, fake):
    git_project(tmp_path, "https://github.com/acme/widgets.git")
    root = tmp_path / "project"
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "one")
    git(root, "checkout", "-q", "--detach")
    ctx, _ = context(tmp_path, fake, "github-pr-create")
    error = failure("github-pr-create", ctx, {"title": "t", "base": "main"})
    assert error.code == "InvalidConfig" and "head" in error.message
    assert fake.writes() == []


def test_wait_for_review_is_in_the_result(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-pr-create")
    result = ACTIONS["github-pr-create"](
        ctx, {"title": "t", "head": "feature", "base": "main", "waitForReview": True, "repository": "acme/widgets"}
    )
    assert result["waitForReview"] is True


def test_an_invalid_pull_request_is_a_validation_failure_with_githubs_message(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-pr-create")
    error = failure(
        "github-pr-create", ctx, {"title": "t", "head": "nope", "base": "main", "repository": "acme/widgets"}
    )
    assert error.code == "GitHubValidationFailed"
    assert "Validation Failed" in error.message and "PullRequest.head: invalid" in error.message
    assert error.metadata["status"] == 422


def test_the_validation_switch_gives_githubs_message(tmp_path, fake):
    fake.invalid = "Issues are disabled for this repo"
    ctx, _ = context(tmp_path, fake, "github-issue-create")
    error = failure("github-issue-create", ctx, {"title": "t", "repository": "acme/widgets"})
    assert error.code == "GitHubValidationFailed" and "Issues are disabled for this repo" in error.message


# -- reading ---------------------------------------------------------------------------------------------


def test_github_repo_describes_the_repository(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-repo")
    result = ACTIONS["github-repo"](ctx, {"repository": "https://github.com/acme/widgets.git"})
    assert {k: result[k] for k in ("owner", "name", "fullName", "defaultBranch", "url")} == {
        "owner": "acme",
        "name": "widgets",
        "fullName": "acme/widgets",
        "defaultBranch": "main",
        "url": "https://github.com/acme/widgets",
    }
    assert result["private"] is False and result["topics"] == ["tools"]


def test_github_repo_reads_a_public_repository_without_a_token(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-repo", token=None)
    assert ACTIONS["github-repo"](ctx, {"repository": "acme/widgets"})["defaultBranch"] == "main"
    assert "Authorization" not in fake.requests[0]["headers"]
    error = failure("github-repo", ctx, {"repository": "acme/vault"})
    assert error.code == "GitHubNotFound" and "private" in error.guidance


def test_github_repo_takes_the_repository_from_the_origin_remote(tmp_path, fake):
    git_project(tmp_path, "ssh://git@github.com/acme/vault.git")
    ctx, _ = context(tmp_path, fake, "github-repo")
    assert ACTIONS["github-repo"](ctx, {})["defaultBranch"] == "trunk"


def test_a_what_if_reads_the_repository_only_with_refresh(tmp_path, fake):
    from catalyst_dsl.runtime.simulation.recording import Unknowable

    ctx, _ = context(tmp_path, fake, "github-repo", performer=RecordingPerformer())
    with pytest.raises(Unknowable, match="--refresh"):
        ACTIONS["github-repo"](ctx, {"repository": "acme/widgets"})
    ctx, _ = context(tmp_path, fake, "github-repo", performer=RecordingPerformer(refresh=True))
    assert ACTIONS["github-repo"](ctx, {"repository": "acme/widgets"})["fullName"] == "acme/widgets"


# -- tokens ---------------------------------------------------------------------------------------------


def test_the_token_falls_back_to_github_token(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    ctx, _ = context(tmp_path, fake, "github-issue-create", token=None)
    assert ACTIONS["github-issue-create"](ctx, {"title": "t", "repository": "acme/widgets"})["number"] == 1
    assert fake.writes()[0]["headers"]["Authorization"] == f"Bearer {TOKEN}"


def test_the_secret_wins_over_github_token(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ambient-wrong-token")
    ctx, _ = context(tmp_path, fake, "github-issue-create")
    ACTIONS["github-issue-create"](ctx, {"title": "t", "repository": "acme/widgets"})
    assert fake.writes()[0]["headers"]["Authorization"] == f"Bearer {TOKEN}"


def test_creating_without_a_token_fails_before_any_request(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-issue-create", token=None)
    error = failure("github-issue-create", ctx, {"title": "t", "repository": "acme/widgets"})
    assert error.code == "GitHubAuthError" and "GITHUB_TOKEN" in error.guidance
    assert fake.requests == []


def test_a_token_is_never_sent_over_plain_http_to_another_machine(tmp_path, fake):
    ctx, _ = servers.action_context(
        tmp_path,
        "github-repo",
        settings=ProjectConfig(github_api_url="http://github.example.test/api/v3"),
        secrets={"github-token": TOKEN},
    )
    error = failure("github-repo", ctx, {"repository": "acme/widgets"})
    assert error.code == "InsecureTransport" and "github.example.test" in error.message
    assert "https://" in error.guidance and TOKEN not in error.message


def test_a_refused_token_is_an_auth_error(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-issue-create", token="wrong")
    error = failure("github-issue-create", ctx, {"title": "t", "repository": "acme/widgets"})
    assert error.code == "GitHubAuthError" and "Bad credentials" in error.message
    fake.unauthorized = True
    ctx, _ = context(tmp_path, fake, "github-repo")
    assert failure("github-repo", ctx, {"repository": "acme/widgets"}).code == "GitHubAuthError"


# -- rate limits and outages ---------------------------------------------------------------------------------


def test_a_spent_rate_limit_says_when_it_resets(tmp_path, fake, waits):
    fake.rate_limited = True
    ctx, _ = context(tmp_path, fake, "github-repo")
    error = failure("github-repo", ctx, {"repository": "acme/widgets"})
    assert error.code == "GitHubRateLimited"
    assert "resets at 00:00:00 UTC" in error.message
    assert error.metadata["resetsAt"] == "2100-01-01T00:00:00Z"
    assert waits == [] and len(fake.requests) == 1


def test_a_429_is_rate_limited_and_not_waited_out(tmp_path, fake, waits):
    fake.too_many = True
    ctx, _ = context(tmp_path, fake, "github-repo")
    error = failure("github-repo", ctx, {"repository": "acme/widgets"})
    assert error.code == "GitHubRateLimited" and "wait 30s" in error.message
    assert waits == [] and len(fake.requests) == 1


def test_a_read_is_retried_after_a_server_error(tmp_path, fake, waits):
    fake.failures = 1
    ctx, _ = context(tmp_path, fake, "github-repo")
    assert ACTIONS["github-repo"](ctx, {"repository": "acme/widgets"})["name"] == "widgets"
    assert waits == [http_actions.RETRY_BASE] and len(fake.requests) == 2


def test_a_write_is_not_retried_after_a_server_error(tmp_path, fake, waits, monkeypatch):
    answer = fake.answer
    monkeypatch.setattr(
        fake,
        "answer",
        lambda method, *rest: (502, {"message": "Server Error"}, {}) if method == "POST" else answer(method, *rest),
    )
    ctx, _ = context(tmp_path, fake, "github-issue-create")
    error = failure("github-issue-create", ctx, {"title": "t", "repository": "acme/widgets"})
    assert error.code == "GitHubError" and "502" in error.message and "Server Error" in error.message
    assert [r["method"] for r in fake.requests] == ["GET", "POST"]  # the look-up for an earlier attempt, then the write
    assert waits == []


# -- the repository -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("acme/widgets", ("acme", "widgets")),
        ("git@github.com:acme/widgets.git", ("acme", "widgets")),
        ("https://github.com/acme/widgets", ("acme", "widgets")),
        ("https://x-access-token:abc@github.com/acme/widgets.git", ("acme", "widgets")),
        ("ssh://git@github.com:22/acme/widgets.git", ("acme", "widgets")),
        ("https://github.example.com/acme/widgets", ("acme", "widgets")),
        ("https://gitlab.com/acme/widgets", None),
        ("git@gitlab.com:acme/widgets.git", None),
        ("acme/widgets/extra", None),
        ("acme/..", None),
        ("", None),
    ],
)
def test_parse_repository(text, expected):
    assert gh.parse_repository(text, gh._hosts("https://github.example.com/api/v3")) == expected


def test_without_repository_or_remote_the_repository_is_unknown(tmp_path, fake):
    git_project(tmp_path, None)
    ctx, _ = context(tmp_path, fake, "github-repo")
    error = failure("github-repo", ctx, {})
    assert error.code == "RepositoryUnknown" and "repository: owner/name" in error.guidance


def test_a_remote_that_is_not_github_is_unknown_and_its_credentials_are_not_shown(tmp_path, fake):
    git_project(tmp_path, "https://bob:hunter2@gitlab.com/acme/widgets.git")
    ctx, log = context(tmp_path, fake, "github-repo")
    error = failure("github-repo", ctx, {})
    assert error.code == "RepositoryUnknown" and "gitlab.com/acme/widgets.git" in error.message
    assert "hunter2" not in error.message and "hunter2" not in log.text()


def test_a_malformed_repository_is_a_config_error(tmp_path, fake):
    ctx, _ = context(tmp_path, fake, "github-repo")
    assert failure("github-repo", ctx, {"repository": "just-a-name"}).code == "InvalidConfig"
    assert fake.requests == []


# -- no duplicates when a step runs again -----------------------------------------------------------------------------


def test_an_issue_whose_answer_was_lost_is_not_created_twice(tmp_path, fake):
    fake.lose_next_answer = True
    ctx, _ = context(tmp_path, fake, "github-issue-create", path="steps/3")
    config = {"title": "Once", "body": "only once", "repository": "acme/widgets"}
    assert failure("github-issue-create", ctx, config).code == "ConnectionError"
    ctx, log = context(tmp_path, fake, "github-issue-create", path="steps/3")
    result = ACTIONS["github-issue-create"](ctx, config)
    assert len(fake.issues()) == 1 and result["number"] == 1
    assert "earlier attempt" in log.text()
    # another step (or another run) makes its own
    ctx, _ = context(tmp_path, fake, "github-issue-create", path="steps/4")
    assert ACTIONS["github-issue-create"](ctx, config)["number"] == 2


def test_a_comment_whose_answer_was_lost_is_found_on_the_last_page(tmp_path, fake):
    fake.add_issue("acme/widgets", "busy")
    fake.add_comments("acme/widgets", 1, [f"comment {n}" for n in range(150)])
    fake.lose_next_answer = True
    ctx, _ = context(tmp_path, fake, "github-issue-comment")
    config = {"issue": 1, "body": "mine", "repository": "acme/widgets"}
    assert failure("github-issue-comment", ctx, config).code == "ConnectionError"
    ctx, _ = context(tmp_path, fake, "github-issue-comment")
    result = ACTIONS["github-issue-comment"](ctx, config)
    comments = fake.comments[("acme/widgets", 1)]
    assert len(comments) == 151 and result["id"] == comments[-1]["id"]
    assert any(r["query"].get("page") == "2" for r in fake.requests)


def test_a_pull_request_whose_answer_was_lost_is_not_opened_twice(tmp_path, fake):
    fake.lose_next_answer = True
    config = {"title": "t", "head": "feature", "base": "main", "repository": "acme/widgets"}
    ctx, _ = context(tmp_path, fake, "github-pr-create")
    assert failure("github-pr-create", ctx, config).code == "ConnectionError"
    ctx, _ = context(tmp_path, fake, "github-pr-create")
    assert ACTIONS["github-pr-create"](ctx, config)["number"] == 1
    assert len(fake.pulls()) == 1


def test_a_pull_request_someone_else_opened_is_still_refused(tmp_path, fake):
    config = {"title": "t", "head": "feature", "base": "main", "repository": "acme/widgets"}
    ctx, _ = context(tmp_path, fake, "github-pr-create", path="steps/1")
    ACTIONS["github-pr-create"](ctx, config)
    ctx, _ = context(tmp_path, fake, "github-pr-create", path="steps/2")
    error = failure("github-pr-create", ctx, config)
    assert error.code == "GitHubValidationFailed" and "already exists" in error.message


# -- through `catalyst run` (needs the actions registered) ---------------------------------------------------------


def _project(project, fake, monkeypatch) -> None:
    project.user_settings(f'github-api-url = "{fake.url}"\n')
    monkeypatch.setenv("CATALYST_SECRET_GITHUB_TOKEN", TOKEN)


def _playbook(project, name: str, steps: str) -> None:
    project.playbook(
        name,
        f"name: {name}\ndescription: github\nowner: Engineer\nsteps:\n"
        + textwrap.indent(textwrap.dedent(steps).lstrip("\n"), "  "),
    )


def _state_text(project) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace") for p in project.state_dir.rglob("*") if p.is_file()
    )


def test_cli_an_issue_and_a_comment(project, fake, monkeypatch):
    _project(project, fake, monkeypatch)
    _playbook(
        project,
        "report",
        """
        - name: issue
          github-issue-create: Nightly build failed
          body: See the log.
          repository: acme/widgets
        - name: note
          github-issue-comment:
            issue: "${{ get('issue').number }}"
            body: "Tracking in #${{ get('issue').number }}"
            repository: acme/widgets
        - return:
            number: "${{ get('issue').number }}"
            comment: "${{ get('note').url }}"
    """,
    )
    result = project.run("report")
    assert result.exit_code == 0, result.output
    outputs = project.snapshot()["outputs"]
    assert outputs["number"] == 1 and outputs["comment"].startswith(
        "https://github.com/acme/widgets/issues/1#issuecomment-"
    )
    assert fake.comments[("acme/widgets", 1)][0]["body"].startswith("Tracking in #1")
    assert TOKEN not in result.output and TOKEN not in _state_text(project)


PROPOSE = """
    - name: pr
      github-pr-create: Add the widget
      head: feature
      base: main
      repository: acme/widgets
      waitForReview: true
    - return:
        number: "${{ get('pr').number }}"
        waited: "${{ get('pr').waitForReview }}"
"""


def test_cli_a_pull_request_with_wait_for_review_pauses_the_run_until_approved(project, fake, monkeypatch):
    _project(project, fake, monkeypatch)
    _playbook(project, "propose", PROPOSE)
    result = project.run("propose")
    assert result.exit_code == 4, result.output
    assert (
        "⏸ paused at pr: review pull request #1 before the run goes on: https://github.com/acme/widgets/pull/1"
        in result.output
    )
    run_id = project.run_id()
    assert project.snapshot(run_id)["pause"]["path"] == "steps/0/review"
    assert project.cli("resume", run_id).exit_code == 4  # not reviewed yet: still waiting
    assert project.cli("approve", run_id, "--as", "Engineer").exit_code == 0
    resumed = project.cli("resume", run_id)
    assert resumed.exit_code == 0, resumed.output
    assert project.snapshot(run_id)["outputs"] == {"number": 1, "waited": True}
    assert len(fake.pulls()) == 1  # the resume did not open it again


def test_cli_a_review_asking_for_changes_fails_the_step_through_its_policy(project, fake, monkeypatch):
    _project(project, fake, monkeypatch)
    _playbook(project, "propose", PROPOSE)
    assert project.run("propose").exit_code == 4
    run_id = project.run_id()
    token = project.cli("runs", "token", run_id, "--as", "Engineer", "--decision", "request-changes").output.strip()
    assert project.cli("approve", run_id, "--token", token, "--comment", "split it up").exit_code == 0
    failed = project.cli("resume", run_id)
    assert failed.exit_code == 2
    assert (
        project.snapshot(run_id)["error"]["code"] == "ChangesRequested"
        and "split it up" in project.snapshot(run_id)["error"]["message"]
    )


def test_a_plan_shows_the_review_pause(project, fake, monkeypatch):
    _project(project, fake, monkeypatch)
    _playbook(project, "propose", PROPOSE)
    plan = json.loads(project.run("propose", "--what-if", "--format", "json").output)
    assert [(s["path"], s["change"]) for s in plan["steps"]][:2] == [
        ("steps/0", "unknown"),
        ("steps/0/review", "would-pause"),
    ]
    assert fake.pulls() == []


def test_cli_github_repo_reads_the_origin_remote(project, fake, monkeypatch):
    _project(project, fake, monkeypatch)
    git(project.root, "init", "-q")
    git(project.root, "remote", "add", "origin", "https://github.com/acme/widgets.git")
    _playbook(
        project,
        "about",
        """
        - name: repo
          github-repo: ~
        - return:
            branch: "${{ get('repo').defaultBranch }}"
            full: "${{ get('repo').fullName }}"
    """,
    )
    result = project.run("about")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"branch": "main", "full": "acme/widgets"}


def test_cli_resuming_after_a_lost_answer_creates_no_duplicate(project, fake, monkeypatch):
    _project(project, fake, monkeypatch)
    _playbook(
        project,
        "once",
        """
        - name: issue
          github-issue-create: Exactly once
          repository: acme/widgets
        - return:
            number: "${{ get('issue').number }}"
    """,
    )
    fake.lose_next_answer = True
    first = project.run("once")
    assert first.exit_code == 2, first.output
    assert project.snapshot()["failures"][0]["code"] == "ConnectionError"
    assert len(fake.issues()) == 1  # GitHub made it; the answer was lost
    resumed = project.cli("resume", project.run_id())
    assert resumed.exit_code == 0, resumed.output
    assert project.snapshot()["outputs"] == {"number": 1}
    assert len(fake.issues()) == 1


def test_cli_a_rate_limit_is_caught_by_its_code(project, fake, monkeypatch):
    _project(project, fake, monkeypatch)
    fake.rate_limited = True
    _playbook(
        project,
        "limited",
        """
        - try:
            - github-repo: acme/widgets
          catch:
            - code: GitHubRateLimited
              steps:
                - return:
                    caught: "${{ get('$error').code }}"
    """,
    )
    result = project.run("limited")
    assert result.exit_code == 0, result.output
    assert project.snapshot()["outputs"] == {"caught": "GitHubRateLimited"}


@pytest.mark.parametrize("reset", ["\u00b2", "9" * 5000])
def test_a_rate_limit_reset_python_cannot_read_as_a_time_is_not_said(reset):
    from catalyst_dsl.runtime.effects.network import HttpResponse

    said, at = gh._reset(HttpResponse(403, {"X-RateLimit-Reset": reset}, b""), None)
    assert at is None and "did not say when it resets" in said
