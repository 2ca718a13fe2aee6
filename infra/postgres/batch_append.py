"""PostgresBatchAppender: one event to each of many streams in one statement (the BatchAppender
port). On a connection, inside the caller's transaction (the linked-asset fan-out: its events
commit with its checkpoint); on a pool, each statement is a transaction of its own (the
submitter: an outcome is committed when append_each returns).

`take_last_position` says the newest position its appends reached since it was last asked, for
the caller to mark what a principal's next read waits for."""

from collections.abc import Sequence
from uuid import UUID

import asyncpg

from domain.events import EventMetadata, stream_type_of
from infra.postgres.commit_notifier import CommitNotifier
from infra.postgres.connections import Connection, translated
from infra.postgres.eventstore import PostgresEventStore, caller_of
from infra.postgres.hashchain import Content, content_digests
from infra.postgres.sql import wake_up
from infra.serialization import EventCodec, encode_metadata
from services.ports import OneAppend, Stream


class PostgresBatchAppender:
    def __init__(
        self, conn: "asyncpg.Pool | Connection", codec: EventCodec, notifier: CommitNotifier
    ) -> None:
        self._conn = conn
        self._codec = codec
        self._notifier = notifier
        self._store = PostgresEventStore(conn, codec, notifier=notifier)
        self._last_position: int | None = None

    def take_last_position(self) -> int | None:
        taken, self._last_position = self._last_position, None
        return taken

    async def load_many(self, stream_ids: Sequence[UUID]) -> dict[UUID, Stream]:
        return await self._store.load_many(stream_ids)

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        if not appends:
            return frozenset()
        if not isinstance(self._conn, asyncpg.Pool) and not self._conn.is_in_transaction():
            # On a connection, it commits with the caller's checkpoint.
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
        self._notifier.committed(carried_at)
        if row["last_position"] is not None:
            self._last_position = max(self._last_position or 0, row["last_position"])
        return frozenset(row["appended"])
