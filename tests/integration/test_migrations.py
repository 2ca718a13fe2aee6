"""Migrations apply once, whoever runs them and however many run at the same time."""

import asyncio

import asyncpg
import pytest

from infra.postgres.migrate import apply_migrations, available_migrations, pending_migrations

pytestmark = pytest.mark.integration


async def test_concurrent_start_ups_apply_each_migration_once(postgres_url: str) -> None:
    database = "migrations_race"
    admin = await asyncpg.connect(postgres_url)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {database}")
        await admin.execute(f"CREATE DATABASE {database}")
        url = postgres_url.rsplit("/", 1)[0] + f"/{database}"
        conns = [await asyncpg.connect(url) for _ in range(4)]
        try:
            applied = await asyncio.gather(*(apply_migrations(c) for c in conns))
            assert sorted(v for run in applied for v in run) == [
                m.version for m in available_migrations()
            ]
            assert await pending_migrations(conns[0]) == []
            assert await apply_migrations(conns[0]) == []
        finally:
            for conn in conns:
                await conn.close()
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        await admin.close()


async def test_every_pooled_connection_carries_the_safety_timeouts(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        settings = {
            name: await conn.fetchval(f"SELECT current_setting('{name}')")
            for name in (
                "statement_timeout",
                "lock_timeout",
                "idle_in_transaction_session_timeout",
            )
        }
    assert settings == {
        "statement_timeout": "30s",
        "lock_timeout": "10s",
        "idle_in_transaction_session_timeout": "1min",
    }
