"""PostgresApplicationRegistry: application events in the store, secret hashes beside them.

The credentials row and the application's event are written in one transaction, so neither can
exist without the other. The hashes come from infra/security/secret_hashing.py.
"""

from collections.abc import Sequence
from typing import Final
from uuid import UUID

import asyncpg

from domain import applications
from domain.events import Event, EventMetadata
from infra.postgres.connections import Connection, translated
from infra.postgres.eventstore import PostgresEventStore
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from services.errors import ClientIdTakenError
from services.ports import AppendResult, Authenticated, Stream

_INSERT: Final = (
    "INSERT INTO application_credentials (application_id, client_id, secret_hash)"
    " VALUES ($1, $2, $3)"
)
_LOOKUP: Final = (
    "SELECT application_id, secret_hash FROM application_credentials WHERE client_id = $1"
)


class PostgresApplicationRegistry:
    def __init__(self, pool: asyncpg.Pool, hasher: SecretHasher) -> None:
        self._pool = pool
        self._hasher = hasher
        self._store = PostgresEventStore(pool, DOMAIN_CODEC)

    async def load(self, application_id: UUID) -> Stream:
        return await self._store.load(application_id)

    async def register(
        self,
        application_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        client_id: str,
        secret: str,
        metadata: EventMetadata,
    ) -> AppendResult:
        secret_hash = await self._hasher.hash(secret)
        async with translated("register"), self._pool.acquire() as conn, conn.transaction():
            try:
                await conn.execute(_INSERT, application_id, client_id, secret_hash)
            except asyncpg.UniqueViolationError as exc:
                raise ClientIdTakenError(client_id) from exc
            return await self._append_in(conn, application_id, events, expected_version, metadata)

    async def unregister(
        self,
        application_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        metadata: EventMetadata,
    ) -> AppendResult:
        async with translated("unregister"), self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "DELETE FROM application_credentials WHERE application_id = $1", application_id
            )
            return await self._append_in(conn, application_id, events, expected_version, metadata)

    async def replace_secret(
        self,
        application_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        secret: str,
        metadata: EventMetadata,
    ) -> AppendResult:
        secret_hash = await self._hasher.hash(secret)
        async with translated("replace_secret"), self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "UPDATE application_credentials SET secret_hash = $2 WHERE application_id = $1",
                application_id,
                secret_hash,
            )
            return await self._append_in(conn, application_id, events, expected_version, metadata)

    async def _append_in(
        self,
        conn: Connection,
        application_id: UUID,
        events: Sequence[Event],
        expected_version: int,
        metadata: EventMetadata,
    ) -> AppendResult:
        return await self._store.append_within(
            conn, application_id, events, expected_version=expected_version, metadata=metadata
        )

    async def authenticate(self, client_id: str, secret: str) -> Authenticated | None:
        async with translated("authenticate"):
            row = await self._pool.fetchrow(_LOOKUP, client_id)
        stored = None if row is None else row["secret_hash"]
        # Verified first: an unknown client id costs as much as a known one.
        if not await self._hasher.verify(stored, secret) or row is None:
            return None
        application_id: UUID = row["application_id"]
        state = applications.fold((await self._store.load(application_id)).events)
        if state is None or not state.active:
            return None
        return Authenticated(application_id=application_id, token_generation=state.token_generation)
