"""PostgresEventStore: the EventStore port over the `events` table (asyncpg).

An append is one SQL statement (one round trip, one transaction; see
infra/postgres/sql/append_*.sql) that checks idempotency and the expected version, extends the hash
chain and inserts; readers are woken after the commit.
Driver errors are translated here; nothing above `infra` sees an asyncpg type.
"""

import os
from collections.abc import Sequence
from typing import Final, NamedTuple
from uuid import UUID

import asyncpg

from domain.events import Event, EventMetadata, RecordedEvent, stream_type_of
from infra.postgres.commit_notifier import CommitNotifier
from infra.postgres.connections import Connection, translated
from infra.postgres.hashchain import GENESIS, Content, content_digests
from infra.postgres.positions import note_append
from infra.postgres.sql import wake_up
from infra.postgres.stream_heads import StreamHeads
from infra.postgres.stream_uses import refusal, used_ids
from infra.serialization import EncodedEvent, EventCodec, decode_metadata, encode_metadata
from services.errors import IdempotencyKeyReusedError, VersionConflictError
from services.ports import AppendResult, Stream, Uses, Written

# With each event, when and by whom it was written (Stream.written).
LOAD: Final = """
SELECT data::text AS data, hash, recorded_at, metadata->>'actorSubject' AS actor FROM events
 WHERE stream_id = $1 ORDER BY version
"""
LOAD_MANY: Final = """
SELECT stream_id, data::text AS data, hash, recorded_at, metadata->>'actorSubject' AS actor
  FROM events WHERE stream_id = ANY($1::uuid[]) ORDER BY stream_id, version
"""
LOAD_RECORDED: Final = """
SELECT global_position, event_id, stream_type, stream_id, version, recorded_at,
       metadata::text AS metadata, data::text AS data
  FROM events WHERE stream_id = $1 ORDER BY version
"""


