"""A real PostgreSQL server for the tests and benchmarks of the shared state store, started
from the binaries installed on the machine (`initdb`, `pg_ctl`) in a directory of its own
and stopped at the end.

PostgreSQL refuses to run as root: a root test run starts it as the `postgres` user (the
system package makes one), through `setpriv`. The server listens on 127.0.0.1 at a free
port with `trust` authentication for its one role, `catalyst`: it is reachable only from
this machine and lives only as long as the tests.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from catalyst_dsl._internal.records import record

#: Where Debian's packages put each version's programs; the newest is used.
_BIN_DIRS = "/usr/lib/postgresql/*/bin"


@record
class Server:
    """A running server: its URL, data directory and the command prefix that runs as its user."""

    url: str
    data: Path
    port: int
    bin_dir: Path
    as_user: list[str]

    def ctl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*self.as_user, str(self.bin_dir / "pg_ctl"), "-D", str(self.data), *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.data.parent,
        )

    def restart(self) -> None:
        """Stop the server at once (open connections are cut) and start it again."""
        stopped = self.ctl("stop", "-m", "immediate", "-w")
        assert stopped.returncode == 0, stopped.stderr
        started = self.ctl("start", "-w", "-l", str(self.data / "server.log"))
        assert started.returncode == 0, started.stderr


def bin_dir() -> Path | None:
    """The directory of the newest installed PostgreSQL's programs; None when there is none."""
    found = sorted(glob.glob(_BIN_DIRS), key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0)
    for candidate in reversed(found):
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_user() -> tuple[list[str], int | None, int | None]:
    """The prefix that runs a program as a user PostgreSQL accepts, and that user's ids."""
    if os.geteuid() != 0:
        return [], None, None
    user = pwd.getpwnam("postgres")
    prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"]
    return prefix, user.pw_uid, user.pw_gid


@contextlib.contextmanager
def running_server() -> Iterator[Server]:
    """A fresh server for the duration of the `with` block."""
    programs = bin_dir()
    if programs is None:
        raise RuntimeError("PostgreSQL is not installed: no initdb under /usr/lib/postgresql/*/bin or on PATH")
    prefix, uid, gid = _as_user()
    # Under /tmp when started as another user: a test's own temporary folders (TMPDIR) are
    # private to the user running the tests, and that user cannot enter them.
    home = Path(tempfile.mkdtemp(prefix="catalyst-pg-", dir="/tmp" if uid is not None else None))
    data = home / "data"
    try:
        if uid is not None:
            os.chown(home, uid, gid)
        init = subprocess.run(
            [*prefix, str(programs / "initdb"), "-D", str(data), "-U", "catalyst", "--auth=trust", "-E", "UTF8"],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=home,
        )
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stderr or init.stdout}")
        port = _free_port()
        with open(data / "postgresql.conf", "a") as conf:
            conf.write(
                f"\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{data}'\n"
                "max_connections = 100\nfsync = on\nsynchronous_commit = on\n"
            )
        server = Server(f"postgresql://catalyst@127.0.0.1:{port}/postgres", data, port, programs, prefix)
        started = server.ctl("start", "-w", "-l", str(data / "server.log"))
        if started.returncode != 0:
            log = (data / "server.log").read_text(errors="replace") if (data / "server.log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {started.stderr}\n{log}")
        try:
            yield server
        finally:
            server.ctl("stop", "-m", "fast", "-w")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def fresh_database(server: Server, name: str) -> str:
    """A new, empty database on `server`; its URL."""
    import psycopg

    with psycopg.connect(server.url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return server.url.rsplit("/", 1)[0] + f"/{name}"
