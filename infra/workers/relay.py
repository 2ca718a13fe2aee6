"""The relay process: `trainplate serve relay`."""

import asyncio

from infra.bootstrap import freeze_start_up, open_resources
from infra.followers.log_follower import keep_following
from infra.jetstream.outbox_relay import Relay
from infra.postgres.migrate import apply_migrations
from infra.settings import Settings


async def run(settings: Settings, stop: asyncio.Event) -> None:
    async with open_resources(settings, role="relay") as resources:
        async with resources.pool.acquire() as conn:
            await apply_migrations(conn)
        relay = Relay(resources.pool, resources.js, settings.nats, settings.relay)
        freeze_start_up()
        await keep_following(relay.run, stop, name="relay")
