"""The pool hands its connections out in the order they were asked for
(infra/bootstrap.py FairPool), and every turn comes back, whichever way its connection does."""

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest

from infra.bootstrap import create_pool
from infra.settings import DatabaseSettings

pytestmark = pytest.mark.integration


@pytest.fixture
async def one(database_settings: DatabaseSettings) -> AsyncIterator[asyncpg.Pool]:
    """A pool of a single connection."""
    settings = DatabaseSettings(url=database_settings.url, pool_min=1, pool_max=1)
    pool = await create_pool(settings, application_name="fair-pool-test", session_free=True)
    yield pool
    pool.terminate()  # not close(): a failed test may leave a connection out


async def test_a_newcomer_does_not_take_the_connection_from_the_one_waiting(
    one: asyncpg.Pool,
) -> None:
    order: list[str] = []

    async def take(name: str) -> None:
        async with one.acquire():
            order.append(name)

    held = await one.acquire()
    waiting = asyncio.create_task(take("waiting"))
    await asyncio.sleep(0.05)  # it waits for the connection
    releasing = asyncio.create_task(one.release(held))
    await asyncio.sleep(0)  # the release is under way, the connection not yet back
    # Asks after the release has begun and before the waiting one has been woken: asyncpg's
    # own queue, no longer empty for it, would let it pass.
    newcomer = asyncio.create_task(take("newcomer"))
    await asyncio.gather(releasing, waiting, newcomer)
    assert order == ["waiting", "newcomer"]


async def test_a_turn_comes_back_with_a_lost_connection(one: asyncpg.Pool) -> None:
    conn = await one.acquire()
    conn.terminate()  # lost while out (the server restarted, say)
    await one.release(conn)
    await one.release(conn)  # released again: still one turn given back, not two
    async with one.acquire(timeout=5) as again:
        assert await again.fetchval("SELECT 1") == 1
        with pytest.raises(TimeoutError):  # the one turn is out: nobody else gets one
            await one.acquire(timeout=0.05)


async def test_a_turn_comes_back_from_an_acquire_that_gave_up(one: asyncpg.Pool) -> None:
    held = await one.acquire()
    with pytest.raises(TimeoutError):  # the timeout bounds the wait for a turn too
        await one.acquire(timeout=0.05)
    cancelled = asyncio.ensure_future(one.acquire())
    await asyncio.sleep(0.05)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    await one.release(held)
    async with one.acquire(timeout=5) as conn:
        assert await conn.fetchval("SELECT 1") == 1
