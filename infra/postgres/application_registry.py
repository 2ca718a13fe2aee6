"""PostgresApplicationRegistry: application streams with their secrets' hashes beside them.

A wrapper of the one append port: the credentials row is written in the unit of work of the
application's append, so neither can exist without the other. The hashes come from
infra/security/secret_hashing.py. An application created under an Idempotency-Key also keeps
its first answer's secret, sealed, for its retries (`service_account_answers`, migration 0036):
a day at most, and not once the secret is replaced or the application deleted.
"""

from collections.abc import Sequence
from typing import Final
from uuid import UUID

import asyncpg
from cryptography.exceptions import InvalidTag

from domain import applications
from domain.events import Event, EventMetadata
from infra.postgres.connections import translated
from infra.postgres.streams import PostgresStreams
from infra.security.sealing import CredentialKeyUnconfiguredError, Sealed, Sealer
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
# How long a keyed create's retry is answered its first secret: a day, as payment APIs keep an
# idempotent answer. Longer would keep a live secret sealed for no retry's sake.
_ANSWER_KEPT: Final = "interval '1 day'"
_KEEP_ANSWER: Final = (
    "INSERT INTO service_account_answers (application_id, key_id, nonce, sealed)"
    " VALUES ($1, $2, $3, $4)"
)
_PURGE_ANSWERS: Final = (
    f"DELETE FROM service_account_answers WHERE created_at < now() - {_ANSWER_KEPT}"
)
_FORGET_ANSWER: Final = "DELETE FROM service_account_answers WHERE application_id = $1"
_ANSWER: Final = (
    "SELECT key_id, nonce, sealed FROM service_account_answers"
    f" WHERE application_id = $1 AND created_at >= now() - {_ANSWER_KEPT}"
)
_SECRET: Final = "clientSecret"


class PostgresApplicationRegistry:
    def __init__(
        self,
        streams: PostgresStreams,
        pool: asyncpg.Pool,
        hasher: SecretHasher,
        *,
        answers: Sealer | None = None,
    ) -> None:
        self._streams = streams
        self._pool = pool
        self._hasher = hasher
        self._answers = answers  # None: no key configured; no answer can be kept for retries

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
        kept_for_retries: bool = False,
    ) -> AppendResult:
        sealed = None
        if kept_for_retries:
            sealed = self._sealer().seal(application_id, {_SECRET: secret})
        secret_hash = await self._hasher.hash(secret)
        try:
            async with self._streams.transaction() as tx:
                result = await tx.append(
                    application_id, events, expected_version=expected_version, metadata=metadata
                )
                await tx.connection.execute(_INSERT, application_id, client_id, secret_hash)
                if sealed is not None:
                    await tx.connection.execute(_PURGE_ANSWERS)
                    await tx.connection.execute(
                        _KEEP_ANSWER, application_id, sealed.key_id, sealed.nonce, sealed.sealed
                    )
            return result
        except asyncpg.UniqueViolationError as exc:  # (the append's own become conflicts)
            raise ClientIdTakenError(client_id) from exc

    async def first_secret(self, application_id: UUID) -> str | None:
        sealer = self._sealer()  # (without a key, nothing kept could be opened: ask nothing)
        async with translated("load"):
            row = await self._pool.fetchrow(_ANSWER, application_id)
        if row is None or row["key_id"] != sealer.key_id:
            return None  # (sealed under a credential key since replaced: it opens no more)
        sealed = Sealed(row["key_id"], row["nonce"], row["sealed"])
        try:
            opened = sealer.open(application_id, sealed)
        except InvalidTag:  # the key was changed under the same id
            return None
        return opened[_SECRET]

    def _sealer(self) -> Sealer:
        if self._answers is None:
            raise CredentialKeyUnconfiguredError()
        return self._answers

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
        in one unit of work. The secret it was first answered with, if kept, is forgotten: it
        logs in no more."""
        async with self._streams.transaction() as tx:
            result = await tx.append(
                application_id, events, expected_version=expected_version, metadata=metadata
            )
            await tx.connection.execute(statement, application_id, *args)
            await tx.connection.execute(_FORGET_ANSWER, application_id)
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
