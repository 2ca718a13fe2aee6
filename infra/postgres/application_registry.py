"""PostgresApplicationRegistry: application streams with their secrets' hashes beside them.

A wrapper of the one append port: the credentials row is written in the unit of work of the
application's append, so neither can exist without the other. The hashes come from
infra/security/secret_hashing.py.
"""

from collections.abc import Sequence
from typing import Final
from uuid import UUID

import asyncpg

from domain import applications
from domain.events import Event, EventMetadata
from infra.postgres.connections import translated
from infra.postgres.streams import PostgresStreams
from infra.security.secret_hashing import SecretHasher
from services.errors import ClientIdTakenError
from services.ports import AppendResult, Authenticated, Stream

_INSERT: Final = (
    "INSERT INTO application_credentials (application_id, client_id, secret_hash)"
    " VALUES ($1, $2, $3)"
)
_DELETE: Final = "DELETE FROM application_credentials WHERE application_id = $1"
_REPLACE: Final = "UPDATE application_credentials SET secret_hash = $2 WHERE application_id = $1"
_LOOKUP: Final = (
    "SELECT application_id, secret_hash FROM application_credentials WHERE client_id = $1"
)


class PostgresApplicationRegistry:
    def __init__(self, streams: PostgresStreams, pool: asyncpg.Pool, hasher: SecretHasher) -> None:
        self._streams = streams
        self._pool = pool
        self._hasher = hasher

    async def load(self, application_id: UUID) -> Stream:
        return await self._streams.load(application_id)

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
        try:
            return await self._append_with(
                application_id, events, expected_version, metadata, _INSERT, client_id, secret_hash
            )
        except asyncpg.UniqueViolationError as exc:  # (the append's own become conflicts)
            raise ClientIdTakenError(client_id) from exc

    async def unregister(
        self,
        application_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        metadata: EventMetadata,
    ) -> AppendResult:
        return await self._append_with(application_id, events, expected_version, metadata, _DELETE)

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
        return await self._append_with(
            application_id, events, expected_version, metadata, _REPLACE, secret_hash
        )

    async def _append_with(
        self,
        application_id: UUID,
        events: Sequence[Event],
        expected_version: int,
        metadata: EventMetadata,
        statement: str,
        *args: object,
    ) -> AppendResult:
        """The events, and `statement` on the application's credentials row (its id first),
        in one unit of work."""
        async with self._streams.transaction() as tx:
            result = await tx.append(
                application_id, events, expected_version=expected_version, metadata=metadata
            )
            await tx.connection.execute(statement, application_id, *args)
        return result

    async def authenticate(self, client_id: str, secret: str) -> Authenticated | None:
        async with translated("authenticate"):
            row = await self._pool.fetchrow(_LOOKUP, client_id)
        stored = None if row is None else row["secret_hash"]
        # Verified first: an unknown client id costs as much as a known one.
        if not await self._hasher.verify(stored, secret) or row is None:
            return None
        application_id: UUID = row["application_id"]
        state = applications.fold((await self._streams.load(application_id)).events)
        if state is None or not state.active:
            return None
        return Authenticated(application_id=application_id, token_generation=state.token_generation)
