"""The global log read once for all of a process's followers, and read ahead of them: a stretch is
read and decoded once and kept in memory, which answers as the database would. Why that holds,
and what it saves: docs/decisions/0023-followers.md."""

import asyncio
import bisect
import contextlib
import time
from typing import Final

import asyncpg
import msgspec

from domain.events import RecordedEvent
from infra.followers import global_log
from infra.followers.global_log import Cursor, LogEntry
from infra.postgres.connections import Connection
from infra.serialization import EventCodec, decode_metadata

_KEPT_BATCHES: Final = 4  # how much of the log the tap keeps, in batches
_AHEAD_WAIT_S: Final = 5.0  # a read-ahead that finds no connection after all is not made


class Tapped(msgspec.Struct, frozen=True):
    """An entry of the log, decoded once for every follower: `recorded` None for a type this
    release does not know (followers skip it); `error`, when it could not be decoded, is raised
    to the follower that takes it, as decoding it there would."""

    entry: LogEntry
    recorded: RecordedEvent | None
    error: Exception | None = None

    def event(self) -> RecordedEvent:
        if self.error is not None:
            raise self.error
        assert self.recorded is not None, "a follower took an event type it does not know"
        return self.recorded


class LogTap:
    def __init__(self, pool: asyncpg.Pool, codec: EventCodec, *, batch_size: int) -> None:
        self._pool = pool
        self._codec = codec
        self._batch = batch_size
        self._start: Cursor | None = None  # the run is the log after this cursor...
        self._run: list[Tapped] = []  # ...up to its last entry (or nothing yet)
        self._cursors: list[Cursor] = []  # the run's cursors, to find a follower in it
        self._extending: asyncio.Future[None] | None = None
        self._read_at = 0.0  # when the read that found the run's end began (monotonic)
        self._full = False  # the last read of the run's end found a whole batch: more is likely
        self._ahead: asyncio.Task[None] | None = None

    async def after(
        self, conn: Connection, cursor: Cursor, limit: int, *, since: float
    ) -> list[Tapped]:
        """Up to `limit` committed events after `cursor`, as global_log.read_after answers. A
        short answer (caught up) comes from a read begun at or after `since` (fresh_since), so it
        holds every commit the follower was told of. `conn`: the follower's own, free meanwhile."""
        while True:
            served = self._served(cursor, limit)
            inside = self._start is not None and self._start <= cursor <= self._end()
            # Short only when the run's end is caught up (its last read found less than a
            # batch) as of a fresh enough read: a follower takes a short answer as caught up.
            caught_up = inside and not self._full and self._read_at >= since
            if len(served) == limit or caught_up:
                if served:
                    self._read_ahead(served[-1].entry.cursor)
                return served
            if inside:  # the run's end is read again, by one follower for all
                if self._extending is not None:
                    await asyncio.wait([self._extending])  # then judged again: it may be older
                else:
                    await self._extend(conn)
                continue
            # Outside the stretch kept: read for this follower; ahead of the stretch (or with
            # none yet), what it reads becomes the stretch.
            started = time.monotonic()
            found = self._decoded(await global_log.read_after(conn, cursor, limit))
            if self._start is None or cursor > self._end():
                # A copy: the run grows in place, and the follower's batch must not.
                self._start, self._run = cursor, list(found)
                self._cursors = [t.entry.cursor for t in found]
                self._read_at, self._full = started, len(found) == limit
                if found:
                    self._read_ahead(found[-1].entry.cursor)
            return found

    def _served(self, cursor: Cursor, limit: int) -> list[Tapped]:
        if self._start is None or not self._start <= cursor < self._end():
            return []
        first = bisect.bisect_right(self._cursors, cursor)
        return self._run[first : first + limit]

    def _end(self) -> Cursor:
        assert self._start is not None
        return self._cursors[-1] if self._cursors else self._start

    async def _extend(self, conn: Connection) -> None:
        """Read the batch after the run's end on `conn` and add it to the run; followers that
        arrive meanwhile wait for it."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._extending = done
        try:
            end, started = self._end(), time.monotonic()
            found = await global_log.read_after(conn, end, self._batch)
            if self._start is not None and self._end() == end:  # the run was not replaced
                self._add(self._decoded(found))
                self._read_at, self._full = started, len(found) == self._batch
        finally:
            self._extending = None
            done.set_result(None)

    def _read_ahead(self, served_to: Cursor) -> None:
        """After serving up to the run's end a full batch's worth of log, read the next batch
        while followers apply this one."""
        if (
            not self._full
            or served_to != self._end()
            or self._extending is not None
            or (self._ahead is not None and not self._ahead.done())
        ):
            return
        self._ahead = asyncio.create_task(self._extend_on_own_connection())

    async def _extend_on_own_connection(self) -> None:
        # Only with a connection to spare (idle, or room to open one): the followers' own come
        # first. A read that fails is left to the followers' reads, which report it.
        pool = self._pool
        if pool.get_idle_size() == 0 and pool.get_size() >= pool.get_max_size():
            return
        with contextlib.suppress(TimeoutError, asyncpg.PostgresError, OSError):
            async with pool.acquire(timeout=_AHEAD_WAIT_S) as conn:
                if self._extending is None:  # a follower did not start one meanwhile
                    await self._extend(conn)

    def _add(self, found: list[Tapped]) -> None:
        self._run.extend(found)
        self._cursors.extend(t.entry.cursor for t in found)
        dropped = len(self._run) - _KEPT_BATCHES * self._batch
        if dropped > 0:
            self._start = self._cursors[dropped - 1]
            del self._run[:dropped], self._cursors[:dropped]

    def _decoded(self, entries: list[LogEntry]) -> list[Tapped]:
        return [self._decode(entry) for entry in entries]

    def _decode(self, entry: LogEntry) -> Tapped:
        if not self._codec.knows(entry.type):
            return Tapped(entry, None)
        try:
            recorded = RecordedEvent(
                position=entry.cursor.position,
                event_id=entry.event_id,
                stream_type=entry.stream_type,
                stream_id=entry.stream_id,
                version=entry.version,
                recorded_at=entry.recorded_at,
                metadata=decode_metadata(entry.metadata),
                event=self._codec.decode(entry.data),
            )
        except Exception as error:  # the follower that takes it records the fault
            return Tapped(entry, None, error)
        return Tapped(entry, recorded)

    async def close(self) -> None:
        if self._ahead is not None:
            self._ahead.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ahead
