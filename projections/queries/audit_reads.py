"""The audit index: a page of matching events, and the cursor of the latest."""

from projections.audit_index import AuditFilter, AuditRow, find
from projections.queries import Reads


async def page(
    reads: Reads, wanted: AuditFilter, *, after: int | None, newest_first: bool, limit: int
) -> list[AuditRow]:
    async with reads.connection() as conn:
        return await find(conn, wanted, after=after, newest_first=newest_first, limit=limit)


async def latest(reads: Reads) -> int:
    """The cursor of the latest event indexed (0: none yet)."""
    async with reads.connection() as conn:
        row = await conn.fetchrow("SELECT coalesce(max(seq), 0) AS seq FROM audit_index")
    assert row is not None  # an aggregate always answers one row
    return int(row["seq"])
