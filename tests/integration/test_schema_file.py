"""infra/postgres/schema.sql is the schema the migrations make: a fresh database, migrated, reads
back as that text, and the text, loaded into another, makes the same schema."""

import asyncio
import difflib
import os
import sys
from collections.abc import AsyncIterator

import asyncpg
import pytest

from infra.postgres.migrate import apply_migrations
from infra.postgres.schema_text import (
    REGENERATE,
    SCHEMA_FILE,
    rendered_by,
    schema_text,
    server_major,
)

pytestmark = pytest.mark.integration


@pytest.fixture
async def fresh(postgres_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A connection to an empty database of its own on the test server."""
    database = "schema_file"
    admin = await asyncpg.connect(postgres_url)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {database}")
        conn = await asyncpg.connect(postgres_url.rsplit("/", 1)[0] + f"/{database}")
        try:
            major, wanted = await server_major(conn), rendered_by(SCHEMA_FILE.read_text())
            if major != wanted:  # a TEST_DATABASE_URL of another major version
                pytest.skip(f"{SCHEMA_FILE.name} is PostgreSQL {wanted}'s; this server is {major}")
            yield conn
        finally:
            await conn.close()
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        await admin.close()


def _differences(expected: str, found: str) -> str:
    diff = difflib.unified_diff(
        expected.splitlines(), found.splitlines(), "schema.sql", "migrated", lineterm="", n=1
    )
    return "\n".join(list(diff)[:60])


async def test_the_schema_file_is_what_the_migrations_make(
    fresh: asyncpg.Connection,
) -> None:
    await apply_migrations(fresh)
    found = await schema_text(fresh)
    expected = SCHEMA_FILE.read_text()
    assert found == expected, (
        f"{SCHEMA_FILE.name} is not the schema the migrations make; regenerate it with"
        f" `{REGENERATE}` and commit it:\n{_differences(expected, found)}"
    )


async def test_the_schema_file_loads_into_the_same_schema(fresh: asyncpg.Connection) -> None:
    await fresh.execute(SCHEMA_FILE.read_text())
    assert await schema_text(fresh) == SCHEMA_FILE.read_text()


@pytest.mark.slow
async def test_the_schema_command_writes_it() -> None:
    """On an embedded PostgreSQL of its own, as a developer runs it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "infra.cli", "schema",
        env={**os.environ, "TRAINPLATE_LOG_LEVEL": "WARNING"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, err.decode()
    assert out.decode() == SCHEMA_FILE.read_text()
