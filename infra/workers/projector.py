"""The projector process: `trainplate serve projector`, one runner per registered read model."""

import asyncio

from infra.bootstrap import open_resources
from infra.follower import keep_following
from infra.migrate import apply_migrations
from infra.projector import ProjectionRunner
from infra.serialization import DOMAIN_CODEC
from infra.settings import Settings
from projections import ALL


async def run(settings: Settings, stop: asyncio.Event) -> None:
    async with open_resources(settings, role="projector") as resources:
        async with resources.pool.acquire() as conn:
            await apply_migrations(conn)
        async with asyncio.TaskGroup() as group:
            for projection in ALL:
                runner = ProjectionRunner(
                    resources.pool, projection, DOMAIN_CODEC, settings.projector
                )
                name = runner.checkpoint_name
                group.create_task(keep_following(runner.run, stop, name=name), name=name)
