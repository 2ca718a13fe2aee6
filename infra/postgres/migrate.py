"""Schema migrations: numbered SQL files applied once each, in order, under an advisory lock.

Every process may call `apply_migrations` at start-up: the lock makes concurrent callers wait, and
the `schema_migrations` table makes a second run a no-op.
"""

import logging
from importlib import resources
from typing import Final

import msgspec

from infra.postgres.connections import Connection

log = logging.getLogger(__name__)

# An arbitrary, fixed key: every trainplate process agrees on it.
MIGRATION_LOCK_KEY: Final = 0x7472_6169_6E70_6C01

_CREATE_TABLE: Final = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


class Migration(msgspec.Struct, frozen=True):
    version: int
    name: str
    sql: str


def available_migrations() -> list[Migration]:
    """The migrations shipped with this release, ordered by version (`0001_events.sql` -> 1)."""
    found = []
    for entry in resources.files("infra.postgres.migrations").iterdir():
        if entry.name.endswith(".sql"):
            number, _, rest = entry.name.partition("_")
            found.append(Migration(int(number), rest.removesuffix(".sql"), entry.read_text()))
    found.sort(key=lambda m: m.version)
    if len({m.version for m in found}) != len(found):
        raise RuntimeError("two migration files share a version number")
    return found


async def apply_migrations(conn: Connection) -> list[int]:
    """Apply every pending migration, each in its own transaction. Returns the versions applied."""
    applied_now: list[int] = []
    await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK_KEY)
    try:
        await conn.execute(_CREATE_TABLE)
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        for migration in available_migrations():
            if migration.version in done:
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                    migration.version,
                    migration.name,
                )
            log.info("applied migration %04d_%s", migration.version, migration.name)
            applied_now.append(migration.version)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK_KEY)
    return applied_now


async def pending_migrations(conn: Connection) -> list[int]:
    """Versions shipped but not yet applied (empty when the schema is current)."""
    exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    done = (
        {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        if exists
        else set()
    )
    return [m.version for m in available_migrations() if m.version not in done]
