"""What feeds a consumer of the global log (a read model, the fan-out) its events, exactly once:
each batch is consumed in one transaction with its checkpoint. Unknown event types are skipped (a
newer writer may be deployed first); an event that fails stops it (infra/followers/faults.py)."""

import asyncio
import logging
import time
from collections.abc import Sequence

import asyncpg

from domain.events import RecordedEvent
from infra.followers import faults, global_log
from infra.followers.checkpoint_moves import CheckpointMoves
from infra.followers.global_log import Cursor, LogEntry
from infra.followers.log_follower import LogFollower
from infra.followers.log_tap import LogTap, Tapped
from infra.followers.metrics import ProjectorMetrics
from infra.postgres.connections import Connection
from infra.serialization import EventCodec
from infra.settings import ProjectorSettings

log = logging.getLogger(__name__)


class LogRunner:
    """A consumer of the log: `consume` one batch on the runner's connection, in the runner's
    transaction."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        name: str,
        codec: EventCodec,
        settings: ProjectorSettings,
        *,
        checkpoint: str,
        retry_on: tuple[type[Exception], ...] = (),
        metrics: ProjectorMetrics | None = None,
        tap: LogTap | None = None,
        moves: CheckpointMoves | None = None,
    ) -> None:
        self.name = name
        self._moves = moves or CheckpointMoves()
        # The process's followers share one (infra/workers/projector.py); alone, its own.
        self._own_tap = tap is None
        self._tap = tap or LogTap(pool, codec, batch_size=settings.batch_size)
        self._checkpoint = checkpoint
        self._metrics = metrics
        self._codec = codec
        self._batch_size = settings.batch_size
        self._transient = (*faults.TRANSIENT, *retry_on)
        self._may_be_stuck = True  # until a batch commits: a fault from before may be recorded
        self._follower = LogFollower(
            pool,
            name=checkpoint,
            batch_size=settings.batch_size,
            poll_interval_s=settings.poll_interval_s,
            retry_on=retry_on,
        )

    async def consume(self, conn: Connection, events: Sequence[RecordedEvent]) -> None:
        raise NotImplementedError

    def takes(self, entry: LogEntry) -> bool:
        """Whether `consume` is given this event; the checkpoint passes every one all the same.
        Only what is taken is decoded."""
        return self._codec.knows(entry.type)

    @property
    def checkpoint_name(self) -> str:
        return self._checkpoint

    @property
    def leading(self) -> bool:
        return self._follower.leading

    async def run(self, stop: asyncio.Event) -> None:
        try:
            await self._follower.run(self.step, stop)
        finally:
            if self._own_tap:  # a shared one is its process's to close
                await self._tap.close()

    async def step(self, conn: Connection, cursor: Cursor) -> tuple[Cursor, int]:
        """Consume the next batch after `cursor` and move the checkpoint, in one transaction."""
        since = self._follower.fresh_since()
        entries = await self._tap.after(conn, cursor, self._batch_size, since=since)
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
        return entries[-1].entry.cursor, len(entries)

    async def _apply(self, conn: Connection, entries: list[Tapped]) -> None:
        taken = [tapped.event() for tapped in entries if self.takes(tapped.entry)]
        if not taken and not self._may_be_stuck:
            # Nothing to consume: the checkpoint moves over the batch in one statement, not a
            # transaction of three, with the other runners' that took nothing of it: under a
            # steady load most batches of most runners are others' events (checkpoint_moves.py).
            await self._moves.move(conn, self.checkpoint_name, entries[-1].entry.cursor)
            return
        async with conn.transaction():
            await self.consume(conn, taken)
            await global_log.save_checkpoint(conn, self.checkpoint_name, entries[-1].entry.cursor)
            if self._may_be_stuck:
                await faults.clear(conn, self.checkpoint_name)
        self._may_be_stuck = False
        self.committed()

    def committed(self) -> None:
        """After a batch's transaction has committed (a runner that writes events tells the
        log's readers then)."""

    async def _apply_one_by_one(self, conn: Connection, entries: list[Tapped]) -> None:
        """Commit each event of a failed batch on its own, up to the one that fails: that one is
        recorded as the fault, and the runner stops before it."""
        for entry in entries:
            try:
                await self._apply(conn, [entry])
            except self._transient:
                raise
            except Exception as error:
                fault = await faults.record(conn, self.checkpoint_name, entry.entry, error)
                self._may_be_stuck = True
                log.error("%s; it retries every %.0f s", fault.describe(), faults.STUCK_RETRY_S)
                raise faults.FollowerStuckError(fault) from error
