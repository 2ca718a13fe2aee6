"""Run a check on one connection of the shared test database inside a transaction that is then
rolled back, so a generated example leaves the database as it found it."""

from collections.abc import Awaitable, Callable
from typing import Any

from infra.bootstrap import create_pool
from infra.postgres.migrate import apply_migrations
from infra.settings import DatabaseSettings


class _RollBackError(Exception):
    pass


async def rolled_back(url: str, check: Callable[[Any], Awaitable[None]]) -> None:
    pool = await create_pool(DatabaseSettings(url=url, pool_max=2), application_name="pages")
    try:
        async with pool.acquire() as conn:
            await apply_migrations(conn)
            async with conn.transaction():
                await check(conn)
                raise _RollBackError
    except _RollBackError:
        pass
    finally:
        await pool.close()
