"""PostgresStreams: the one append port (services/ports.py `Streams`) over the `events` table.

Every event is written here, through one encoder (infra/postgres/encoding.py). An append is
mostly one SQL statement (one round trip; infra/postgres/sql/append_*.sql) that checks
idempotency and the expected version, extends the hash chain and inserts, the database stamping
the time; one that moves a name or what the stream uses is a transaction of a few. The same port
bound to one connection in one transaction (`transaction()`) is a command's unit of work:
readers are woken, and the heads this process knows updated, only once it has committed; each
of its appends is a savepoint, so a refused one leaves the unit usable.
`append_each` writes one event to each of many streams in one statement (the fan-out).
Driver errors are translated here; nothing above `infra` sees an asyncpg type.
"""

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from functools import partial
from typing import Final, NamedTuple
from uuid import UUID

import asyncpg

from domain.events import Event, EventMetadata, RecordedEvent
from infra.postgres.commit_notifier import CommitNotices, CommitNotifier
from infra.postgres.connections import Connection, translated
from infra.postgres.encoding import StreamBatch, columns, encode
from infra.postgres.hashchain import GENESIS
from infra.postgres.names import hold_name
from infra.postgres.positions import note_append
from infra.postgres.remembered_streams import RememberedStreams
from infra.postgres.sql import statement, wake_up
from infra.postgres.stream_heads import StreamHeads
from infra.postgres.stream_uses import hold_unused, hold_uses, refusal, used_ids
from infra.serialization import EventCodec, decode_metadata
from services.errors import (
    IdempotencyKeyReusedError,
    NameTakenError,
    StaleReadError,
    VersionConflictError,
)
from services.ports import (
    KEEP,
    AppendResult,
    InUse,
    Keep,
    NameClaim,
    OneAppend,
    Stream,
    Uses,
    Written,
)

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


class _Unit:
    """A transaction's writes: what is to happen once it has committed (nothing if it rolls
    back: a head it wrote would be no head at all, and a position no reader will ever reach)."""

    __slots__ = ("after",)

    def __init__(self) -> None:
        self.after: list[Callable[[], None]] = []

    def committed(self) -> None:
        for action in self.after:
            action()


