"""The projection runner: feeds one projection the global log, exactly once per event.

Each batch is applied in one transaction together with the projection's checkpoint, so a crash
(or a SIGKILL) between two batches replays nothing twice and skips nothing. Event types this
release does not know are skipped, never fatal (a newer writer may be deployed first). An event
that cannot be applied stops the runner there, loudly (infra/followers/faults.py).
"""

import asyncio
import logging
import time
from typing import Any

import asyncpg

from domain.events import RecordedEvent
from infra.followers import faults, global_log
from infra.followers.global_log import Cursor, LogEntry
from infra.followers.log_follower import LogFollower
from infra.followers.metrics import ProjectorMetrics
from infra.postgres.connections import Connection
from infra.serialization import EventCodec, decode_metadata
from infra.settings import ProjectorSettings
from projections import Projection

log = logging.getLogger(__name__)


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
        self._transient = (*faults.TRANSIENT, *retry_on)
        self._may_be_stuck = True  # until a batch commits: a fault from before may be recorded
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
        try:
            await self._apply(conn, entries)
        except self._transient:
            raise
        except Exception as error:
            log.warning("%s: a batch failed (%s); applying it event by event", self.name, error)
            await self._apply_one_by_one(conn, entries)
        if self._metrics is not None:  # counted once committed: a rolled-back batch is not
            self._metrics.batch_seconds.labels(self.name).observe(time.perf_counter() - started)
            self._metrics.events_applied.labels(self.name).inc(len(entries))
        return entries[-1].cursor, len(entries)

    @property
    def name(self) -> str:
        return self._projection.name

    async def _apply(self, conn: Connection, entries: list[LogEntry]) -> None:
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
            if self._may_be_stuck:
                await faults.clear(conn, self.checkpoint_name)
        self._may_be_stuck = False

    async def _apply_one_by_one(self, conn: Connection, entries: list[LogEntry]) -> None:
        """Commit each event of a failed batch on its own, up to the one that fails: that one is
        recorded as the fault, and the runner stops before it."""
        for entry in entries:
            try:
                await self._apply(conn, [entry])
            except self._transient:
                raise
            except Exception as error:
                fault = await faults.record(conn, self.checkpoint_name, entry, error)
                self._may_be_stuck = True
                log.error("%s; it retries every %.0f s", fault.describe(), faults.STUCK_RETRY_S)
                raise faults.FollowerStuckError(fault) from error

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
