"""The projection runner: feeds one projection the global log, exactly once per event.

Each batch is applied in one transaction together with the projection's checkpoint, so a crash
(or a SIGKILL) between two batches replays nothing twice and skips nothing. Event types this
release does not know are skipped, never fatal (a newer writer may be deployed first).
"""

import asyncio
import time
from typing import Any

import asyncpg

from domain.events import RecordedEvent
from infra.followers import global_log
from infra.followers.global_log import Cursor, LogEntry
from infra.followers.log_follower import LogFollower
from infra.followers.metrics import ProjectorMetrics
from infra.postgres.connections import Connection
from infra.serialization import EventCodec, decode_metadata
from infra.settings import ProjectorSettings
from projections import Projection


class ProjectionRunner:
    def __init__(
        self,
        pool: asyncpg.Pool,
        projection: Projection,
        codec: EventCodec,
        settings: ProjectorSettings,
        *,
        retry_on: tuple[type[Exception], ...] = (),
        metrics: ProjectorMetrics | None = None,
        checkpoint: str | None = None,
    ) -> None:
        self._checkpoint = checkpoint or f"projection:{projection.name}"
        self._projection = projection
        self._metrics = metrics
        self._codec = codec
        self._batch_size = settings.batch_size
        self._follower = LogFollower(
            pool,
            name=self.checkpoint_name,
            batch_size=settings.batch_size,
            poll_interval_s=settings.poll_interval_s,
            retry_on=retry_on,
        )

    @property
    def checkpoint_name(self) -> str:
        return self._checkpoint

    @property
    def leading(self) -> bool:
        return self._follower.leading

    async def run(self, stop: asyncio.Event) -> None:
        await self._follower.run(self.project_once, stop)

    async def project_once(self, conn: Connection, cursor: Cursor) -> tuple[Cursor, int]:
        """Apply the next batch after `cursor` and move the checkpoint, in one transaction."""
        entries = await global_log.read_after(conn, cursor, self._batch_size)
        if not entries:
            return cursor, 0
        started = time.perf_counter()
        async with conn.transaction():
            known = [self._recorded(entry) for entry in entries if self._codec.knows(entry.type)]
            # A read model's writes go out pipelined; a process manager (no tables of its own)
            # gets the connection itself.
            target = Pipelined(conn) if self._projection.tables is not None else conn
            if self._projection.apply_batch is not None:
                await self._projection.apply_batch(target, known)
            else:
                for recorded in known:
                    await self._projection.apply(target, recorded)
            if isinstance(target, Pipelined):
                await target.flush()
            await global_log.save_checkpoint(conn, self.checkpoint_name, entries[-1].cursor)
        if self._metrics is not None:  # counted once committed: a rolled-back batch is not
            name = self._projection.name
            self._metrics.batch_seconds.labels(name).observe(time.perf_counter() - started)
            self._metrics.events_applied.labels(name).inc(len(entries))
        return entries[-1].cursor, len(entries)

    def _recorded(self, entry: LogEntry) -> RecordedEvent:
        return RecordedEvent(
            position=entry.cursor.position,
            event_id=entry.event_id,
            stream_type=entry.stream_type,
            stream_id=entry.stream_id,
            version=entry.version,
            recorded_at=entry.recorded_at,
            metadata=decode_metadata(entry.metadata),
            event=self._codec.decode(entry.data),
        )


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
