"""Reading the global event log in commit-safe order, and the consumers' checkpoints. Positions
are drawn at insert but seen at commit, so readers stay below the transaction-id horizon
(`pg_snapshot_xmin`): nothing can appear behind the cursor `(transaction_id, global_position)`."""

from collections.abc import Mapping
from datetime import datetime
from typing import Final, NamedTuple
from uuid import UUID

import msgspec

from infra.postgres.connections import Connection


class Cursor(NamedTuple):
    transaction_id: int
    position: int


START: Final = Cursor(0, 0)


class LogEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One stored event as consumers of the log read it; `data` is the stored JSON, unparsed."""

    cursor: Cursor
    event_id: UUID
    stream_type: str
    stream_id: UUID
    version: int
    type: str
    data: str
    metadata: str
    recorded_at: datetime

    @property
    def fact(self) -> str:
        """`template.created.v1` -> `created`."""
        return self.type.split(".")[1]


READ_AFTER: Final = """
SELECT transaction_id, global_position, event_id, stream_type, stream_id, version, type,
       data::text AS data, metadata::text AS metadata, recorded_at
  FROM events
 WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
   AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
 ORDER BY transaction_id, global_position
 LIMIT $3
"""


async def read_after(conn: Connection, cursor: Cursor, limit: int) -> list[LogEntry]:
    """Up to `limit` committed events after `cursor`, in the order every reader sees them."""
    rows = await conn.fetch(READ_AFTER, cursor.transaction_id, cursor.position, limit)
    return [
        LogEntry(
            cursor=Cursor(row["transaction_id"], row["global_position"]),
            event_id=row["event_id"],
            stream_type=row["stream_type"],
            stream_id=row["stream_id"],
            version=row["version"],
            type=row["type"],
            data=row["data"],
            metadata=row["metadata"],
            recorded_at=row["recorded_at"],
        )
        for row in rows
    ]


async def load_checkpoint(conn: Connection, name: str) -> Cursor:
    row = await conn.fetchrow(
        "SELECT transaction_id, global_position FROM consumer_checkpoints WHERE name = $1", name
    )
    return START if row is None else Cursor(row["transaction_id"], row["global_position"])


# A checkpoint moves forward only, whatever order its writes arrive in.
_FORWARD: Final = """
ON CONFLICT (name) DO UPDATE
   SET transaction_id = excluded.transaction_id,
       global_position = excluded.global_position,
       updated_at = now()
 WHERE (c.transaction_id, c.global_position) < (excluded.transaction_id, excluded.global_position)
"""
_SAVE: Final = f"""
INSERT INTO consumer_checkpoints AS c (name, transaction_id, global_position)
VALUES ($1, $2::xid8, $3){_FORWARD}"""
_SAVE_MANY: Final = f"""
INSERT INTO consumer_checkpoints AS c (name, transaction_id, global_position)
SELECT m.name, m.transaction_id::text::xid8, m.global_position
  FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS m(name, transaction_id, global_position)
{_FORWARD}"""


async def save_checkpoint(conn: Connection, name: str, cursor: Cursor) -> None:
    """Move the checkpoint forward; never backwards, whatever order calls arrive in."""
    await conn.execute(_SAVE, name, cursor.transaction_id, cursor.position)


async def save_checkpoints(conn: Connection, moves: Mapping[str, Cursor]) -> None:
    """`save_checkpoint` of several followers in one statement (in name order: the rows are
    locked in one order whoever writes them)."""
    names = sorted(moves)
    await conn.execute(
        _SAVE_MANY,
        names,
        [moves[name].transaction_id for name in names],
        [moves[name].position for name in names],
    )
