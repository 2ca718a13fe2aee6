"""The relay process: `trainplate serve relay`."""

import asyncio
import logging

from prometheus_client import start_http_server

from infra.bootstrap import freeze_start_up, open_resources
from infra.followers.log_follower import keep_following
from infra.jetstream.outbox_relay import BrokerLimitError, Relay
from infra.postgres.migrate import apply_migrations
from infra.settings import Settings
from infra.telemetry.meters import RelayMetrics

log = logging.getLogger(__name__)


async def run(settings: Settings, stop: asyncio.Event) -> None:
    async with open_resources(settings, role="relay") as resources:
        async with resources.pool.acquire() as conn:
            await apply_migrations(conn)
        metrics = RelayMetrics()
        if settings.relay.metrics_port:
            start_http_server(
                settings.relay.metrics_port,
                addr=settings.relay.metrics_host,
                registry=metrics.registry,
            )
        relay = Relay(
            resources.pool,
            resources.nc,
            settings.nats,
            settings.relay,
            event_bytes=settings.sizes.event_bytes,
            metrics=metrics,
        )
        freeze_start_up()
        try:
            await keep_following(relay.run, stop, name="relay")
        except BrokerLimitError as error:  # restarting would not mend it: say why, and stop
            log.error("the relay cannot start: %s", error)
            raise SystemExit(1) from error
