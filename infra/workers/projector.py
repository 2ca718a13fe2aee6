"""The projector process: `trainplate serve projector`.

No read model is registered yet, so the process only connects, applies the schema and waits; the
projection runner joins it with the first read model.
"""

import asyncio

from infra.bootstrap import open_resources
from infra.migrate import apply_migrations
from infra.settings import Settings


async def run(settings: Settings, stop: asyncio.Event) -> None:
    async with open_resources(settings, role="projector") as resources:
        async with resources.pool.acquire() as conn:
            await apply_migrations(conn)
        await stop.wait()
