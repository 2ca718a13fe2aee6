"""The projector process SIGKILLed at random points while events stream in: after a restart the
read model equals a rebuild from zero, and its checkpoint sits at the end of the log."""

import asyncio
import random
import signal
import subprocess

import asyncpg
import pytest

from infra.followers.global_log import load_checkpoint
from infra.followers.lag import status
from projections import application_catalogue
from tests.integration.test_projector import catch_up, create, forget_checkpoint, rows, runner
from tests.processes import serve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

APPLICATIONS = 120
CHUNKS = 4


def start_projector(postgres_url: str, nats_url: str) -> "subprocess.Popen[bytes]":
    # Many small transactions: many places to die.
    return serve("projector", postgres_url, nats_url, PROJECTOR__BATCH_SIZE="5")


async def test_killing_the_projector_loses_and_repeats_nothing(
    clean_pool: asyncpg.Pool, postgres_url: str, nats_url: str
) -> None:
    await clean_pool.execute("TRUNCATE application_catalogue")
    chance = random.Random(20261129)

    kills = 0
    killed = asyncio.Condition()

    async def write() -> None:
        # In CHUNKS parts, each waiting for a kill after the one before: however fast the writes
        # are, the projector dies several times while they stream in.
        per_part = APPLICATIONS // CHUNKS
        for part in range(1, CHUNKS + 1):
            for index in range((part - 1) * per_part, part * per_part):
                await create(clean_pool, f"app-{index:03d}")
            async with killed:
                await killed.wait_for(lambda: kills >= part)  # noqa: B023 (awaited in the loop)

    writing = asyncio.create_task(write())
    while not writing.done():
        projector = start_projector(postgres_url, nats_url)
        await asyncio.sleep(chance.uniform(0.3, 0.9))
        projector.send_signal(signal.SIGKILL)
        projector.wait()
        async with killed:
            kills += 1
            killed.notify_all()
    await writing

    projector = start_projector(postgres_url, nats_url)
    # One more after the restart: once it is projected, the restarted projector is the one
    # leading (a killed one's lock can linger a moment), and it is past its start-up.
    await create(clean_pool, "app-last")
    try:
        for _ in range(300):  # up to 30 s to lead and catch up
            async with clean_pool.acquire() as conn:
                [report] = await status(conn, [application_catalogue.NAME])
            if report.behind == 0:
                break
            await asyncio.sleep(0.1)
        assert report.behind == 0, "the restarted projector never caught up"
    finally:
        projector.send_signal(signal.SIGTERM)
        assert projector.wait(30) == 0

    survived = await rows(clean_pool)
    assert len(survived) == APPLICATIONS + 1
    rebuild = runner(clean_pool)
    await clean_pool.execute("TRUNCATE application_catalogue")
    await forget_checkpoint(clean_pool, rebuild)
    await catch_up(clean_pool, rebuild)
    assert await rows(clean_pool) == survived
    async with clean_pool.acquire() as conn:
        last = await conn.fetchrow(
            "SELECT transaction_id, global_position FROM events"
            " ORDER BY transaction_id DESC, global_position DESC LIMIT 1"
        )
        assert last is not None
        assert await load_checkpoint(conn, rebuild.checkpoint_name) == tuple(last)
