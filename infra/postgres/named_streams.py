"""PostgresNamedStreams: appends that also move a stream's unique name, in one transaction.

`stream_names` holds one row per (namespace, name); its primary key is what makes a name unique,
so two concurrent creates of the same name cannot both commit.
"""

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Final
from uuid import UUID

import asyncpg

from domain.events import Event, EventMetadata
from infra.postgres.connections import Connection, translated
from infra.postgres.eventstore import PostgresEventStore
from infra.postgres.stream_uses import hold_unused, hold_uses
from services.errors import NameTakenError
from services.ports import AppendResult, InUse, NameClaim, Stream, Uses

_RELEASE_OTHERS: Final = (
    "DELETE FROM stream_names WHERE stream_id = $1 AND (namespace, name) <> ($2, $3)"
)
_RELEASE_ALL: Final = "DELETE FROM stream_names WHERE stream_id = $1"
_CLAIM: Final = """
INSERT INTO stream_names (namespace, name, stream_id) VALUES ($1, $2, $3)
ON CONFLICT (namespace, name) DO UPDATE SET stream_id = excluded.stream_id
    WHERE stream_names.stream_id = excluded.stream_id
RETURNING stream_id
"""


class PostgresNamedStreams:
    def __init__(
        self, pool: asyncpg.Pool, store: PostgresEventStore, *, conn: Connection | None = None
    ) -> None:
        self._pool = pool
        self._store = store
        self._conn = conn

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator["PostgresNamedStreams"]:
        """The same streams over one pooled connection, for a request that reads then writes
        (one acquire and release instead of one per statement)."""
        async with self._pool.acquire() as conn:
            store = PostgresEventStore(conn, self._store.codec, notifier=self._store.notifier)
            yield PostgresNamedStreams(self._pool, store, conn=conn)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[Connection]:
        if self._conn is not None:
            yield self._conn
        else:
            async with self._pool.acquire() as conn:
                yield conn

    async def load(self, stream_id: UUID) -> Stream:
        return await self._store.load(stream_id)

    async def load_many(self, stream_ids: Sequence[UUID]) -> dict[UUID, Stream]:
        return await self._store.load_many(stream_ids)

    async def append(
        self,
        stream_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        metadata: EventMetadata,
        name: NameClaim | None,
        uses: Uses | None = None,
        unused: InUse | None = None,
    ) -> AppendResult:
        if expected_version == 0 and len(events) == 1 and name is not None and unused is None:
            # Creating a named stream, the common case: one statement, one round trip.
            created = await self._store.append_first_named(
                stream_id,
                events[0],
                metadata=metadata,
                namespace=name.namespace,
                name=name.name,
                uses=uses,
            )
            if created is None:
                raise NameTakenError(name.name, namespace=name.namespace, field=name.field)
            return created
        async with translated("append"), self._connection() as conn, conn.transaction():
            await hold_name(conn, stream_id, name, new=expected_version == 0)
            if unused is not None:
                await hold_unused(conn, stream_id, unused)
            if uses is not None:
                await hold_uses(conn, stream_id, uses)
            return await self._store.append_within(
                conn, stream_id, events, expected_version=expected_version, metadata=metadata
            )


class PostgresIdSequence:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def next_id(self) -> int:
        async with translated("next_id"):
            value: int = await self._pool.fetchval("SELECT nextval('org_unit_ids')")
        return value


async def hold_name(
    conn: Connection, stream_id: UUID, name: NameClaim | None, *, new: bool = False
) -> None:
    """Make `name` the one name the stream holds (None: it holds none), inside the caller's
    transaction; NameTakenError when another stream holds it. A `new` stream holds no name yet,
    so there is none to release."""
    if name is None:
        await conn.execute(_RELEASE_ALL, stream_id)
        return
    if not new:
        await conn.execute(_RELEASE_OTHERS, stream_id, name.namespace, name.name)
    # The upsert returns no row when another stream holds the name (its WHERE refuses).
    if await conn.fetchval(_CLAIM, name.namespace, name.name, stream_id) is None:
        raise NameTakenError(name.name, namespace=name.namespace, field=name.field)


async def name_holder(pool: asyncpg.Pool, namespace: str, name: str) -> UUID | None:
    """The stream holding `name` in `namespace`, if any: the write side's own answer."""
    async with translated("name_holder"):
        holder: UUID | None = await pool.fetchval(
            "SELECT stream_id FROM stream_names WHERE namespace = $1 AND name = $2", namespace, name
        )
    return holder
