"""PostgresEventStore: the EventStore port over the `events` table (asyncpg).

An append is one SQL statement (one round trip, one transaction; see infra/sql/append_*.sql)
that checks idempotency and the expected version, extends the hash chain and inserts; readers are
woken after the commit.
Driver errors are translated here; nothing above `infra` sees an asyncpg type.
"""

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Sequence
from typing import Final
from uuid import UUID

import asyncpg

from domain.events import Event, EventMetadata, RecordedEvent, stream_type_of
from infra.errors import StoreUnavailableError
from infra.hashchain import content_digest
from infra.serialization import EventCodec, decode_metadata, encode_metadata
from infra.sql import statement
from services.errors import IdempotencyKeyReusedError, VersionConflictError
from services.ports import AppendResult, Stream

LOAD: Final = "SELECT data::text FROM events WHERE stream_id = $1 ORDER BY version"
LOAD_RECORDED: Final = """
SELECT global_position, event_id, stream_type, stream_id, version, recorded_at,
       metadata::text AS metadata, data::text AS data
  FROM events WHERE stream_id = $1 ORDER BY version
"""
NOTIFY_CHANNEL: Final = "trainplate_events"

log = logging.getLogger(__name__)


class CommitNotifier:
    """Wakes the log's readers (LISTEN trainplate_events) after appends have committed.

    The first commit after a quiet spell is signalled at once; commits during the next
    `min_interval_s` share one more NOTIFY at its end. A busy writer so pays one round trip per
    interval, not per append (a round trip costs as much client CPU as a small append). A lost
    NOTIFY (process killed between commit and signal) only delays readers until their next poll.
    """

    def __init__(self, pool: asyncpg.Pool, *, min_interval_s: float = 0.005) -> None:
        self._pool = pool
        self._min_interval_s = min_interval_s
        self._dirty = False
        self._task: asyncio.Task[None] | None = None

    def poke(self) -> None:
        self._dirty = True
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._notify(), name="trainplate-notify")

    async def _notify(self) -> None:
        while self._dirty:
            self._dirty = False
            try:
                await self._pool.execute("SELECT pg_notify($1, '')", NOTIFY_CHANNEL)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                log.info("no wake-up sent to the log's readers (%s); they will poll", exc)
                return
            await asyncio.sleep(self._min_interval_s)


class PostgresEventStore:
    """The event store over a pool it does not own (bootstrap opens and closes the pool)."""

    def __init__(self, pool: asyncpg.Pool, codec: EventCodec) -> None:
        self._pool = pool
        self._codec = codec
        self._notifier = CommitNotifier(pool)

    async def load(self, stream_id: UUID) -> Stream:
        async with _translated("load"):
            rows = await self._pool.fetch(LOAD, stream_id)
        return Stream(len(rows), tuple(self._codec.decode(row[0]) for row in rows))

    async def load_recorded(self, stream_id: UUID) -> list[RecordedEvent]:
        """The stream with each event's envelope, for history and audit reads."""
        return [
            RecordedEvent(
                position=row["global_position"],
                event_id=row["event_id"],
                stream_type=row["stream_type"],
                stream_id=row["stream_id"],
                version=row["version"],
                recorded_at=row["recorded_at"],
                metadata=decode_metadata(row["metadata"]),
                event=self._codec.decode(row["data"]),
            )
            for row in await self._pool.fetch(LOAD_RECORDED, stream_id)
        ]

    async def append(
        self,
        stream_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int | None,
        metadata: EventMetadata,
        event_ids: Sequence[UUID] | None = None,
    ) -> AppendResult:
        if not events:
            return AppendResult(stream_id=stream_id, version=expected_version or 0, positions=())
        if event_ids is not None and len(event_ids) != len(events):
            raise ValueError("one event id per event")
        encoded = [self._codec.encode(event) for event in events]
        stream_types = {stream_type_of(e.type) for e in encoded}
        if len(stream_types) != 1:
            raise ValueError(f"one append goes to one stream type, not {sorted(stream_types)}")
        stream_type = stream_types.pop()
        ids = list(event_ids) if event_ids is not None else random_uuids(len(events))
        meta = encode_metadata(metadata)
        digests = [
            content_digest(
                event_id=event_id,
                stream_type=stream_type,
                stream_id=stream_id,
                type=e.type,
                schema_version=e.schema_version,
                data=e.data,
                metadata=meta,
            )
            for event_id, e in zip(ids, encoded, strict=True)
        ]
        expected = -1 if expected_version is None else expected_version
        if len(events) == 1 and event_ids is None:
            # Fresh random id: it cannot be a retry, so the lean single-event statement will do.
            e = encoded[0]
            args: tuple[object, ...] = (
                stream_id,
                stream_type,
                expected,
                ids[0],
                e.type,
                e.schema_version,
                e.data,
                meta,
                digests[0],
            )
            query = statement("append_one")
        else:
            args = (
                stream_id,
                stream_type,
                expected,
                ids,
                [e.type for e in encoded],
                [e.schema_version for e in encoded],
                [e.data for e in encoded],
                meta,
                digests,
            )
            query = statement("append_many")
        try:
            async with _translated("append"):
                rows = await self._pool.fetch(query, *args)
        except asyncpg.UniqueViolationError:
            # A concurrent writer took the version first, or a concurrent retry of this very
            # append stored our event ids. A second attempt tells which: it replays the stored
            # result, or reports the conflict with the stream's actual version.
            try:
                async with _translated("append"):
                    rows = await self._pool.fetch(query, *args)
            except asyncpg.UniqueViolationError as exc:  # lost a second race in a row
                raise VersionConflictError(
                    stream_id, expected=expected_version, actual=None
                ) from exc
        return self._result(stream_id, expected_version, len(events), rows)

    def _result(
        self,
        stream_id: UUID,
        expected_version: int | None,
        count: int,
        rows: list[asyncpg.Record],
    ) -> AppendResult:
        """Read the statement's answer: appended, replayed, refused as a retry, or a conflict."""
        written = next(row for row in rows if not row["replayed"])
        stored = next((row for row in rows if row["replayed"]), None)
        if stored is not None:
            if stored["current"] != count:
                raise IdempotencyKeyReusedError(stream_id)
            return AppendResult(
                stream_id=stream_id,
                version=stored["version"],
                positions=tuple(stored["positions"]),
                replayed=True,
            )
        if written["version"] is None:
            raise VersionConflictError(
                stream_id, expected=expected_version, actual=written["current"]
            )
        self._notifier.poke()
        return AppendResult(
            stream_id=stream_id, version=written["version"], positions=tuple(written["positions"])
        )


# What a lost or refused connection looks like through asyncpg (a restart, a failover, a timeout).
_UNAVAILABLE = (
    OSError,
    TimeoutError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
)


@contextlib.asynccontextmanager
async def _translated(operation: str) -> AsyncIterator[None]:
    try:
        yield
    except asyncpg.DataError:  # a bad argument, not a lost connection
        raise
    except _UNAVAILABLE as exc:
        raise StoreUnavailableError(operation) from exc


def random_uuids(count: int) -> list[UUID]:
    """Version-4 UUIDs from one read of the OS's randomness (uuid4() makes one syscall per id)."""
    pool = os.urandom(16 * count)
    return [UUID(bytes=pool[i : i + 16], version=4) for i in range(0, 16 * count, 16)]
