"""One event to each of many streams in one statement (append_each.sql): the fan-out's batch
and the submitter's outcomes. A part of infra/postgres/streams.py's `PostgresStreams`."""

from collections.abc import Sequence
from uuid import UUID

import asyncpg

from domain.events import EventMetadata
from infra.postgres.connections import translated
from infra.postgres.encoding import columns, encode
from infra.postgres.sql import wake_up
from infra.postgres.units_of_work import BoundStreams
from services.ports.event_store import OneAppend


class EachAppends(BoundStreams):
    def take_last_position(self) -> int | None:
        """The newest position append_each reached since this was last asked, for the caller
        to mark what a principal's next read waits for."""
        taken, self._last_position = self._last_position, None
        return taken

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        """One event to each stream, in one statement: on a connection, inside the caller's
        transaction (the fan-out's events commit with its checkpoint); on a pool, a transaction
        of its own (the submitter's outcome is committed when this returns)."""
        if not appends:
            return frozenset()
        if not self._in_transaction() and not isinstance(self._db, asyncpg.Pool):
            raise RuntimeError("append_each runs inside the caller's transaction")
        ids = b"".join(a.event_id.bytes for a in appends)
        streams = [a.stream_id.bytes for a in appends]
        events = [a.event for a in appends]
        batch = encode(self.codec, events, metadata, ids, streams, max_bytes=self.max_event_bytes)
        carried_at = self.notifier.claim()
        async with translated("append"):
            row = await self._db.fetchrow(
                wake_up("append_each", carried_at),
                [a.stream_id for a in appends],
                [a.expected_version for a in appends],
                [a.event_id for a in appends],
                *columns(batch.events),
                batch.digests,
                batch.stream_type,
                batch.metadata,
                batch.caller,
            )
        assert row is not None
        self._once_committed(lambda: self.notifier.committed(carried_at))
        if row["last_position"] is not None:
            self._last_position = max(self._last_position or 0, row["last_position"])
        return frozenset(row["appended"])
