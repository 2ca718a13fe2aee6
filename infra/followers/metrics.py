"""Prometheus metrics. Lag (how far each checkpoint trails the log) and workloads by phase are the
database's, so any API process answers them on `/metrics`; what only a running projector knows
(events applied, batch times, fan-outs, workload delays) it exports on its own port."""

import typing
from collections.abc import Mapping, Sequence
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from domain.workloads import Phase
from infra.followers.lag import followers_status
from infra.postgres.connections import Connection

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
PHASES: Final[tuple[Phase, ...]] = typing.get_args(Phase)
WORKLOAD_BUCKETS: Final = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)


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
        self.fanout_seconds = Histogram(
            "trainplate_fanout_duration_seconds",
            "Time the fan-out took to move every template linking a changed asset on.",
            registry=self.registry,
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0),
        )
        self.fanout_templates = Counter(
            "trainplate_fanout_templates",
            "Template events the fan-out appended (one per template it moved on).",
            registry=self.registry,
        )
        self.until_submitted = Histogram(
            "trainplate_workload_requested_to_submitted_seconds",
            "From a workload's request to its first run's submission, as the store timed both.",
            registry=self.registry,
            buckets=WORKLOAD_BUCKETS,
        )
        self.until_running = Histogram(
            "trainplate_workload_requested_to_running_seconds",
            "From a workload's request to its first run running, as the store timed both.",
            registry=self.registry,
            buckets=WORKLOAD_BUCKETS,
        )


class LagGauges:
    """How far each follower of the log trails it, made anew for each scrape."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.behind = Gauge(
            "trainplate_follower_lag_events",
            "Events committed after the follower's checkpoint (for the relay: the outbox backlog).",
            ["follower"],
            registry=registry,
        )
        self.seconds = Gauge(
            "trainplate_follower_lag_seconds",
            "Age of the oldest event the follower has not processed (0 when caught up).",
            ["follower"],
            registry=registry,
        )
        self.position = Gauge(
            "trainplate_follower_position",
            "Global position of the follower's checkpoint.",
            ["follower"],
            registry=registry,
        )
        self.stuck = Gauge(
            "trainplate_follower_stuck",
            "1 while the follower is stopped at an event it cannot apply or publish (see /readyz).",
            ["follower"],
            registry=registry,
        )


async def lag_exposition(conn: Connection, followers: Sequence[tuple[str, str]]) -> bytes:
    """The lag of every follower of the log, as Prometheus text. `followers`: (label, checkpoint
    name) pairs, e.g. ("template_catalogue", "projection:template_catalogue")."""
    registry = CollectorRegistry()
    gauges = LagGauges(registry)
    for found in await followers_status(conn, followers):
        label = found.name
        gauges.behind.labels(label).set(found.behind)
        gauges.seconds.labels(label).set(found.lag_s)
        gauges.position.labels(label).set(found.position)
        gauges.stuck.labels(label).set(1 if found.stuck else 0)
    return generate_latest(registry)


def workloads_exposition(phases: Mapping[str, int]) -> bytes:
    """The workloads of each phase (the workload catalogue's count), as Prometheus text."""
    registry = CollectorRegistry()
    gauge = Gauge(
        "trainplate_workloads",
        "Workloads not deleted, by their current phase.",
        ["phase"],
        registry=registry,
    )
    for phase in PHASES:
        gauge.labels(phase).set(phases.get(phase, 0))
    for other, count in phases.items():
        if other not in PHASES:
            gauge.labels(other).set(count)
    return generate_latest(registry)
