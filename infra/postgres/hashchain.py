"""The per-stream hash chain that makes tampering with stored events detectable (see
docs/architecture.md, Hash chain): the writer digests each event (`content_digests`), the database
links them in every append statement; a verifier recomputes both from the row alone, here."""

import hashlib
import struct
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Final
from uuid import UUID

import msgspec

from infra.postgres.connections import Connection
from infra.serialization import EncodedEvent

GENESIS: Final = bytes(32)
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)
# event id, stream id, schema version, then the lengths of stream type, type, data and metadata
_FIXED: Final = struct.Struct(">16s16sHIIII")


def content_digests(
    stream_type: str,
    metadata: str,
    ids: bytes,
    streams: Sequence[bytes],
    events: Sequence[EncodedEvent],
) -> list[bytes]:
    """sha256 over each event's id (`ids[16i:16i+16]`), stream id (the i-th of `streams`), schema
    version, stream type, type, data and metadata, variable-length ones length-prefixed (no two
    events encode alike); shared parts once (docs/decisions/0018-event-store-statements.md)."""
    stream_type_bytes, metadata_bytes = stream_type.encode(), metadata.encode()
    stream_type_length, metadata_length = len(stream_type_bytes), len(metadata_bytes)
    sha256, pack, join = hashlib.sha256, _FIXED.pack, b"".join
    type_bytes: dict[str, bytes] = {}
    digests = []
    for i, event in enumerate(events):
        tag = type_bytes.get(event.type)
        if tag is None:
            tag = type_bytes[event.type] = event.type.encode()
        data = event.data.encode()
        fixed = pack(
            ids[16 * i : 16 * i + 16],
            streams[i],
            event.schema_version,
            stream_type_length,
            len(tag),
            len(data),
            metadata_length,
        )
        digests.append(sha256(join((fixed, stream_type_bytes, tag, data, metadata_bytes))).digest())
    return digests


def content_digest(
    *,
    event_id: UUID,
    stream_type: str,
    stream_id: UUID,
    type: str,
    schema_version: int,
    data: str,
    metadata: str,
) -> bytes:
    """The digest of one event (see content_digests)."""
    event = EncodedEvent(type, schema_version, data)
    return content_digests(stream_type, metadata, event_id.bytes, [stream_id.bytes], [event])[0]


def link(prev_hash: bytes, digest: bytes, version: int, recorded_at: datetime) -> bytes:
    """One event's hash after `prev_hash`, as the SQL function trainplate_link computes it. The
    verifier's own arithmetic, never the writer's: a link takes `recorded_at`, the database's
    time, known only inside the append statement, so the appends link their events there."""
    at = micros(recorded_at).to_bytes(8, "big", signed=True)
    fixed = version.to_bytes(4, "big", signed=True)
    return hashlib.sha256(b"".join((prev_hash, digest, fixed, at))).digest()


def micros(at: datetime) -> int:
    """Microseconds since the epoch, as the SQL function trainplate_micros counts them."""
    return (at - _EPOCH) // _MICROSECOND


_ROWS: Final = """
SELECT event_id, stream_type, stream_id, version, type, schema_version, data::text AS data,
       metadata::text AS metadata, recorded_at, prev_hash, hash
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
        digest = content_digest(
            event_id=row["event_id"],
            stream_type=row["stream_type"],
            stream_id=row["stream_id"],
            type=row["type"],
            schema_version=row["schema_version"],
            data=row["data"],
            metadata=row["metadata"],
        )
        if row["version"] != expected_version:
            reason = f"version {row['version']} where {expected_version} was expected"
        elif row["prev_hash"] != previous:
            reason = "prev_hash does not match the previous event's hash"
        elif link(previous, digest, row["version"], row["recorded_at"]) != row["hash"]:
            reason = "the stored hash does not match the event's contents"
        if reason is not None:
            return ChainReport(stream_id, len(rows), Break(row["event_id"], row["version"], reason))
        previous = row["hash"]
    return ChainReport(stream_id, len(rows))


async def verify_all(conn: Connection) -> list[ChainReport]:
    """Every stream's report; for audits of a whole store."""
    ids = [r[0] for r in await conn.fetch("SELECT DISTINCT stream_id FROM events")]
    return [await verify_stream(conn, stream_id) for stream_id in ids]


_MISSING = """
SELECT a.stream_id, a.version, a.event_id,
       (SELECT count(*) FROM events e WHERE e.stream_id = a.stream_id) AS events
  FROM audit_index a
 WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = a.event_id)
 ORDER BY a.seq LIMIT 1
"""


async def first_missing(conn: Connection) -> ChainReport | None:
    """An event the audit index recorded that the store no longer holds. A chain cannot see its
    own last events cut off; the index, a second copy of every event's identity, can."""
    row = await conn.fetchrow(_MISSING)
    if row is None:
        return None
    reason = "deleted: the audit index recorded this event, the store no longer holds it"
    return ChainReport(
        row["stream_id"], row["events"], Break(row["event_id"], row["version"], reason)
    )
