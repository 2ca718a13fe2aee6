"""Shared fixtures: real PostgreSQL and NATS (embedded unless TEST_DATABASE_URL / TEST_NATS_URL)."""

import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Final

import asyncpg
import pytest

from domain.events import EventMetadata
from infra.bootstrap import create_pool
from infra.cli.embedded import EmbeddedNats, EmbeddedPostgres
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.settings import DatabaseSettings
from services.ports.event_store import EventStore
from tests.fakes import InMemoryStreams
from tests.sample_events import CONTRACT_CODEC

ACTOR = EventMetadata(actor_subject="test-suite", actor_kind="system")

# The browser tier (tests/browser) drives Debian's Chromium. Outside CI, where there is none, the
# tier is left out and the summary says so in one line; in CI (`CI` set) its absence fails.
CHROMIUM = "/usr/bin/chromium"
BROWSER_TIER = Path(__file__).parent / "browser"


def _without_browser() -> bool:
    return not Path(CHROMIUM).exists() and not os.environ.get("CI")


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    if collection_path == BROWSER_TIER and _without_browser():
        return True
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _without_browser():
        terminalreporter.write_line(f"browser tier skipped: no Chromium at {CHROMIUM}")


# A test reaches a server through one of these (or a fixture built on one, such as `pool`), and
# must then be marked `integration`: that is the mark `make quick` leaves out.
# A test server needs no durability against a power cut: a stopped or killed server still
# recovers every commit (the fault tests), as the operating system holds what was written.
FAST = ("fsync=off", "full_page_writes=off")
SERVER_FIXTURES = frozenset({"postgres_url", "nats_url", "server_dir", "broker"})
_RUNNING = pytest.StashKey[pytest.Item]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.config.stash[_RUNNING] = item
    _require_integration(item, SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())))


def _require_integration(item: pytest.Item, servers: set[str] | frozenset[str]) -> None:
    if servers and item.get_closest_marker("integration") is None:
        pytest.fail(
            f"{item.nodeid} needs a server ({', '.join(sorted(servers))}): "
            "mark it `integration` (pytestmark = pytest.mark.integration)",
            pytrace=False,
        )


def _server_for(request: pytest.FixtureRequest, fixture: str) -> None:
    """Refuse a server to a test not marked `integration` that asked for one at run time
    (`request.getfixturevalue`), where the check at set-up cannot see it."""
    if (item := request.config.stash.get(_RUNNING, None)) is not None:
        _require_integration(item, {fixture})


@pytest.fixture(scope="session")
def postgres_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A server of this process's own, also in a run over processes (pytest-xdist): readers of
    the log stop at the server's oldest open transaction (pg_snapshot_xmin), in any database."""
    _server_for(request, "postgres_url")
    if url := os.environ.get("TEST_DATABASE_URL"):
        _alone("TEST_DATABASE_URL")
        yield url
        return
    with _outside_pytest() as data_dir, EmbeddedPostgres(data_dir, settings=FAST) as server:
        yield server.url


def _alone(variable: str) -> None:
    """A server given in `variable` serves one process: several would wait on each other's
    transactions (PostgreSQL) or take each other's messages (NATS)."""
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
        pytest.fail(f"{variable} serves one process: run pytest without -n", pytrace=False)


@contextlib.contextmanager
def _outside_pytest() -> Iterator[Path]:
    """A folder for a server's data, not under pytest's own tmp folder: every pytest run that
    starts on this machine makes that private to its user again (0700), which would cut a
    server running as its own user (as root, pgserver runs PostgreSQL as `pgserver`) off from
    its data in the middle of another run."""
    found = Path(tempfile.mkdtemp(prefix="trainplate-server-"))
    try:
        yield found
    finally:
        shutil.rmtree(found, ignore_errors=True)


@pytest.fixture
def server_dir() -> Iterator[Path]:
    """A folder for the data of servers a test starts itself (`_outside_pytest`)."""
    with _outside_pytest() as found:
        yield found


@pytest.fixture(scope="session")
def nats_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    _server_for(request, "nats_url")
    if url := os.environ.get("TEST_NATS_URL"):
        _alone("TEST_NATS_URL")
        yield url
        return
    with EmbeddedNats(tmp_path_factory.mktemp("nats")) as server:
        yield server.url


@pytest.fixture
def replica_work_dir() -> Iterator[Path]:
    """A local backend's work dir that its replicas' user can reach, as a data dir is (0711:
    others pass through it, never list it); pytest's own tmp dirs are private to their user."""
    found = Path(tempfile.mkdtemp(prefix="trainplate-local-"))
    found.chmod(0o711)
    yield found
    shutil.rmtree(found, ignore_errors=True)


@pytest.fixture(scope="session")
def database_settings(postgres_url: str) -> DatabaseSettings:
    return DatabaseSettings(url=postgres_url, pool_max=24)


@pytest.fixture(scope="session")
async def pool(database_settings: DatabaseSettings) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(database_settings, application_name="trainplate-tests")
    async with pool.acquire() as conn:
        await apply_migrations(conn)
    yield pool
    await pool.close()


@pytest.fixture
async def clean_pool(pool: asyncpg.Pool) -> asyncpg.Pool:
    """The shared pool over an empty database: no events, checkpoints, write-side rows or read
    models (every table but the migrations' own), so each test starts from nothing."""
    tables = [row["name"] for row in await pool.fetch(_TABLES)]
    sequences = [row["name"] for row in await pool.fetch(_SEQUENCES)]
    async with pool.acquire() as conn:
        try:
            # DELETE with triggers off (the log refuses a DELETE): 3 ms on this schema, where
            # a TRUNCATE of its tables takes 110 ms.
            async with conn.transaction():
                await conn.execute("SET LOCAL session_replication_role = replica")
                await conn.execute(
                    "".join(f"DELETE FROM {t};" for t in tables)
                    + "".join(f"ALTER SEQUENCE {s} RESTART;" for s in sequences)
                )
        except asyncpg.InsufficientPrivilegeError:  # a TEST_DATABASE_URL role, no superuser
            await conn.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY")
    return pool


_TABLES: Final = (
    "SELECT quote_ident(tablename) AS name FROM pg_tables"
    " WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'"
)
_SEQUENCES: Final = (
    "SELECT quote_ident(sequencename) AS name FROM pg_sequences WHERE schemaname = current_schema()"
)


@pytest.fixture
def memory_streams() -> EventStore:
    return InMemoryStreams()


@pytest.fixture
def postgres_streams(clean_pool: asyncpg.Pool) -> EventStore:
    return PostgresStreams(clean_pool, CONTRACT_CODEC)


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.integration)])
def streams(request: pytest.FixtureRequest) -> EventStore:
    """Contract tests take this fixture and run once per implementation (keep it sync)."""
    streams: EventStore = request.getfixturevalue(f"{request.param}_streams")
    return streams