class PostgresStreams:
    """The streams over a pool it does not own (bootstrap opens and closes it), or over a
    connection: inside a caller's transaction (the fan-out's, with its checkpoint), the appends
    are the caller's to commit."""

    def __init__(
        self,
        pool: "asyncpg.Pool | Connection",
        codec: EventCodec,
        *,
        notifier: CommitNotices | None = None,
    ) -> None:
        self._db = pool
        self.codec = codec
        self.notifier: CommitNotices = notifier or CommitNotifier(pool)
        self._heads = StreamHeads()
        self._remembered = RememberedStreams()
        self._unit: _Unit | None = None  # set: bound to a transaction of transaction()'s
        self._last_position: int | None = None  # of append_each, for take_last_position

    def _bound(self, conn: Connection, unit: _Unit | None) -> "PostgresStreams":
        bound = PostgresStreams(conn, self.codec, notifier=self.notifier)
        bound._heads = self._heads  # what it learns, once committed, the pool's appends use
        bound._remembered = self._remembered
        bound._unit = unit
        return bound

    @property
    def connection(self) -> Connection:
        """The connection of a transaction (or session): for rows of a side table that are to
        commit with its appends (the credential vault's values, an application's secret)."""
        if isinstance(self._db, asyncpg.Pool):
            raise RuntimeError("a pool's streams have no one connection: use transaction()")
        return self._db

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator["PostgresStreams"]:
        if self._unit is not None:  # inside a transaction already: this is part of it
            yield self
            return
        unit = _Unit()
        async with translated("append"), self._connection() as conn, conn.transaction():
            yield self._bound(conn, unit)
        unit.committed()

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator["PostgresStreams"]:
        """The same streams over one pooled connection, for a request that reads then writes
        (one acquire and release instead of one per statement); each append commits alone."""
        async with self._connection() as conn:
            yield self._bound(conn, None)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[Connection]:
        if isinstance(self._db, asyncpg.Pool):
            async with self._db.acquire() as conn:
                yield conn
        else:
            yield self._db

    def _in_transaction(self) -> bool:
        """Statements run in a transaction of more than themselves: a race lost is final (the
        transaction, or the append's savepoint, is aborted), so it is a conflict rather than a
        statement to try again."""
        if self._unit is not None:
            return True
        return not isinstance(self._db, asyncpg.Pool) and self._db.is_in_transaction()

    def _once_committed(self, action: Callable[[], None]) -> None:
        if self._unit is None:
            action()
        else:
            self._unit.after.append(action)

    def _remember(self, stream_id: UUID, version: int, hash_: bytes) -> None:
        """A head read (in a transaction, it may be of its own writes: known once committed)."""
        if self._unit is None:
            self._heads.remember(stream_id, version, hash_)
        else:
            self._unit.after.append(lambda: self._heads.remember(stream_id, version, hash_))

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

    def _keep(self, stream_id: UUID, stream: Stream) -> None:
        """A stream read, for later decisions: in a transaction it may hold the transaction's own
        writes, so only once it has committed (and never in a caller's transaction, whose end
        this does not see)."""
        if self._unit is not None:
            self._unit.after.append(partial(self._remembered.keep, stream_id, stream))
        elif not self._in_transaction():
            self._remembered.keep(stream_id, stream)

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

    async def append(
        self,
        stream_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int | None,
        metadata: EventMetadata,
        event_ids: Sequence[UUID] | None = None,
        name: NameClaim | Keep | None = KEEP,
        uses: Uses | None = None,
        unused: InUse | None = None,
        checked: Mapping[UUID, int] | None = None,
    ) -> AppendResult:
        asked = _Append(
            stream_id, events, expected_version, metadata, event_ids, name, uses, unused
        )
        if checked and not asked.creates_named():
            # Only the creation of a named stream checks within its one statement; any other
            # append checks first, in its transaction.
            async with self.transaction() as tx:
                await tx._refuse_moved(checked)
                return await tx._append(asked, None)
        return await self._append(asked, checked)

    async def _append(self, asked: "_Append", checked: Mapping[UUID, int] | None) -> AppendResult:
        async def write() -> AppendResult:
            if asked.name is not KEEP or asked.uses is not None or asked.unused is not None:
                return await self._append_holding(asked, checked)
            return await self._append_events(*asked.events_alone())

        if self._unit is None:
            return await write()
        # In a unit of work each append is a savepoint. A refused one (a race lost to a
        # concurrent writer, a name taken) would otherwise abort the whole transaction; undone
        # alone, it leaves the unit usable: its caller may read what won and go on (a create
        # retried under the same key answers the winner's events, services/idempotency.py), as
        # in the fake. What the undone append was to do once committed is forgotten with it.
        unit, undo_from = self._unit, len(self._unit.after)
        try:
            async with translated("append"), self.connection.transaction():
                return await write()
        except BaseException:
            del unit.after[undo_from:]
            raise

    async def _append_events(
        self,
        stream_id: UUID,
        events: Sequence[Event],
        expected_version: int | None,
        metadata: EventMetadata,
        event_ids: Sequence[UUID] | None,
    ) -> AppendResult:
        """The events alone, in one statement."""
        if not events:
            return AppendResult(stream_id=stream_id, version=expected_version or 0, positions=())
        if event_ids is not None and len(event_ids) != len(events):
            raise ValueError("one event id per event")
        batch = StreamBatch.of(self.codec, stream_id, events, metadata, event_ids)
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

    async def _append_holding(
        self, asked: "_Append", checked: Mapping[UUID, int] | None
    ) -> AppendResult:
        """The events with the name and the uses they move, in one transaction."""
        stream_id, events, expected_version, metadata, _, name, uses, unused = asked
        if isinstance(name, NameClaim) and asked.creates_named():
            # Creating a named stream, the common case: one statement, one round trip.
            return await self._append_first_named(
                stream_id, events[0], metadata, name, uses, checked or {}
            )
        async with self.transaction() as tx:
            # The events first: a retry (its event ids stored already) is answered by the
            # append alone, before a name or a use moves, so a replay writes nothing, even
            # when its name has been freed or taken by another stream since.
            result = await tx._append_events(*asked.events_alone())
            if result.replayed:
                return result
            conn = tx.connection
            if not isinstance(name, Keep):
                await hold_name(conn, stream_id, name, new=expected_version == 0)
            if unused is not None:
                await hold_unused(conn, stream_id, unused)
            if uses is not None:
                await hold_uses(conn, stream_id, uses)
            return result

    async def _append_first_named(
        self,
        stream_id: UUID,
        event: Event,
        metadata: EventMetadata,
        name: NameClaim,
        uses: Uses | None,
        checked: Mapping[UUID, int],
    ) -> AppendResult:
        """Create a stream with its first event, claim its name and record what it `uses`, in
        one statement (append_first_named.sql), unless a stream it was decided on (`checked`)
        has moved on."""
        *args, caller = StreamBatch.of(self.codec, stream_id, [event], metadata, None).single(0)
        carried_at = self.notifier.claim()
        try:
            async with translated("append"):
                rows = await self._db.fetch(
                    wake_up("append_first_named", carried_at),
                    *args,
                    GENESIS,
                    name.namespace,
                    name.name,
                    caller,
                    None if uses is None else uses.user,
                    used_ids(uses),
                    list(checked),
                    list(checked.values()),
                )
        except asyncpg.UniqueViolationError as exc:  # the stream exists already
            raise VersionConflictError(stream_id, expected=0, actual=None) from exc
        except asyncpg.PostgresError as exc:
            refused = refusal(exc, uses)
            if refused is None:
                raise
            raise refused from exc
        if moved := rows[0]["moved"]:
            self._remembered.forget(moved)
            raise StaleReadError(moved[0])
        if not rows[0]["claimed"]:
            raise NameTakenError(name.name, namespace=name.namespace, field=name.field)
        return self._result(stream_id, 0, 1, rows, carried_at)

    async def _fetch_deciding_races(
        self,
        query: str,
        args: tuple[object, ...],
        stream_id: UUID,
        expected_version: int | None,
    ) -> list[asyncpg.Record]:
        try:
            async with translated("append"):
                return await self._db.fetch(query, *args)
        except asyncpg.UniqueViolationError as exc:
            if self._in_transaction():  # the transaction (or savepoint) is lost: a writer won
                raise VersionConflictError(
                    stream_id, expected=expected_version, actual=None
                ) from exc
            # A concurrent writer took the version first, or a concurrent retry of this very
            # append stored our event ids. A second attempt tells which: it replays the stored
            # result, or reports the conflict with the stream's actual version.
            try:
                async with translated("append"):
                    return await self._db.fetch(query, *args)
            except asyncpg.UniqueViolationError as again:  # lost a second race in a row
                raise VersionConflictError(
                    stream_id, expected=expected_version, actual=None
                ) from again

    async def _append_after(
        self, version_before: int, head: bytes, batch: StreamBatch
    ) -> AppendResult | None:
        """Events with fresh ids (no retry to detect) after a head this process knows: the
        database need not look the head up. None when another writer got there first (unique
        (stream_id, version) refused the rows)."""
        carried_at = self.notifier.claim()
        count = len(batch.encoded)
        known = "append_known" if count == 1 else "append_known_many"
        try:
            async with translated("append"):
                row = await self._db.fetchrow(
                    wake_up(known, carried_at), *batch.after(version_before, head)
                )
        except asyncpg.UniqueViolationError as exc:
            if self._in_transaction():
                raise VersionConflictError(
                    batch.stream_id, expected=version_before, actual=None
                ) from exc
            return None
        assert row is not None
        positions = (row[0],) if count == 1 else tuple(row[0])
        version = version_before + count
        self._written(batch.stream_id, version, row["hash"], carried_at, max(positions))
        return AppendResult(
            stream_id=batch.stream_id,
            version=version,
            positions=positions,
            recorded_at=row["recorded_at"],
        )

    def _written(
        self, stream_id: UUID, version: int, hash_: bytes, carried_at: float | None, last: int
    ) -> None:
        if self._unit is not None:
            after = partial(self._written_now, stream_id, version, hash_, carried_at, last)
            self._unit.after.append(after)
        else:
            self._written_now(stream_id, version, hash_, carried_at, last)

    def _written_now(
        self, stream_id: UUID, version: int, hash_: bytes, carried_at: float | None, last: int
    ) -> None:
        self._heads.remember(stream_id, version, hash_)
        self._remembered.forget((stream_id,))
        self.notifier.committed(carried_at)
        note_append(last)

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
            replayed = max(stored["positions"], default=None)
            self._once_committed(lambda: note_append(replayed))
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
        positions = tuple(written["positions"])
        self._written(stream_id, written["version"], written["hash"], carried_at, max(positions))
        return AppendResult(
            stream_id=stream_id,
            version=written["version"],
            positions=positions,
            recorded_at=written["recorded_at"],
        )

    async def _refuse_moved(self, checked: Mapping[UUID, int]) -> None:
        """StaleReadError when a stream a decision was made on has moved past what it read."""
        async with translated("load"):
            moved = await self.connection.fetchval(
                statement("moved_streams"), list(checked), list(checked.values())
            )
        if moved:
            self._remembered.forget(moved)
            raise StaleReadError(moved[0])

    def take_last_position(self) -> int | None:
        """The newest position append_each reached since this was last asked, for the caller
        to mark what a principal's next read waits for."""
        taken, self._last_position = self._last_position, None
        return taken

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        """One event to each stream, in one statement (append_each.sql). On a connection, inside
        the caller's transaction (the fan-out: its events commit with its checkpoint); on a pool,
        the statement is a transaction of its own (the submitter: an outcome is committed when
        this returns)."""
        if not appends:
            return frozenset()
        if not self._in_transaction() and not isinstance(self._db, asyncpg.Pool):
            raise RuntimeError("append_each runs inside the caller's transaction")
        ids = b"".join(a.event_id.bytes for a in appends)
        streams = [a.stream_id.bytes for a in appends]
        batch = encode(self.codec, [a.event for a in appends], metadata, ids, streams)
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


def _written_of(row: asyncpg.Record) -> Written:
    return Written(row["recorded_at"], row["actor"] or "")


class _Append(NamedTuple):
    """One append as the port was asked for it (Streams.append)."""

    stream_id: UUID
    events: Sequence[Event]
    expected_version: int | None
    metadata: EventMetadata
    event_ids: Sequence[UUID] | None
    name: NameClaim | Keep | None
    uses: Uses | None
    unused: InUse | None

    def creates_named(self) -> bool:
        """A named stream created with one fresh event: append_first_named.sql's case."""
        return (
            isinstance(self.name, NameClaim)
            and self.expected_version == 0
            and len(self.events) == 1
            and self.event_ids is None
            and self.unused is None
        )

    def events_alone(
        self,
    ) -> tuple[UUID, Sequence[Event], int | None, EventMetadata, Sequence[UUID] | None]:
        return self.stream_id, self.events, self.expected_version, self.metadata, self.event_ids
