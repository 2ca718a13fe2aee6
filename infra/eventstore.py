"""PostgresEventStore: the EventStore port over the `events` table (asyncpg).

The append is one call of the `trainplate_append` SQL function (one round trip, one transaction),
which checks idempotency and the expected version, extends the hash chain and notifies readers.
Driver errors are translated here; nothing above `infra` sees an asyncpg type.
"""

import uuid
from collections.abc import Sequence
from typing import Final
from uuid import UUID

import asyncpg

from domain.events import Event, EventMetadata, RecordedEvent, stream_type_of
from infra.serialization import EventCodec, decode_metadata, encode_metadata
from services.errors import IdempotencyKeyReusedError, VersionConflictError
from services.ports import AppendResult, Stream

APPEND: Final = (
    "SELECT version, global_position, replayed"
    " FROM trainplate_append($1, $2, $3, $4, $5, $6, $7, $8)"
)
LOAD: Final = "SELECT data::text FROM events WHERE stream_id = $1 ORDER BY version"
LOAD_RECORDED: Final = """
SELECT global_position, event_id, stream_type, stream_id, version, recorded_at,
       metadata::text AS metadata, data::text AS data
  FROM events WHERE stream_id = $1 ORDER BY version
"""
VERSION_CONFLICT: Final = "TP409"
IDS_REUSED: Final = "TP422"


class PostgresEventStore:
    """The event store over a pool it does not own (bootstrap opens and closes the pool)."""

    def __init__(self, pool: asyncpg.Pool, codec: EventCodec) -> None:
        self._pool = pool
        self._codec = codec

    async def load(self, stream_id: UUID) -> Stream:
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
        args = (
            stream_id,
            stream_types.pop(),
            -1 if expected_version is None else expected_version,
            list(event_ids) if event_ids is not None else [uuid.uuid4() for _ in events],
            [e.type for e in encoded],
            [e.schema_version for e in encoded],
            [e.data for e in encoded],
            encode_metadata(metadata),
        )
        try:
            rows = await self._call_append(stream_id, expected_version, args)
        except asyncpg.UniqueViolationError:
            # A concurrent writer took the version first, or a concurrent retry of this very
            # append stored our event ids. A second attempt tells which: it replays the stored
            # result, or reports the conflict with the stream's actual version.
            try:
                rows = await self._call_append(stream_id, expected_version, args)
            except asyncpg.UniqueViolationError as exc:  # lost a second race in a row
                raise VersionConflictError(
                    stream_id, expected=expected_version, actual=None
                ) from exc
        return AppendResult(
            stream_id=stream_id,
            version=rows[-1]["version"],
            positions=tuple(row["global_position"] for row in rows),
            replayed=rows[0]["replayed"],
        )

    async def _call_append(
        self, stream_id: UUID, expected_version: int | None, args: tuple[object, ...]
    ) -> list[asyncpg.Record]:
        try:
            return await self._pool.fetch(APPEND, *args)
        except asyncpg.PostgresError as exc:
            if exc.sqlstate == VERSION_CONFLICT:
                detail = getattr(exc, "detail", None)
                raise VersionConflictError(
                    stream_id, expected=expected_version, actual=int(detail) if detail else None
                ) from exc
            if exc.sqlstate == IDS_REUSED:
                raise IdempotencyKeyReusedError(stream_id) from exc
            raise
