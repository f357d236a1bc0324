"""Secrets from the OS keychain (`secrets-keyring = true`), through the keyring library:
looked up after the environment and before the secrets file, under the service
`catalyst` only, and a keychain that cannot be used is an error with the fix."""

from __future__ import annotations

import pytest

keyring = pytest.importorskip("keyring")
from keyring.backend import KeyringBackend  # noqa: E402
from keyring.errors import KeyringLocked, NoKeyringError  # noqa: E402

from catalyst_dsl.runtime.values.secrets import KEYRING_SERVICE, KeyringSecretProvider, SecretFileError  # noqa: E402
from tests.runtime.lifecycle.test_lifecycle import SECRET  # noqa: E402


class Keychain(KeyringBackend):
    """A keychain in memory, as the library's backends answer: None for a missing entry."""

    priority = 1

    def __init__(self, entries=None, refusal: Exception | None = None) -> None:
        super().__init__()
        self.entries = dict(entries or {})
        self.refusal = refusal
        self.asked: list[tuple[str, str]] = []

    def get_password(self, service, username):
        self.asked.append((service, username))
        if self.refusal is not None:
            raise self.refusal
        return self.entries.get((service, username))

    def set_password(self, service, username, password):
        self.entries[(service, username)] = password

    def delete_password(self, service, username):
        self.entries.pop((service, username), None)


@pytest.fixture
def keychain():
    before = keyring.get_keyring()
    chain = Keychain({(KEYRING_SERVICE, "api-token"): "from-the-keychain", ("other-app", "api-token"): "not-ours"})
    keyring.set_keyring(chain)
    yield chain
    keyring.set_keyring(before)


def test_a_secret_comes_from_the_keychain_and_is_masked(project, keychain):
    project.settings("secrets-keyring = true\n")
    project.playbook(
        "secretive",
        SECRET.replace(
            'token length ${{ get(\'api-token\').length }}"',
            "token length ${{ get('api-token').length }}\"\n      - log-info: \"{{api-token}}\"",
        ),
    )
    result = project.run("secretive")
    assert result.exit_code == 0, result.output
    assert "token length 17" in result.output
    assert "from-the-keychain" not in result.output and "***" in result.output
    assert keychain.asked == [(KEYRING_SERVICE, "api-token")]


def test_the_keychain_is_read_only_when_the_setting_says_so(project, keychain):
    project.playbook("secretive", SECRET)
    result = project.run("secretive")
    assert result.exit_code != 0
    assert keychain.asked == []


def test_the_environment_wins_over_the_keychain(project, keychain, monkeypatch):
    project.settings("secrets-keyring = true\n")
    monkeypatch.setenv("CATALYST_SECRET_API_TOKEN", "env")
    project.playbook("secretive", SECRET)
    result = project.run("secretive")
    assert result.exit_code == 0 and "token length 3" in result.output
    assert keychain.asked == []


def test_the_keychain_comes_before_the_secrets_file(project, keychain):
    import os

    project.settings('secrets-keyring = true\nsecrets-file = "secrets.env"\n')
    os.chmod(project.write("secrets.env", "api-token = from-the-secrets-file\n"), 0o600)
    project.playbook("secretive", SECRET)
    result = project.run("secretive")
    assert result.exit_code == 0 and "token length 17" in result.output
    del keychain.entries[(KEYRING_SERVICE, "api-token")]
    result = project.run("secretive")
    assert result.exit_code == 0 and "token length 21" in result.output


def test_only_catalysts_service_is_read():
    chain = Keychain({("other-app", "api-token"): "not-ours"})
    before = keyring.get_keyring()
    keyring.set_keyring(chain)
    try:
        assert KeyringSecretProvider().lookup("api-token") is None
    finally:
        keyring.set_keyring(before)
    assert chain.asked == [(KEYRING_SERVICE, "api-token")]


@pytest.mark.parametrize(
    "refusal, said",
    [
        (NoKeyringError("No recommended backend was available."), "this machine has none"),
        (KeyringLocked("Failed to unlock the collection!"), "it refused (KeyringLocked"),
    ],
)
def test_a_keychain_that_cannot_be_used_stops_the_run_with_the_fix(project, refusal, said):
    before = keyring.get_keyring()
    keyring.set_keyring(Keychain(refusal=refusal))
    try:
        project.settings("secrets-keyring = true\n")
        project.playbook("secretive", SECRET)
        result = project.run("secretive")
    finally:
        keyring.set_keyring(before)
    assert result.exit_code == 1, result.output
    assert f"cannot read secrets from the OS keychain: {said}" in result.output
    assert "Traceback" not in result.output and not project.snapshot_files()


def test_without_the_library_the_error_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "keyring", None)
    with pytest.raises(SecretFileError) as raised:
        KeyringSecretProvider()
    assert "keyring library is not installed" in raised.value.problem
    assert "catalyst-dsl[keyring]" in raised.value.fix
