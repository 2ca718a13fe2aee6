"""Which streams use which: kept in each append that changes it (`Uses`), asked in each deletion,
under an advisory lock per used stream, shared for users, exclusive for a deletion (which takes no
lock after it, so no cycle): docs/decisions/0018-event-store-statements.md."""

from typing import Final
from uuid import UUID

import asyncpg

from infra.postgres.connections import Connection
from services.errors import InvalidRequestError
from services.ports.event_store import InUse, Uses

_LOCKS: Final = 7301  # the advisory locks' first key: the space of stream uses (as in 0022)

_HOLD: Final = "SELECT pg_advisory_xact_lock($1, hashtext($2::uuid::text))"
# The locks, then (a new snapshot) the check and the rows, in one call (migration 0022).
_HOLD_USES: Final = "SELECT trainplate_hold_uses($1, $2, $3::uuid[])"
_GONE: Final = "TP410"  # what the call raises when a used stream was deleted
_USERS: Final = (
    "SELECT user_name FROM stream_uses WHERE used_id = $1 AND user_id <> $1 ORDER BY user_name"
)


async def hold_uses(conn: Connection, stream_id: UUID, uses: Uses) -> None:
    """Within the append's transaction: the stream now uses exactly `uses.used`, each of them
    still live (else InvalidRequestError naming its field)."""
    try:
        await conn.execute(_HOLD_USES, stream_id, uses.user, used_ids(uses))
    except asyncpg.PostgresError as exc:
        refused = refusal(exc, uses)
        if refused is None:
            raise
        raise refused from exc


def used_ids(uses: Uses | None) -> list[UUID] | None:
    """The used streams as the call takes them (None: the append records no uses)."""
    return None if uses is None else sorted({used for used, _ in uses.used})


def refusal(exc: asyncpg.PostgresError, uses: Uses | None) -> InvalidRequestError | None:
    """When an append that held `uses` failed because a used stream was deleted meanwhile,
    the error naming the request field that named it (None: it failed otherwise)."""
    if exc.sqlstate != _GONE or uses is None:
        return None
    fields = {str(used): field for used, field in uses.used}
    field = fields.get(str(exc.detail), "/")
    return InvalidRequestError(field, "it was deleted while this request was written")


async def hold_unused(conn: Connection, stream_id: UUID, refuse: InUse) -> None:
    """Within a deletion's transaction: nothing uses the stream (else what `refuse` builds from
    the users' names), and nothing comes to use it before the deletion commits."""
    await conn.execute(_HOLD, _LOCKS, stream_id)
    users = [row["user_name"] for row in await conn.fetch(_USERS, stream_id)]
    if users:
        raise refuse(users)
