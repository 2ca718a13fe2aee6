"""Rebuilding a read model from position zero, blue/green, while the old one keeps serving: the
projection's own code fills copies of its tables (a schema first on the rebuild's `search_path`),
and one transaction swaps them in. Read models only: docs/decisions/0023-followers.md."""

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Final

import asyncpg
import msgspec

from infra.followers import global_log, read_model_versions
from infra.followers.global_log import START, Cursor
from infra.followers.log_follower import lock_key
from infra.followers.projection_runner import ProjectionRunner
from infra.postgres.connections import Connection
from infra.serialization import EventCodec
from infra.settings import ProjectorSettings
from projections import Projection

PREFIX: Final = "rebuild_"
_STATISTICS: Final = (
    "SELECT pg_get_statisticsobjdef(oid) AS definition FROM pg_statistic_ext"
    " WHERE stxrelid = $1::regclass ORDER BY stxname"
)


class RebuildReport(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    events: int  # events read from the log, the final catch-up included
    position: int  # where the rebuilt model stands
    seconds: float
    swap_seconds: float  # how long the live tables were locked


async def rebuild(
    database_url: str,
    projection: Projection,
    codec: EventCodec,
    settings: ProjectorSettings,
    *,
    progress: Callable[[int], None] | None = None,
) -> RebuildReport:
    started = time.perf_counter()
    async with _rebuilding(database_url, projection) as (conn, pool, schema):
        return await _rebuild(conn, pool, projection, schema, codec, settings, progress, started)


async def rebuild_if_outdated(
    database_url: str, projection: Projection, codec: EventCodec, settings: ProjectorSettings
) -> RebuildReport | None:
    """Rebuild the read model if a version other than the projection's built it (asked again
    once the lock is held: another process may have rebuilt it meanwhile)."""
    started = time.perf_counter()
    async with _rebuilding(database_url, projection) as (conn, pool, schema):
        if not await read_model_versions.outdated(conn, projection):
            return None
        return await _rebuild(conn, pool, projection, schema, codec, settings, None, started)


@asynccontextmanager
async def _rebuilding(
    database_url: str, projection: Projection
) -> AsyncIterator[tuple[Connection, asyncpg.Pool, str]]:
    schema = f"{PREFIX}{projection.name}"
    # One connection whose search_path finds the fresh tables first (a pool of one, as the
    # runner is built on a pool).
    pool = await asyncpg.create_pool(
        database_url, min_size=1, max_size=1, server_settings={"search_path": f"{schema}, public"}
    )
    try:
        async with pool.acquire() as conn:
            # Held for the session: released when the pool closes, however the rebuild ends.
            await conn.execute("SELECT pg_advisory_lock($1)", lock_key(schema))
            yield conn, pool, schema
    finally:
        await pool.close()


async def _rebuild(
    conn: Connection,
    pool: asyncpg.Pool,
    projection: Projection,
    schema: str,
    codec: EventCodec,
    settings: ProjectorSettings,
    progress: Callable[[int], None] | None,
    started: float,
) -> RebuildReport:
    await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE; CREATE SCHEMA "{schema}"')
    for table in projection.tables:
        await conn.execute(
            f'CREATE TABLE "{schema}"."{table}"'
            f' (LIKE public."{table}" INCLUDING ALL EXCLUDING STATISTICS)'
        )
    runner = ProjectionRunner(
        pool, projection, codec, settings, checkpoint=f"rebuild:{projection.name}"
    )
    await global_log.save_checkpoint(conn, runner.checkpoint_name, START)
    cursor, total = await _catch_up(conn, runner, START, progress)
    swap_started = time.perf_counter()
    async with conn.transaction():
        for table in projection.tables:
            await conn.execute(f'LOCK TABLE public."{table}" IN ACCESS EXCLUSIVE MODE')
        cursor, more = await _catch_up(conn, runner, cursor, None)
        total += more
        for table in projection.tables:
            # Extended statistics stay with a schema, not a table: made again on the new table.
            statistics = await conn.fetch(_STATISTICS, f'public."{table}"')
            await conn.execute(f'DROP TABLE public."{table}"')
            await conn.execute(f'ALTER TABLE "{schema}"."{table}" SET SCHEMA public')
            for row in statistics:
                await conn.execute(row["definition"])
        await global_log.save_checkpoint(conn, f"projection:{projection.name}", cursor)
        await read_model_versions.record(conn, projection.name, projection.version)
        await conn.execute(
            "DELETE FROM consumer_checkpoints WHERE name = $1", runner.checkpoint_name
        )
        await conn.execute(f'DROP SCHEMA "{schema}"')
    swap_seconds = time.perf_counter() - swap_started
    for table in projection.tables:  # (the new tables have no statistics yet)
        await conn.execute(f'ANALYZE public."{table}"')
    return RebuildReport(
        name=projection.name,
        events=total,
        position=cursor.position,
        seconds=time.perf_counter() - started,
        swap_seconds=swap_seconds,
    )


async def _catch_up(
    conn: Connection,
    runner: ProjectionRunner,
    cursor: Cursor,
    progress: Callable[[int], None] | None,
) -> tuple[Cursor, int]:
    total = 0
    while True:
        cursor, read = await runner.step(conn, cursor)
        total += read
        if progress is not None and read:
            progress(total)
        if read == 0:
            return cursor, total
