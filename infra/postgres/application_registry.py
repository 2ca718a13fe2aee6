"""PostgresApplicationRegistry: the secrets' hashes (infra/security/secret_hashing.py) beside the
application streams, written by the store in the append's transaction, so neither exists without
the other; and a keyed create's first secret, sealed for its retries (migration 0036)."""

from typing import Final
from uuid import UUID

import asyncpg

from domain import applications
from infra.postgres.connections import Connection, translated
from infra.postgres.units_of_work import RowWrite, SecretKeys
from infra.security.sealing import Sealed, SealedUnderAnotherKeyError
from infra.security.secret_hashing import SecretHasher
from services.errors import ClientIdTakenError
from services.ports.event_store import StreamLoader
from services.ports.kept_secrets import ApplicationSecret, Authenticated

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


async def register(keys: SecretKeys, application_id: UUID, row: ApplicationSecret) -> RowWrite:
    """The secret's slow hash (and, kept for retries, the secret sealed), made before the
    append's transaction; the credentials row written in it."""
    sealed = None
    if row.kept_for_retries:
        sealed = keys.require(keys.answers).seal(application_id, {_SECRET: row.secret})
    secret_hash = await _hasher(keys).hash(row.secret)

    async def write(conn: Connection) -> None:
        try:
            await conn.execute(_INSERT, application_id, row.client_id, secret_hash)
        except asyncpg.UniqueViolationError as exc:
            raise ClientIdTakenError(row.client_id) from exc
        if sealed is not None:
            await conn.execute(_PURGE_ANSWERS)
            await conn.execute(
                _KEEP_ANSWER, application_id, sealed.key_id, sealed.nonce, sealed.sealed
            )

    return write


async def replace(keys: SecretKeys, application_id: UUID, secret: str) -> RowWrite:
    """The new secret's hash in place of the old; the first secret, if kept, logs in no more."""
    secret_hash = await _hasher(keys).hash(secret)
    return _forgetting(_REPLACE, application_id, secret_hash)


def destroy(application_id: UUID) -> RowWrite:
    return _forgetting(_DELETE, application_id)


def _forgetting(statement: str, application_id: UUID, *args: object) -> RowWrite:
    """`statement` on the application's credentials row (its id first); the secret it was
    first answered with, if kept, is forgotten."""

    async def write(conn: Connection) -> None:
        await conn.execute(statement, application_id, *args)
        await conn.execute(_FORGET_ANSWER, application_id)

    return write


def _hasher(keys: SecretKeys) -> SecretHasher:
    if keys.hasher is None:
        raise RuntimeError("the store was given no secret hasher")
    return keys.hasher


class PostgresApplicationRegistry:
    def __init__(self, streams: StreamLoader, pool: asyncpg.Pool, keys: SecretKeys) -> None:
        self._streams = streams
        self._pool = pool
        self._keys = keys  # no answers: no key configured; no answer can be kept for retries

    async def first_secret(self, application_id: UUID) -> str | None:
        sealer = self._keys.require(self._keys.answers)  # (without a key, nothing kept opens)
        async with translated("load"):
            row = await self._pool.fetchrow(_ANSWER, application_id)
        if row is None or row["key_id"] != sealer.key_id:
            return None  # (sealed under a credential key since replaced: it opens no more)
        sealed = Sealed(row["key_id"], row["nonce"], row["sealed"])
        try:
            opened = sealer.open(application_id, sealed)
        except SealedUnderAnotherKeyError:  # the key was changed under the same id
            return None
        return opened[_SECRET]

    async def authenticate(self, client_id: str, secret: str) -> Authenticated | None:
        async with translated("authenticate"):
            row = await self._pool.fetchrow(_LOOKUP, client_id)
        stored = None if row is None else row["secret_hash"]
        # Verified first: an unknown client id costs as much as a known one.
        if not await _hasher(self._keys).verify(stored, secret) or row is None:
            return None
        application_id: UUID = row["application_id"]
        state = applications.fold((await self._streams.load(application_id)).events)
        if state is None or not state.active:
            return None
        return Authenticated(application_id=application_id, token_generation=state.token_generation)
