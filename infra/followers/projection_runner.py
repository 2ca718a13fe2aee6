"""The projection runner: feeds one read model the global log, exactly once per event
(infra/followers/log_runner.py), its writes pipelined (`Pipelined`); a batch of traced events is
applied in a span continuing (or linking) their traces."""

from collections.abc import Sequence
from typing import Any

import asyncpg

from domain.events import RecordedEvent, stream_type_of
from infra.followers.checkpoint_moves import CheckpointMoves
from infra.followers.global_log import LogEntry
from infra.followers.log_runner import LogRunner
from infra.followers.log_tap import LogTap
from infra.followers.metrics import ProjectorMetrics
from infra.followers.workload_timings import WorkloadTimings
from infra.postgres.connections import Connection
from infra.serialization import EventCodec
from infra.settings import ProjectorSettings
from infra.telemetry import tracing
from projections import Projection


class ProjectionRunner(LogRunner):
    def __init__(
        self,
        pool: asyncpg.Pool,
        projection: Projection,
        codec: EventCodec,
        settings: ProjectorSettings,
        *,
        metrics: ProjectorMetrics | None = None,
        checkpoint: str | None = None,
        tap: LogTap | None = None,
        moves: CheckpointMoves | None = None,
        timings: WorkloadTimings | None = None,
    ) -> None:
        super().__init__(
            pool,
            projection.name,
            codec,
            settings,
            metrics=metrics,
            checkpoint=checkpoint or f"projection:{projection.name}",
            tap=tap,
            moves=moves,
        )
        self._projection = projection
        self._timings = timings
        # Worked out once from the tags the codec knows: asked of every event of the log.
        self._tags = frozenset(
            tag
            for tag in codec.tags
            if projection.streams is None or stream_type_of(tag) in projection.streams
        )

    def takes(self, entry: LogEntry) -> bool:
        return entry.type in self._tags

    async def consume(self, conn: Connection, events: Sequence[RecordedEvent]) -> None:
        if self._timings is not None:
            await self._timings.note(conn, events)
        parents = [tracing.of_event(r.metadata) for r in events] if tracing.recording() else []
        if not any(parents):  # not recording, or untraced events: no span
            await self._consume(conn, events)
            return
        attributes: tracing.Attributes = {
            "trainplate.projection": self.name,
            "trainplate.events": len(events),
        }
        with tracing.span(f"apply {self.name}", parents=parents, attributes=attributes):
            await self._consume(conn, events)

    def committed(self) -> None:
        if self._timings is not None:
            self._timings.committed()

    async def _consume(self, conn: Connection, events: Sequence[RecordedEvent]) -> None:
        # A read model and its checkpoint commit together, both made again from the log: a crash
        # that loses the last commits loses both, and the runner applies those events again. So
        # the commit need not wait for the WAL flush (docs/decisions/0023-followers.md).
        await conn.execute("SET LOCAL synchronous_commit = off")
        # A read model's writes go out pipelined.
        target = Pipelined(conn)
        if self._projection.apply_batch is not None:
            await self._projection.apply_batch(target, events)
        else:
            for recorded in events:
                await self._projection.apply(target, recorded)
        await target.flush()


class Pipelined:
    """The runner's connection as a projection's Executor, sending consecutive executions of
    one statement together (asyncpg's executemany: one round trip for all of them). Order is
    kept: a different statement, or any read, first sends what is waiting."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._query: str | None = None
        self._waiting: list[tuple[Any, ...]] = []

    async def execute(self, query: str, *args: Any) -> str:
        if query != self._query:
            await self.flush()
            self._query = query
        self._waiting.append(args)
        return ""  # the status is not known until sent; no projection reads it

    async def fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        await self.flush()
        return await self._conn.fetch(query, *args)

    async def fetchrow(self, query: str, *args: Any) -> asyncpg.Record | None:
        await self.flush()
        return await self._conn.fetchrow(query, *args)

    async def flush(self) -> None:
        if self._query is not None and self._waiting:
            await self._conn.executemany(self._query, self._waiting)
        self._query, self._waiting = None, []
