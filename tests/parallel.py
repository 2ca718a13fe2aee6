"""Servers for a run spread over processes (pytest-xdist, `make test`): one embedded PostgreSQL
for the whole run, started by the first process that needs it and stopped by the controller,
and a database of its own for each process, there or in the server TEST_DATABASE_URL names."""

import asyncio
import concurrent.futures
import fcntl
import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from infra.cli.embedded import EmbeddedPostgres, write_private

WORKER = "PYTEST_XDIST_WORKER"  # set by xdist in each of its processes: gw0, gw1, ...
RUN = "PYTEST_XDIST_TESTRUNUID"


def worker() -> str | None:
    """This process's name in the run, None outside one spread over processes."""
    return os.environ.get(WORKER)


def workers() -> int:
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))


def _folder(run: str) -> Path:
    return Path(tempfile.gettempdir()) / f"trainplate-tests-{run}"


def shared_postgres() -> str:
    """The URL of the run's embedded PostgreSQL, started now if no process has yet (under a
    lock, so only one does)."""
    folder = _folder(os.environ[RUN])
    folder.mkdir(exist_ok=True)
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = folder / "url"
        if not kept.exists():
            write_private(kept, EmbeddedPostgres(folder / "postgres").start())
        return kept.read_text()


def stop_shared_postgres(run: str) -> None:
    """Stop the run's PostgreSQL, if a process started one, and remove its data."""
    folder = _folder(run)
    if (folder / "postgres" / "postmaster.pid").exists():
        EmbeddedPostgres(folder / "postgres").stop()
    shutil.rmtree(folder, ignore_errors=True)


def database_of(server_url: str, name: str) -> str:
    """The URL of a database `name` made afresh in the server of `server_url`."""

    async def make() -> None:
        conn = await asyncpg.connect(server_url)
        try:
            await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            await conn.execute(f"CREATE DATABASE {name}")
        finally:
            await conn.close()

    # In a thread: asyncio.run must not replace the event loop pytest-asyncio runs the tests in.
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, make()).result()
    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))
