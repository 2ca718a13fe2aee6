"""The relay process: `trainplate serve relay`."""

import asyncio
import contextlib
import logging

import asyncpg

from infra.bootstrap import open_resources
from infra.migrate import apply_migrations
from infra.relay import Relay
from infra.settings import Settings

log = logging.getLogger(__name__)


async def run(settings: Settings, stop: asyncio.Event) -> None:
    async with open_resources(settings, role="relay") as resources:
        async with resources.pool.acquire() as conn:
            await apply_migrations(conn)
        relay = Relay(resources.pool, resources.js, settings.nats, settings.relay)
        backoff = 0.5
        while not stop.is_set():
            try:
                await relay.run(stop)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                # The database went away (restart, failover): lead again once it is back.
                log.warning("relay lost the database (%s); retrying in %.1f s", exc, backoff)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), backoff)
                backoff = min(backoff * 2, 5.0)
            else:
                backoff = 0.5