class PostgresEventStore:
    """The event store over a pool it does not own (bootstrap opens and closes the pool)."""

    def __init__(
        self,
        pool: "asyncpg.Pool | Connection",
        codec: EventCodec,
        *,
        notifier: CommitNotifier | None = None,
    ) -> None:
        # A pool, or a connection inside a caller's transaction (to append atomically with rows of
        # the caller's own, as the application registry does; it lends its pool's notifier).
        self._pool = pool
        self._codec = codec
        self.codec = codec
        self.notifier = notifier or CommitNotifier(pool)
        self._heads = StreamHeads()

    async def append_within(
        self,
        conn: Connection,
        stream_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        metadata: EventMetadata,
    ) -> AppendResult:
        """Append on `conn`, inside the caller's transaction, so the events commit or roll back
        with rows of the caller's own. Wake-ups still go through this store's notifier."""
        store = PostgresEventStore(conn, self._codec, notifier=self.notifier)
        try:
            return await store.append(
                stream_id, events, expected_version=expected_version, metadata=metadata
            )
        except (asyncpg.UniqueViolationError, asyncpg.InFailedSQLTransactionError) as exc:
            # Inside a transaction the store cannot retry: a concurrent writer won.
            raise VersionConflictError(stream_id, expected=expected_version, actual=None) from exc

    async def load(self, stream_id: UUID) -> Stream:
        async with translated("load"):
            rows = await self._pool.fetch(LOAD, stream_id)
        if rows:
            self._heads.remember(stream_id, len(rows), rows[-1]["hash"])
        return self._stream(rows)

    def _stream(self, rows: Sequence[asyncpg.Record]) -> Stream:
        events = tuple(self._codec.decode(row["data"]) for row in rows)
        return Stream(len(rows), events, tuple(map(_written, rows)))

    async def append_first_named(
        self,
        stream_id: UUID,
        event: Event,
        *,
        metadata: EventMetadata,
        namespace: str,
        name: str,
        uses: Uses | None = None,
    ) -> AppendResult | None:
        """Create a stream with its first event, claim its name and record what it `uses`, in
        one statement; None (nothing written) when another stream holds the name;
        InvalidRequestError naming the field (nothing written) when a used stream is deleted."""
        args = self._encode(stream_id, [event], metadata, None).single(0)[:-1]
        carried_at = self.notifier.claim()
        try:
            async with translated("append"):
                rows = await self._pool.fetch(
                    wake_up("append_first_named", carried_at),
                    *args,
                    GENESIS,
                    namespace,
                    name,
                    caller_of(metadata),
                    None if uses is None else uses.user,
                    used_ids(uses),
                )
        except asyncpg.UniqueViolationError as exc:  # the stream exists already
            raise VersionConflictError(stream_id, expected=0, actual=None) from exc
        except asyncpg.PostgresError as exc:
            refused = refusal(exc, uses)
            if refused is None:
                raise
            raise refused from exc
        if not rows[0]["claimed"]:
            return None
        return self._result(stream_id, 0, 1, rows, carried_at)

    async def load_many(self, stream_ids: Sequence[UUID]) -> dict[UUID, Stream]:
        """Several streams in one round trip (a stream with no events is absent)."""
        async with translated("load"):
            rows = await self._pool.fetch(LOAD_MANY, list(stream_ids))
        grouped: dict[UUID, list[asyncpg.Record]] = {}
        for row in rows:
            grouped.setdefault(row["stream_id"], []).append(row)
        found = {}
        for stream_id, stream_rows in grouped.items():
            self._heads.remember(stream_id, len(stream_rows), stream_rows[-1]["hash"])
            found[stream_id] = self._stream(stream_rows)
        return found

    async def load_recorded(self, stream_id: UUID) -> list[RecordedEvent]:
        """The stream with each event's envelope, for history and audit reads."""
        async with translated("load"):
            rows = await self._pool.fetch(LOAD_RECORDED, stream_id)
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
            for row in rows
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
        batch = self._encode(stream_id, events, metadata, event_ids)
        expected = -1 if expected_version is None else expected_version
        known_head = self._heads.known(stream_id, expected_version)
        if event_ids is None and known_head is not None:
            assert expected_version is not None
            appended = await self._append_after(expected_version, known_head, batch)
            if appended is not None:
                return appended
        carried_at = self.notifier.claim()
        if len(events) == 1 and event_ids is None:
            # One event with a fresh random id (it cannot be a retry): no idempotency check.
            args, query = batch.single(expected), wake_up("append_one", carried_at)
        else:
            args, query = batch.several(expected), wake_up("append_many", carried_at)
        rows = await self._fetch_deciding_races(query, args, stream_id, expected_version)
        return self._result(stream_id, expected_version, len(events), rows, carried_at)

    def _encode(
        self,
        stream_id: UUID,
        events: Sequence[Event],
        metadata: EventMetadata,
        event_ids: Sequence[UUID] | None,
    ) -> "_Batch":
        encoded = [self._codec.encode(event) for event in events]
        stream_types = {stream_type_of(e.type) for e in encoded}
        if len(stream_types) != 1:
            raise ValueError(f"one append goes to one stream type, not {sorted(stream_types)}")
        stream_type = stream_types.pop()
        if event_ids is None:
            ids = random_ids(len(events))
        else:
            ids = b"".join(event_id.bytes for event_id in event_ids)
        meta = encode_metadata(metadata)
        stream = stream_id.bytes
        digests = content_digests(
            stream_type,
            meta,
            (
                Content(ids[16 * i : 16 * i + 16], stream, e.type, e.schema_version, e.data)
                for i, e in enumerate(encoded)
            ),
        )
        return _Batch(stream_id, stream_type, ids, encoded, meta, digests, caller_of(metadata))

    async def _fetch_deciding_races(
        self,
        query: str,
        args: tuple[object, ...],
        stream_id: UUID,
        expected_version: int | None,
    ) -> list[asyncpg.Record]:
        try:
            async with translated("append"):
                return await self._pool.fetch(query, *args)
        except asyncpg.UniqueViolationError:
            # A concurrent writer took the version first, or a concurrent retry of this very
            # append stored our event ids. A second attempt tells which: it replays the stored
            # result, or reports the conflict with the stream's actual version.
            try:
                async with translated("append"):
                    return await self._pool.fetch(query, *args)
            except asyncpg.UniqueViolationError as exc:  # lost a second race in a row
                raise VersionConflictError(
                    stream_id, expected=expected_version, actual=None
                ) from exc

    async def _append_after(
        self, version_before: int, head: bytes, batch: "_Batch"
    ) -> AppendResult | None:
        """Events with fresh ids (no retry to detect) after a head this process knows: the
        database need not look the head up. None when another writer got there first (unique
        (stream_id, version) refused the rows)."""
        carried_at = self.notifier.claim()
        count = len(batch.encoded)
        known = "append_known" if count == 1 else "append_known_many"
        try:
            async with translated("append"):
                row = await self._pool.fetchrow(
                    wake_up(known, carried_at), *batch.after(version_before, head)
                )
        except asyncpg.UniqueViolationError:
            return None
        assert row is not None
        positions = (row[0],) if count == 1 else tuple(row[0])
        version = version_before + count
        self._heads.remember(batch.stream_id, version, row["hash"])
        self.notifier.committed(carried_at)
        note_append(positions[-1])
        return AppendResult(
            stream_id=batch.stream_id,
            version=version,
            positions=positions,
            recorded_at=row["recorded_at"],
        )

    def _result(
        self,
        stream_id: UUID,
        expected_version: int | None,
        count: int,
        rows: list[asyncpg.Record],
        carried_at: float | None,
    ) -> AppendResult:
        """Read the statement's answer: appended, replayed, refused as a retry, or a conflict."""
        written = next(row for row in rows if not row["replayed"])
        stored = next((row for row in rows if row["replayed"]), None)
        if stored is not None:
            if stored["current"] != count:
                raise IdempotencyKeyReusedError(stream_id)
            note_append(max(stored["positions"], default=None))
            return AppendResult(
                stream_id=stream_id,
                version=stored["version"],
                positions=tuple(stored["positions"]),
                replayed=True,
                recorded_at=stored["recorded_at"],
            )
        if written["version"] is None:
            raise VersionConflictError(
                stream_id, expected=expected_version, actual=written["current"]
            )
        self._heads.remember(stream_id, written["version"], written["hash"])
        self.notifier.committed(carried_at)
        note_append(max(written["positions"], default=None))
        return AppendResult(
            stream_id=stream_id,
            version=written["version"],
            positions=tuple(written["positions"]),
            recorded_at=written["recorded_at"],
        )


