"""Prometheus metrics. Lag (how far each checkpoint trails the log) is the database's, so any API
process answers it on `/metrics`; what only a running projector knows (events applied, batch
times) it exports on its own port (`TRAINPLATE_PROJECTOR__METRICS_PORT`)."""

from collections.abc import Sequence
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from infra.followers.lag import followers_status
from infra.postgres.connections import Connection

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST


class ProjectorMetrics:
    """What a projector process measures while it applies events."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.events_applied = Counter(
            "trainplate_projection_events_applied",
            "Events a projection has applied (each counted once per batch commit).",
            ["projection"],
            registry=self.registry,
        )
        self.batch_seconds = Histogram(
            "trainplate_projection_batch_seconds",
            "Time to apply one batch and commit it with the checkpoint.",
            ["projection"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
        )


async def lag_exposition(conn: Connection, followers: Sequence[tuple[str, str]]) -> bytes:
    """The lag of every follower of the log, as Prometheus text. `followers`: (label, checkpoint
    name) pairs, e.g. ("template_catalogue", "projection:template_catalogue")."""
    registry = CollectorRegistry()
    behind = Gauge(
        "trainplate_follower_lag_events",
        "Events committed after the follower's checkpoint (for the relay: the outbox backlog).",
        ["follower"],
        registry=registry,
    )
    seconds = Gauge(
        "trainplate_follower_lag_seconds",
        "Age of the oldest event the follower has not processed (0 when caught up).",
        ["follower"],
        registry=registry,
    )
    position = Gauge(
        "trainplate_follower_position",
        "Global position of the follower's checkpoint.",
        ["follower"],
        registry=registry,
    )
    stuck = Gauge(
        "trainplate_follower_stuck",
        "1 while the follower is stopped at an event it cannot apply or publish (see /readyz).",
        ["follower"],
        registry=registry,
    )
    for found in await followers_status(conn, followers):
        label = found.name
        behind.labels(label).set(found.behind)
        seconds.labels(label).set(found.lag_s)
        position.labels(label).set(found.position)
        stuck.labels(label).set(1 if found.stuck else 0)
    return generate_latest(registry)
