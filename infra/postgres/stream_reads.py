"""Reading streams from `events`: a stream's events with when and by whom each was written,
several in one round trip, or with every envelope (history, audit); and, in an append's
transaction, whether streams a decision read have moved. The reads of `PostgresStreams`."""

from collections.abc import Mapping, Sequence
from typing import Final
from uuid import UUID

import asyncpg

from domain.events import Event, RecordedEvent
from infra.postgres.connections import translated
from infra.postgres.sql import statement
from infra.postgres.units_of_work import BoundStreams
from infra.serialization import decode_metadata
from services.errors import StaleReadError
from services.ports.event_store import Stream, Written

# With each event, when and by whom it was written (Stream.written), and the request digest of a
# creation's events only, those of its stream's first transaction: why, and what it costs, in
# docs/decisions/0018-event-store-statements.md.
LOAD: Final = """
SELECT data::text AS data, hash, recorded_at, metadata->>'actorSubject' AS actor,
       CASE WHEN transaction_id = (SELECT f.transaction_id FROM events f
                                    WHERE f.stream_id = $1 AND f.version = 1)
            THEN metadata->>'requestDigest' END AS request
  FROM events WHERE stream_id = $1 ORDER BY version
"""
LOAD_MANY: Final = """
SELECT stream_id, data::text AS data, hash, recorded_at, metadata->>'actorSubject' AS actor,
       CASE WHEN transaction_id = first_value(transaction_id)
                                      OVER (PARTITION BY stream_id ORDER BY version)
            THEN metadata->>'requestDigest' END AS request
  FROM events WHERE stream_id = ANY($1::uuid[]) ORDER BY stream_id, version
"""
LOAD_AFTER: Final = """
SELECT e.stream_id, e.data::text AS data
  FROM unnest($1::uuid[], $2::int[]) AS k(stream_id, after)
  JOIN events e ON e.stream_id = k.stream_id AND e.version > k.after
 ORDER BY e.stream_id, e.version
"""
LOAD_RECORDED: Final = """
SELECT global_position, event_id, stream_type, stream_id, version, recorded_at,
       metadata::text AS metadata, data::text AS data
  FROM events WHERE stream_id = $1 ORDER BY version
"""


class StreamReads(BoundStreams):
    """Streams read; each head read is remembered for the appends that follow it."""

    async def load(self, stream_id: UUID) -> Stream:
        async with translated("load"):
            rows = await self._db.fetch(LOAD, stream_id)
        if rows:
            self._remember(stream_id, len(rows), rows[-1]["hash"])
        return self._stream(rows)

    def _stream(self, rows: Sequence[asyncpg.Record]) -> Stream:
        events = tuple(self.codec.decode(row["data"]) for row in rows)
        return Stream(len(rows), events, tuple(map(_written_of, rows)))

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        """Several streams in one round trip (a stream with no events is absent); `remembered`,
        those this process read last from memory, and only the others from the database."""
        found: dict[UUID, Stream] = {}
        wanted = list(stream_ids)
        if remembered:
            kept = {i: s for i in wanted if (s := self._remembered.get(i)) is not None}
            found = {i: s for i, s in kept.items() if s.version}
            wanted = [i for i in wanted if i not in kept]
            if not wanted:
                return found
        async with translated("load"):
            rows = await self._db.fetch(LOAD_MANY, wanted)
        grouped: dict[UUID, list[asyncpg.Record]] = {i: [] for i in wanted}
        for row in rows:
            grouped[row["stream_id"]].append(row)
        for stream_id, stream_rows in grouped.items():
            stream = self._stream(stream_rows)
            # Kept for the decisions that may use what is remembered (only those; and a fresh
            # read of a stream they remember brings it up to date: a decision it refused, made
            # again from the store, is not refused again from memory at the next request).
            if remembered or stream_id in self._remembered:
                self._keep(stream_id, stream)
            if stream_rows:
                self._remember(stream_id, len(stream_rows), stream_rows[-1]["hash"])
                found[stream_id] = stream
        return found

    async def load_after(self, versions: Mapping[UUID, int]) -> dict[UUID, tuple[Event, ...]]:
        """Each stream's events after the version given, in one round trip (none after it:
        absent)."""
        async with translated("load"):
            rows = await self._db.fetch(LOAD_AFTER, list(versions), list(versions.values()))
        found: dict[UUID, list[Event]] = {}
        for row in rows:
            found.setdefault(row["stream_id"], []).append(self.codec.decode(row["data"]))
        return {stream_id: tuple(events) for stream_id, events in found.items()}

    async def load_recorded(self, stream_id: UUID) -> list[RecordedEvent]:
        """The stream with each event's envelope, for history and audit reads."""
        async with translated("load"):
            rows = await self._db.fetch(LOAD_RECORDED, stream_id)
        return [
            RecordedEvent(
                position=row["global_position"],
                event_id=row["event_id"],
                stream_type=row["stream_type"],
                stream_id=row["stream_id"],
                version=row["version"],
                recorded_at=row["recorded_at"],
                metadata=decode_metadata(row["metadata"]),
                event=self.codec.decode(row["data"]),
            )
            for row in rows
        ]

    async def _refuse_moved(self, checked: Mapping[UUID, int]) -> None:
        """StaleReadError when a stream a decision was made on has moved past what it read."""
        async with translated("load"):
            moved = await self.connection.fetchval(
                statement("moved_streams"), list(checked), list(checked.values())
            )
        if moved:
            self._remembered.forget(moved)
            raise StaleReadError(moved[0])


def _written_of(row: asyncpg.Record) -> Written:
    return Written(row["recorded_at"], row["actor"] or "", row["request"])
