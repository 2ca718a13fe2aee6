"""The audit log's entries that are no event (services/ports/audit_records.py), appended to
`audit_records` (migration 0044) on a hash chain of their own, in `seq` order, from its newest
anchor once its head is pruned (audit_retention.py; docs/decisions/0031 and 0037)."""

import hashlib
from datetime import datetime
from typing import Final

import asyncpg
import msgspec

from infra.postgres.connections import Connection
from infra.postgres.hashchain import GENESIS, micros
from services.ports.audit_records import AuditRecord

# One chain: its appends take turns under this advisory lock ("trainplate audit").
CHAIN_LOCK_KEY: Final = 0x7472_6169_6E61_7564
_BATCH: Final = 1000


# Each column of a record's content, with its SQL type (the parameters' of the append).
_TYPES: Final = {
    "id": "uuid", "subject": "text", "subject_type": "text", "action": "text", "result": "text",
    "source_ip": "text", "http_method": "text", "url": "text", "entity_type": "text",
    "entity_name": "text", "entity_id": "text", "http_status_code": "integer",
    "cluster_id": "uuid", "cluster_name": "text", "request_id": "text",
}  # fmt: skip
_COLUMNS: Final = tuple(_TYPES)
_encode = msgspec.json.Encoder().encode
_decode_metadata = msgspec.json.Decoder(dict[str, str]).decode

_APPEND: Final = f"""
INSERT INTO audit_records ({", ".join(_COLUMNS)}, metadata, logged_at, prev_hash, hash)
SELECT {", ".join(f"${i}::{t}" for i, t in enumerate(_TYPES.values(), start=1))},
       ${len(_COLUMNS) + 1}::json,
       clock.at, head.hash,
       trainplate_record_link(head.hash, ${len(_COLUMNS) + 2}::bytea, trainplate_micros(clock.at))
  FROM (SELECT clock_timestamp() AS at) AS clock,
       (SELECT coalesce((SELECT hash FROM audit_records ORDER BY seq DESC LIMIT 1),
                        (SELECT hash FROM audit_record_anchors ORDER BY seq DESC LIMIT 1),
                        ${len(_COLUMNS) + 3}::bytea) AS hash) AS head
"""
_ROWS: Final = f"""
SELECT seq, {", ".join(_COLUMNS)}, metadata::text AS metadata, logged_at, prev_hash, hash
  FROM audit_records WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT {_BATCH}
"""
_NEWEST_ANCHOR: Final = """
SELECT seq, hash, logged_at, before, pruned_at, deleted, kept
  FROM audit_record_anchors ORDER BY seq DESC LIMIT 1
"""
_LAST: Final = 2**63 - 1


def digest(record: AuditRecord) -> bytes:
    return hashlib.sha256(_encode(record)).digest()


def link(prev_hash: bytes, content: bytes, logged_at: datetime) -> bytes:
    """A record's hash after `prev_hash`, as trainplate_record_link computes it."""
    at = micros(logged_at).to_bytes(8, "big", signed=True)
    return hashlib.sha256(prev_hash + content + at).digest()


class RecordsBreak(msgspec.Struct, frozen=True):
    seq: int
    reason: str


class RecordsAnchor(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Where the chain starts once its head was pruned: the last deleted record's `seq` and
    hash (hex), its time; when the records logged `before` a date were cut, how many went and
    stayed."""

    seq: int
    hash: str
    logged_at: datetime
    before: datetime
    pruned_at: datetime
    deleted: int
    kept: int


class RecordsReport(msgspec.Struct, frozen=True):
    records: int
    broken_at: RecordsBreak | None = None
    anchor: RecordsAnchor | None = None  # the chain starts there, not at its first record

    @property
    def intact(self) -> bool:
        return self.broken_at is None


class PostgresAuditRecords:
    __slots__ = ("_pool",)

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def append(self, record: AuditRecord) -> None:
        """Append one record at the chain's head (appends take turns: one head at a time)."""
        values = [getattr(record, column) for column in _COLUMNS]
        metadata = _encode(record.metadata).decode()
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", CHAIN_LOCK_KEY)
            await conn.execute(_APPEND, *values, metadata, digest(record), GENESIS)


async def newest_anchor(conn: Connection) -> RecordsAnchor | None:
    row = await conn.fetchrow(_NEWEST_ANCHOR)
    if row is None:
        return None
    return RecordsAnchor(**{**dict(row), "hash": row["hash"].hex()})


async def verify_records(conn: Connection, upto: int = _LAST) -> RecordsReport:
    """Walk the records' chain (up to `upto`) from its first link, or from its newest anchor;
    the first record where it breaks, and why."""
    anchor = await newest_anchor(conn)
    previous, seq, count = GENESIS if anchor is None else bytes.fromhex(anchor.hash), 0, 0
    while rows := await conn.fetch(_ROWS, seq, upto):
        for row in rows:
            count, seq = count + 1, row["seq"]
            content = AuditRecord(
                **{column: row[column] for column in _COLUMNS},
                metadata=_decode_metadata(row["metadata"]),
            )
            reason = None
            if row["prev_hash"] != previous:
                before = "the anchor's" if count == 1 and anchor else "the previous record's"
                reason = f"prev_hash does not match {before} hash"
            elif link(previous, digest(content), row["logged_at"]) != row["hash"]:
                reason = "the stored hash does not match the record's contents"
            if reason is not None:
                return RecordsReport(count, RecordsBreak(seq, reason), anchor)
            previous = row["hash"]
    return RecordsReport(count, anchor=anchor)
