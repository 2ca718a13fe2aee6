"""The projector process: `trainplate serve projector`, one runner per registered read model,
and the linked-asset fan-out."""

import asyncio

import msgspec
from prometheus_client import start_http_server

from infra.bootstrap import freeze_start_up, open_resources
from infra.followers.checkpoint_moves import CheckpointMoves
from infra.followers.fanout_runner import FanoutRunner
from infra.followers.log_follower import keep_following
from infra.followers.log_runner import LogRunner
from infra.followers.log_tap import LogTap
from infra.followers.metrics import ProjectorMetrics
from infra.followers.projection_runner import ProjectionRunner
from infra.postgres.migrate import apply_migrations
from infra.serialization import DOMAIN_CODEC
from infra.settings import Settings
from projections import ALL

# Besides each runner's own connection (its leader's, held throughout): the tap's read-ahead
# and the fan-out's commit notices.
_SHARED_CONNECTIONS = 2


async def run(settings: Settings, stop: asyncio.Event) -> None:
    wanted = len(ALL) + 1 + _SHARED_CONNECTIONS
    if settings.database.pool_max < wanted:
        database = msgspec.structs.replace(settings.database, pool_max=wanted)
        settings = msgspec.structs.replace(settings, database=database)
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
        # One read of the log for every runner (infra/followers/log_tap.py).
        tap = LogTap(resources.pool, DOMAIN_CODEC, batch_size=settings.projector.batch_size)
        moves = CheckpointMoves()  # and one write of the checkpoints of those that took nothing
        runners: list[LogRunner] = [
            ProjectionRunner(
                resources.pool,
                projection,
                DOMAIN_CODEC,
                settings.projector,
                metrics=metrics,
                tap=tap,
                moves=moves,
            )
            for projection in ALL
        ]
        runners.append(
            FanoutRunner(
                resources.pool,
                DOMAIN_CODEC,
                settings.projector,
                metrics=metrics,
                tap=tap,
                moves=moves,
            )
        )
        freeze_start_up()
        try:
            async with asyncio.TaskGroup() as group:
                for runner in runners:
                    name = runner.checkpoint_name
                    group.create_task(keep_following(runner.run, stop, name=name), name=name)
        finally:
            await tap.close()
