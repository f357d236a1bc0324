"""Which repository a checkout is, and the state URL as messages show it."""

from __future__ import annotations

import pytest

from catalyst_dsl.runtime.errors import RunAbort
from catalyst_dsl.runtime.state.shared.repository import normal_remote
from catalyst_dsl.runtime.state.shared.settings import shown_url, state_url


@pytest.mark.parametrize(
    "remote",
    [
        "https://github.com/acme/app.git",
        "https://x-access-token:ghs_secret@github.com/acme/app",
        "git@github.com:acme/app.git",
        "ssh://git@GitHub.com:22/acme/app.git/",
        "github.com:acme/app",
    ],
)
def test_every_clone_of_one_remote_is_one_repository(remote):
    assert normal_remote(remote) == "github.com/acme/app"


def test_a_token_in_a_remote_never_reaches_the_name():
    assert "ghs_secret" not in normal_remote("https://ghs_secret@github.com/acme/app")


@pytest.mark.parametrize(
    "url, shown",
    [
        ("postgresql://ann:hunter2@db:5432/runs", "postgresql://ann:***@db:5432/runs"),
        ("postgresql://db/runs?sslmode=require&password=hunter2", "postgresql://db/runs?sslmode=require&password=***"),
        ("postgres://ann@db/runs", "postgres://ann@db/runs"),
    ],
)
def test_a_password_is_never_shown(url, shown):
    assert shown_url(url) == shown


def test_the_environment_wins_over_the_users_setting():
    assert state_url("postgresql://b/x", {"CATALYST_STATE_URL": "postgresql://a/x"}) == "postgresql://a/x"
    assert state_url("postgresql://b/x", {}) == "postgresql://b/x"
    assert state_url(None, {}) is None


def test_another_database_is_refused_without_its_password():
    with pytest.raises(RunAbort) as refused:
        state_url(None, {"CATALYST_STATE_URL": "mysql://ann:hunter2@db/runs"})
    assert "hunter2" not in refused.value.message and "PostgreSQL only" in refused.value.message
