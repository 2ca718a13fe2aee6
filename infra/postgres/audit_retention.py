"""Retention of the audit records (`trainplate audit prune`): those logged before a date are
deleted in one transaction, once their chain is verified, and an anchor kept of the cut, from
which the rest verifies (migration 0047; docs/decisions/0037). The event log is never cut."""

from datetime import datetime
from typing import Final

from infra.errors import InfraError
from infra.postgres.audit_records import (
    CHAIN_LOCK_KEY,
    RecordsAnchor,
    RecordsBreak,
    newest_anchor,
    verify_records,
)
from infra.postgres.connections import Connection

_LAST_BEFORE: Final = """
SELECT seq FROM audit_records WHERE logged_at < $1 ORDER BY seq DESC LIMIT 1
"""
_ANCHOR: Final = """
INSERT INTO audit_record_anchors (seq, hash, logged_at, before, pruned_at, deleted, kept)
SELECT r.seq, r.hash, r.logged_at, $2, clock_timestamp(),
       (SELECT count(*) FROM audit_records WHERE seq <= $1),
       (SELECT count(*) FROM audit_records WHERE seq > $1)
  FROM audit_records r WHERE r.seq = $1
"""


class BrokenChainError(InfraError):
    """The records to delete do not verify: cutting them would erase the evidence."""

    slug = "audit-chain-broken"

    def __init__(self, at: RecordsBreak) -> None:
        super().__init__(f"the audit records' chain is broken at record {at.seq}: {at.reason}")
        self.seq = at.seq


async def prune_records(conn: Connection, before: datetime) -> RecordsAnchor | None:
    """Delete the records up to the last one logged before `before` (the chain's head, in
    `seq` order); the anchor kept of them, None when none is that old."""
    last = await conn.fetchval(_LAST_BEFORE, before)
    if last is None:
        return None
    checked = await verify_records(conn, upto=last)  # immutable up to there: no lock needed
    if checked.broken_at is not None:
        raise BrokenChainError(checked.broken_at)
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", CHAIN_LOCK_KEY)
        await conn.execute(_ANCHOR, last, before)
        await conn.execute("DELETE FROM audit_records WHERE seq <= $1", last)
        return await newest_anchor(conn)
