"""How long workloads waited from their request to their first run's submission and to its
running, from the store's own times (each event's `recorded_at`): noted in the workload
catalogue's batch, observed once that batch commits."""

from collections.abc import Sequence
from typing import Final

from prometheus_client import Histogram

from domain.events import RecordedEvent, WorkloadRunning, WorkloadSubmitted
from infra.followers.metrics import ProjectorMetrics
from infra.postgres.connections import Connection

# A workload's stream opens with its request.
_REQUESTED: Final = """
SELECT stream_id, recorded_at FROM events WHERE stream_id = ANY($1::uuid[]) AND version = 1
"""


class WorkloadTimings:
    def __init__(self, metrics: ProjectorMetrics) -> None:
        self._metrics = metrics
        self._held: list[tuple[Histogram, float]] = []

    async def note(self, conn: Connection, events: Sequence[RecordedEvent]) -> None:
        """Inside the batch's transaction: what to observe once it commits (what an earlier
        batch noted and did not commit is dropped)."""
        self._held = []
        firsts = [
            r
            for r in events
            if isinstance(r.event, WorkloadSubmitted | WorkloadRunning) and r.event.run == 1
        ]
        if not firsts:
            return
        rows = await conn.fetch(_REQUESTED, list({r.stream_id for r in firsts}))
        requested = {row["stream_id"]: row["recorded_at"] for row in rows}
        for recorded in firsts:
            if (at := requested.get(recorded.stream_id)) is None:
                continue
            histogram = (
                self._metrics.until_submitted
                if isinstance(recorded.event, WorkloadSubmitted)
                else self._metrics.until_running
            )
            self._held.append((histogram, max(0.0, (recorded.recorded_at - at).total_seconds())))

    def committed(self) -> None:
        held, self._held = self._held, []
        for histogram, seconds in held:
            histogram.observe(seconds)
