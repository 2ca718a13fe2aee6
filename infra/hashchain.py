"""Verifying the per-stream hash chain: hash = sha256(prev_hash || event bytes).

The first event's prev_hash is 32 zero bytes. The event bytes are rebuilt by
`trainplate_event_bytes` from the stored row alone; the hashing is done here, independently of the
database that computed the stored hashes at append time.
"""

import hashlib
from typing import Final
from uuid import UUID

import msgspec

from infra.connections import Connection

GENESIS: Final = bytes(32)

_ROWS: Final = """
SELECT event_id, version, prev_hash, hash,
       trainplate_event_bytes(event_id, stream_type, stream_id, version, type, schema_version,
                              recorded_at, data, metadata) AS bytes
  FROM events WHERE stream_id = $1 ORDER BY version
"""


class Break(msgspec.Struct, frozen=True):
    """The first event at which a stream's chain does not hold, and why."""

    event_id: UUID
    version: int
    reason: str


class ChainReport(msgspec.Struct, frozen=True):
    stream_id: UUID
    events: int
    broken_at: Break | None = None

    @property
    def intact(self) -> bool:
        return self.broken_at is None


async def verify_stream(conn: Connection, stream_id: UUID) -> ChainReport:
    rows = await conn.fetch(_ROWS, stream_id)
    previous = GENESIS
    for expected_version, row in enumerate(rows, start=1):
        reason = None
        if row["version"] != expected_version:
            reason = f"version {row['version']} where {expected_version} was expected"
        elif row["prev_hash"] != previous:
            reason = "prev_hash does not match the previous event's hash"
        elif hashlib.sha256(previous + row["bytes"]).digest() != row["hash"]:
            reason = "the stored hash does not match the event's contents"
        if reason is not None:
            return ChainReport(stream_id, len(rows), Break(row["event_id"], row["version"], reason))
        previous = row["hash"]
    return ChainReport(stream_id, len(rows))


async def verify_all(conn: Connection) -> list[ChainReport]:
    """Every stream's report; for audits of a whole store."""
    ids = [r[0] for r in await conn.fetch("SELECT DISTINCT stream_id FROM events")]
    return [await verify_stream(conn, stream_id) for stream_id in ids]
