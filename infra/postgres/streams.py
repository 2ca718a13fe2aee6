"""PostgresStreams: the one write port (services/ports/event_store.py `EventStore`) over the
`events` table. `append` chooses the statement serving each kind of append; which serves which:
the table in docs/decisions/0005-one-write-port.md."""

from collections.abc import Mapping, Sequence
from uuid import UUID

import asyncpg
import msgspec

from domain.events import Event, EventMetadata
from infra.postgres import application_registry, credential_vault, writer_standing
from infra.postgres.connections import translated
from infra.postgres.each_appends import EachAppends
from infra.postgres.encoding import StreamBatch
from infra.postgres.hashchain import GENESIS
from infra.postgres.names import hold_name
from infra.postgres.positions import note_append
from infra.postgres.sql import wake_up
from infra.postgres.stream_reads import StreamReads
from infra.postgres.stream_uses import hold_unused, hold_uses, refusal, used_ids
from infra.postgres.units_of_work import RowWrite
from services.errors import (
    IdempotencyKeyReusedError,
    NameTakenError,
    StaleReadError,
    VersionConflictError,
)
from services.ports.event_store import KEEP, Append, AppendResult, Keep, NameClaim, Uses
from services.ports.kept_secrets import (
    ApplicationSecret,
    ApplicationSecretDestroyed,
    ApplicationSecretReplaced,
    CredentialValues,
    CredentialValuesDestroyed,
    SecretRow,
)


class PostgresStreams(StreamReads, EachAppends):
    """The streams, read (StreamReads) and appended to, over a pool or a connection
    (units_of_work.BoundStreams)."""

    async def append(self, asked: Append) -> AppendResult:
        """Every append of the one port: the statement that serves it is chosen here."""
        try:
            if asked.secret is not None:  # with its secret row, in one transaction
                return await self._append_with_secret(asked)
            if (
                self._unit is None
                and not asked.checked
                and asked.name is KEEP
                and asked.uses is None
                and asked.unused is None
            ):  # events alone, outside a unit of work: most appends, and the cheapest way there
                return await self._append_events(*_events_alone(asked))
            return await self._append_asked(asked)
        except VersionConflictError as conflict:
            if conflict.actual is not None or isinstance(conflict, StaleReadError):
                raise
            # A race lost where the statement could not tell by how much: ask, once it is undone.
            actual = await self._version_now(asked.stream_id)
            raise VersionConflictError(
                asked.stream_id, expected=conflict.expected, actual=actual
            ) from conflict

    async def _append_with_secret(self, asked: Append) -> AppendResult:
        """The append, and the row its secret is kept in (sealed or hashed first, outside the
        transaction), unless the append was a replay."""
        write = await self._secret_write(asked.stream_id, asked.secret)
        async with self.transaction() as tx:
            result = await tx.append(msgspec.structs.replace(asked, secret=None))
            if not result.replayed:
                await write(tx.connection)
        return result

    async def _secret_write(self, stream_id: UUID, row: SecretRow | None) -> RowWrite:
        match row:
            case CredentialValues(values=values):
                return credential_vault.keep_values(self.keys, stream_id, values)
            case CredentialValuesDestroyed():
                return credential_vault.destroy_values(stream_id)
            case ApplicationSecret():
                return await application_registry.register(self.keys, stream_id, row)
            case ApplicationSecretReplaced(secret=secret):
                return await application_registry.replace(self.keys, stream_id, secret)
            case ApplicationSecretDestroyed():
                return application_registry.destroy(stream_id)
        raise ValueError(f"no row for {row!r}")

    async def _version_now(self, stream_id: UUID) -> int | None:
        try:
            found = await self._db.fetchval(
                "SELECT coalesce(max(version), 0) FROM events WHERE stream_id = $1", stream_id
            )
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):  # the message only
            return None
        return int(found)

    async def _append_asked(self, asked: Append) -> AppendResult:
        checked = asked.checked
        if checked and not _creates_named(asked):
            # Only the creation of a named stream checks within its one statement; any other
            # append checks first, in its transaction.
            async with self.transaction() as tx:
                await tx._refuse_moved(checked)
                return await tx._append(asked, None)
        return await self._append(asked, checked)

    async def _append(self, asked: Append, checked: Mapping[UUID, int] | None) -> AppendResult:
        async def write() -> AppendResult:
            if asked.name is not KEEP or asked.uses is not None or asked.unused is not None:
                return await self._append_holding(asked, checked)
            return await self._append_events(*_events_alone(asked))

        if self._unit is None:
            return await write()
        # In a unit of work each append is a savepoint: a refused one (a race lost, a name taken)
        # is undone alone, leaving the unit usable as in the fake, and what it was to do once
        # committed is forgotten with it (docs/decisions/0018-event-store-statements.md).
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
        batch = StreamBatch.of(
            self.codec, stream_id, events, metadata, event_ids, max_bytes=self.max_event_bytes
        )
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
        self, asked: Append, checked: Mapping[UUID, int] | None
    ) -> AppendResult:
        """The events with the name and the uses they move, in one transaction."""
        stream_id, events, expected_version, metadata = (
            asked.stream_id,
            asked.events,
            asked.expected_version,
            asked.metadata,
        )
        name, uses, unused = asked.name, asked.uses, asked.unused
        if isinstance(name, NameClaim) and _creates_named(asked):
            # Creating a named stream, the common case: one statement, one round trip.
            return await self._append_first_named(
                stream_id, events[0], metadata, name, uses, checked or {}
            )
        async with self.transaction() as tx:
            # The events first: a retry (its event ids stored already) is answered by the
            # append alone, before a name or a use moves, so a replay writes nothing, even
            # when its name has been freed or taken by another stream since.
            result = await tx._append_events(*_events_alone(asked))
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
        batch = StreamBatch.of(
            self.codec, stream_id, [event], metadata, None, max_bytes=self.max_event_bytes
        )
        *args, caller = batch.single(0)
        carried_at = self.notifier.claim()
        # The writer's standing, when still assumed, is checked by the statement itself.
        with writer_standing.carried() as standing:
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
                        None if standing is None else standing.access_epoch,
                    )
            except asyncpg.UniqueViolationError as exc:  # the stream exists already
                raise VersionConflictError(stream_id, expected=0, actual=None) from exc
            except asyncpg.PostgresError as exc:
                refused = refusal(exc, uses)
                if refused is None:
                    raise
                raise refused from exc
        if standing is not None:
            row = rows[0]
            found = writer_standing.from_row(row["access_epoch"], row["org_epoch"])
            await standing.settle(found)  # looks at the caller again if it moved: may refuse
            if row["access_epoch"] != standing.access_epoch:  # then nothing was written
                return await self._append_first_named(
                    stream_id, event, metadata, name, uses, checked
                )
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


def _creates_named(asked: Append) -> bool:
    """A named stream created with one fresh event: append_first_named.sql's case."""
    return (
        isinstance(asked.name, NameClaim)
        and asked.expected_version == 0
        and len(asked.events) == 1
        and asked.event_ids is None
        and asked.unused is None
    )


def _events_alone(
    asked: Append,
) -> tuple[UUID, Sequence[Event], int | None, EventMetadata, Sequence[UUID] | None]:
    return asked.stream_id, asked.events, asked.expected_version, asked.metadata, asked.event_ids
