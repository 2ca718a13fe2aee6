"""The projector process: `trainplate serve projector`, one runner per registered read model,
and the linked-asset fan-out; at start, a blue/green rebuild of each read model whose projection's
version moved on (infra/followers/read_model_versions.py), beside its live runner."""

import asyncio
import logging
from collections.abc import Sequence

import asyncpg
import msgspec
from prometheus_client import start_http_server

from infra.bootstrap import freeze_start_up, open_resources
from infra.followers import read_model_versions
from infra.followers.checkpoint_moves import CheckpointMoves
from infra.followers.fanout_runner import FanoutRunner
from infra.followers.faults import FollowerStuckError
from infra.followers.log_follower import keep_following, wait
from infra.followers.log_runner import LogRunner
from infra.followers.log_tap import LogTap
from infra.followers.metrics import ProjectorMetrics
from infra.followers.projection_runner import ProjectionRunner
from infra.followers.rebuild import rebuild_if_outdated
from infra.followers.workload_timings import WorkloadTimings
from infra.postgres.migrate import apply_migrations
from infra.serialization import DOMAIN_CODEC
from infra.settings import Settings
from projections import ALL, Projection
from projections.workload_catalogue import NAME as WORKLOADS

log = logging.getLogger(__name__)

# Besides each runner's own connection (its leader's, held throughout): the tap's read-ahead
# and the fan-out's commit notices.
_SHARED_CONNECTIONS = 2


async def run(
    settings: Settings, stop: asyncio.Event, *, projections: Sequence[Projection] = ALL
) -> None:
    wanted = len(projections) + 1 + _SHARED_CONNECTIONS
    if settings.database.pool_max < wanted:
        database = msgspec.structs.replace(settings.database, pool_max=wanted)
        settings = msgspec.structs.replace(settings, database=database)
    async with open_resources(settings, role="projector") as resources:
        async with resources.pool.acquire() as conn:
            await apply_migrations(conn)
            outdated = [p for p in projections if await read_model_versions.outdated(conn, p)]
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
                timings=WorkloadTimings(metrics) if projection.name == WORKLOADS else None,
            )
            for projection in projections
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
                for projection in outdated:
                    name = f"rebuild:{projection.name}"
                    group.create_task(_rebuild(settings, projection, stop), name=name)
        finally:
            await tap.close()


async def _rebuild(settings: Settings, projection: Projection, stop: asyncio.Event) -> None:
    """Rebuild an outdated read model while its live runner keeps the old tables answering;
    again after the database went away; given up at stop, or on an event it cannot apply
    (recorded as the `rebuild:` follower's fault, and tried again at the next start)."""
    log.info("%s: rows not made by version %d; rebuilding", projection.name, projection.version)
    backoff = 0.5
    while not stop.is_set():
        rebuilding = asyncio.ensure_future(
            rebuild_if_outdated(settings.database.url, projection, DOMAIN_CODEC, settings.projector)
        )
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait((rebuilding, stopping), return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not rebuilding.done():
            rebuilding.cancel()
            await asyncio.gather(rebuilding, return_exceptions=True)
            return
        try:
            report = rebuilding.result()
        except FollowerStuckError:
            return
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            log.warning("rebuild of %s failed (%s); again in %.1f s", projection.name, exc, backoff)
            await wait(stop, backoff)
            backoff = min(backoff * 2, 5.0)
            continue
        if report is not None:
            log.info(
                "%s: rebuilt for version %d from %d events in %.2f s (swap %.3f s)",
                report.name,
                projection.version,
                report.events,
                report.seconds,
                report.swap_seconds,
            )
        return
