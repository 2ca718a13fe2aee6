"""The projector process: `trainplate serve projector`, one runner per registered read model,
and the linked-asset fan-out."""

import asyncio

from prometheus_client import start_http_server

from infra.bootstrap import open_resources
from infra.followers.fanout_runner import fanout_projection
from infra.followers.log_follower import keep_following
from infra.followers.metrics import ProjectorMetrics
from infra.followers.projection_runner import ProjectionRunner
from infra.postgres.eventstore import PostgresEventStore
from infra.postgres.migrate import apply_migrations
from infra.serialization import DOMAIN_CODEC
from infra.settings import Settings
from projections import ALL
from services.errors import VersionConflictError


async def run(settings: Settings, stop: asyncio.Event) -> None:
    async with open_resources(settings, role="projector") as resources:
        async with resources.pool.acquire() as conn:
            await apply_migrations(conn)
        store = PostgresEventStore(resources.pool, DOMAIN_CODEC)
        metrics = ProjectorMetrics()
        if settings.projector.metrics_port:
            start_http_server(
                settings.projector.metrics_port,
                addr=settings.projector.metrics_host,
                registry=metrics.registry,
            )
        runners = [
            ProjectionRunner(
                resources.pool, projection, DOMAIN_CODEC, settings.projector, metrics=metrics
            )
            for projection in ALL
        ]
        # The fan-out appends to template streams: a user's concurrent edit of the same
        # template makes it retry that batch from its checkpoint.
        runners.append(
            ProjectionRunner(
                resources.pool,
                fanout_projection(DOMAIN_CODEC, store),
                DOMAIN_CODEC,
                settings.projector,
                retry_on=(VersionConflictError,),
                metrics=metrics,
            )
        )
        async with asyncio.TaskGroup() as group:
            for runner in runners:
                name = runner.checkpoint_name
                group.create_task(keep_following(runner.run, stop, name=name), name=name)
