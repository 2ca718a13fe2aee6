"""The projector process: `trainplate serve projector`, one runner per registered read model,
and the linked-asset fan-out."""

import asyncio

from prometheus_client import start_http_server

from infra.bootstrap import open_resources
from infra.followers.fanout_runner import FanoutRunner
from infra.followers.log_follower import keep_following
from infra.followers.log_runner import LogRunner
from infra.followers.metrics import ProjectorMetrics
from infra.followers.projection_runner import ProjectionRunner
from infra.postgres.migrate import apply_migrations
from infra.serialization import DOMAIN_CODEC
from infra.settings import Settings
from projections import ALL


async def run(settings: Settings, stop: asyncio.Event) -> None:
    async with open_resources(settings, role="projector") as resources:
        async with resources.pool.acquire() as conn:
            await apply_migrations(conn)
        metrics = ProjectorMetrics()
        if settings.projector.metrics_port:
            start_http_server(
                settings.projector.metrics_port,
                addr=settings.projector.metrics_host,
                registry=metrics.registry,
            )
        runners: list[LogRunner] = [
            ProjectionRunner(
                resources.pool, projection, DOMAIN_CODEC, settings.projector, metrics=metrics
            )
            for projection in ALL
        ]
        runners.append(
            FanoutRunner(resources.pool, DOMAIN_CODEC, settings.projector, metrics=metrics)
        )
        async with asyncio.TaskGroup() as group:
            for runner in runners:
                name = runner.checkpoint_name
                group.create_task(keep_following(runner.run, stop, name=name), name=name)