def _written(row: asyncpg.Record) -> Written:
    return Written(row["recorded_at"], row["actor"] or "")


class _Batch(NamedTuple):
    """The events of one append, encoded, with their ids (16 bytes each) and digests."""

    stream_id: UUID
    stream_type: str
    ids: bytes
    encoded: list[EncodedEvent]
    metadata: str
    digests: list[bytes]
    caller: str | None  # the events' `caller` column (infra/postgres/read_marks.py)

    def uuids(self) -> list[UUID]:
        return [UUID(bytes=self.ids[i : i + 16]) for i in range(0, len(self.ids), 16)]

    def single(self, expected: int) -> tuple[object, ...]:
        """The arguments of append_one.sql."""
        e = self.encoded[0]
        return (
            self.stream_id,
            self.stream_type,
            expected,
            self.ids.hex(),  # asyncpg takes a uuid as its 32 hex digits
            e.type,
            e.schema_version,
            e.data,
            self.metadata,
            self.digests[0],
            self.caller,
        )

    def after(self, version_before: int, head: bytes) -> tuple[object, ...]:
        """The arguments of append_known.sql for one event, else of append_known_many.sql."""
        if len(self.encoded) == 1:
            e = self.encoded[0]
            return (
                self.stream_id,
                self.stream_type,
                self.ids.hex(),  # asyncpg takes a uuid as its 32 hex digits
                version_before + 1,
                e.type,
                e.schema_version,
                e.data,
                self.metadata,
                self.digests[0],
                head,
                self.caller,
            )
        # Packed (see append_known_many.sql): one line per event. Tags match the codec's
        # pattern and payloads are compact JSON, where a newline is always escaped.
        data = "\n".join(e.data for e in self.encoded)
        if data.count("\n") != len(self.encoded) - 1:
            raise ValueError("an event payload holds a raw newline: not compact JSON")
        return (
            self.stream_id,
            self.stream_type,
            self.ids,
            "\n".join(e.type for e in self.encoded),
            "\n".join(str(e.schema_version) for e in self.encoded),
            data,
            self.metadata,
            b"".join(self.digests),
            head,
            version_before,
            self.caller,
        )

    def several(self, expected: int) -> tuple[object, ...]:
        """The arguments of append_many.sql."""
        return (
            self.stream_id,
            self.stream_type,
            expected,
            self.uuids(),
            [e.type for e in self.encoded],
            [e.schema_version for e in self.encoded],
            [e.data for e in self.encoded],
            self.metadata,
            self.digests,
            self.caller,
        )


def caller_of(metadata: EventMetadata) -> str | None:
    """Who reads these events back (a user or an application), or None for the service's own
    writes: the events' `caller` column, which read-your-writes finds the caller's last event by."""
    return None if metadata.actor_kind == "system" else metadata.actor_subject


def random_ids(count: int) -> bytes:
    """`count` version-4 UUIDs, 16 bytes each, from one read of the OS's randomness (uuid4()
    makes a syscall and an object per id; most appends never need the objects)."""
    random = int.from_bytes(os.urandom(16 * count))
    keep, version_and_variant = _ID_BITS.get(count) or _id_bits(count)
    return (random & keep | version_and_variant).to_bytes(16 * count)


# Per id: byte 6 keeps its low nibble under version 4, byte 8 its low six bits under variant 10.
_KEEP: Final = b"\xff" * 6 + b"\x0f\xff\x3f" + b"\xff" * 7
_SET: Final = bytes(6) + b"\x40\x00\x80" + bytes(7)
_ID_BITS: Final[dict[int, tuple[int, int]]] = {}


def _id_bits(count: int) -> tuple[int, int]:
    bits = int.from_bytes(_KEEP * count), int.from_bytes(_SET * count)
    if count <= 1000:  # the sizes appends use, not every size ever seen
        _ID_BITS[count] = bits
    return bits
