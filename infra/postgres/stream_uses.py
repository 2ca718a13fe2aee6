"""Which streams use which, on the write side: kept in the transaction of each append that
changes it (services/ports.py `Uses`), and asked in the transaction of each deletion.

The two meet on a PostgreSQL advisory lock per used stream: a writer that comes to use one holds
it shared until it commits, a deletion holds it exclusively. Whichever is second waits for the
first to commit, then its next statement sees what the first wrote: the deletion finds the new
use and is refused, or the user finds the deletion and is refused. Shared locks never wait for
one another, and a deletion takes one lock and nothing after it, so no cycle can form.
"""

from typing import Final
from uuid import UUID

from infra.postgres.connections import Connection
from services.errors import InvalidRequestError
from services.ports import InUse, Uses

_LOCKS: Final = 7301  # the advisory locks' first key: the space of stream uses

_HOLD_SHARED: Final = (
    "SELECT pg_advisory_xact_lock_shared($1, hashtext(a::text)) FROM unnest($2::uuid[]) AS a"
)
_HOLD: Final = "SELECT pg_advisory_xact_lock($1, hashtext($2::uuid::text))"
# After the locks, in one statement: unless one of them is deleted, the stream uses exactly
# these (the rows it no longer uses go, the others are written or renamed); the deleted ones.
_RECORD: Final = """
WITH gone AS (
    SELECT DISTINCT stream_id FROM events
     WHERE stream_id = ANY($3::uuid[]) AND type LIKE '%.deleted.v1'
), forgotten AS (
    DELETE FROM stream_uses
     WHERE user_id = $1 AND NOT used_id = ANY($3::uuid[]) AND NOT EXISTS (SELECT FROM gone)
), recorded AS (
    INSERT INTO stream_uses (used_id, user_id, user_name)
    SELECT a, $1, $2 FROM unnest($3::uuid[]) AS a WHERE NOT EXISTS (SELECT FROM gone)
    ON CONFLICT (used_id, user_id) DO UPDATE SET user_name = excluded.user_name
)
SELECT stream_id FROM gone
"""
_USERS: Final = (
    "SELECT user_name FROM stream_uses WHERE used_id = $1 AND user_id <> $1 ORDER BY user_name"
)


async def hold_uses(conn: Connection, stream_id: UUID, uses: Uses) -> None:
    """Within the append's transaction: the stream now uses exactly `uses.used`, each of them
    still live (else InvalidRequestError naming its field)."""
    fields = dict(uses.used)
    wanted = sorted(fields)
    if wanted:
        await conn.execute(_HOLD_SHARED, _LOCKS, wanted)
    # A new statement, so it sees what a deletion that held a lock first committed.
    gone = await conn.fetch(_RECORD, stream_id, uses.user, wanted)
    if gone:
        field = fields[gone[0]["stream_id"]]
        raise InvalidRequestError(field, "it was deleted while this request was written")


async def hold_unused(conn: Connection, stream_id: UUID, refuse: InUse) -> None:
    """Within a deletion's transaction: nothing uses the stream (else what `refuse` builds from
    the users' names), and nothing comes to use it before the deletion commits."""
    await conn.execute(_HOLD, _LOCKS, stream_id)
    users = [row["user_name"] for row in await conn.fetch(_USERS, stream_id)]
    if users:
        raise refuse(users)
