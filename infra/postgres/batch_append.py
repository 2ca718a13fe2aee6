"""PostgresBatchAppender: one event to each of many streams in one statement (the BatchAppender
port), for the linked-asset fan-out, on the connection of the caller's transaction."""

from collections.abc import Sequence
from uuid import UUID

from domain.events import EventMetadata, stream_type_of
from infra.postgres.commit_notifier import CommitNotifier
from infra.postgres.connections import Connection, translated
from infra.postgres.eventstore import PostgresEventStore, caller_of
from infra.postgres.hashchain import Content, content_digests
from infra.postgres.positions import note_append
from infra.postgres.sql import wake_up
from infra.serialization import EventCodec, encode_metadata
from services.errors import VersionConflictError
from services.ports import OneAppend, Stream


class PostgresBatchAppender:
    def __init__(self, conn: Connection, codec: EventCodec, notifier: CommitNotifier) -> None:
        self._conn = conn
        self._codec = codec
        self._notifier = notifier
        self._store = PostgresEventStore(conn, codec, notifier=notifier)

    async def load(self, stream_id: UUID) -> Stream:
        return await self._store.load(stream_id)

    async def load_many(self, stream_ids: Sequence[UUID]) -> dict[UUID, Stream]:
        return await self._store.load_many(stream_ids)

    async def append_each(self, appends: Sequence[OneAppend], *, metadata: EventMetadata) -> int:
        if not appends:
            return 0
        if not self._conn.is_in_transaction():  # a partial batch must be able to roll back
            raise RuntimeError("append_each runs inside the caller's transaction")
        encoded = [self._codec.encode(a.event) for a in appends]
        stream_types = {stream_type_of(e.type) for e in encoded}
        if len(stream_types) != 1:
            raise ValueError(f"one batch goes to one stream type, not {sorted(stream_types)}")
        stream_type = stream_types.pop()
        meta = encode_metadata(metadata)
        digests = content_digests(
            stream_type,
            meta,
            (
                Content(a.event_id.bytes, a.stream_id.bytes, e.type, e.schema_version, e.data)
                for a, e in zip(appends, encoded, strict=True)
            ),
        )
        carried_at = self._notifier.claim()
        async with translated("append"):
            row = await self._conn.fetchrow(
                wake_up("append_each", carried_at),
                [a.stream_id for a in appends],
                [a.expected_version for a in appends],
                [a.event_id for a in appends],
                [e.type for e in encoded],
                [e.schema_version for e in encoded],
                [e.data for e in encoded],
                digests,
                stream_type,
                meta,
                caller_of(metadata),
            )
        assert row is not None
        if row["appended"] != len(appends):
            # Some stream moved on since it was read: the caller's transaction must not commit.
            moved = len(appends) - row["appended"]
            raise VersionConflictError(appends[0].stream_id, expected=None, actual=None) from (
                RuntimeError(f"{moved} of {len(appends)} streams moved on")
            )
        self._notifier.committed(carried_at)
        note_append(row["last_position"])
        return int(row["appended"])
