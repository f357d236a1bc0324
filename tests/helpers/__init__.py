"""What the tests share: fixtures (`fixtures.py`, loaded by tests/conftest.py), a driver of
throwaway projects, local fakes of GitHub's API and of HTTP servers, a language-server
client, plugin wheels, attack payloads, and programs the tests run in processes of their
own (`kai_agent.py`, `kept_temp_catalyst.py`)."""
