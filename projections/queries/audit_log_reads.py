"""Run:ai's audit log: a page of entries in a time range with how many the range holds, or
(for a download) the entries alone."""

from collections.abc import Sequence
from datetime import datetime

from projections import audit_log_pages
from projections.audit_log_pages import AuditEntry, SortField
from projections.list_grammar import Condition
from projections.queries import Reads


async def page(
    reads: Reads,
    start: datetime,
    end: datetime,
    conditions: Sequence[Condition],
    *,
    sort_by: SortField,
    descending: bool,
    offset: int,
    limit: int,
    counted: bool = True,
) -> tuple[list[AuditEntry], bool, int]:
    """The page, whether more follow, and (`counted`) how many entries the query selects."""
    async with reads.connection("read the audit log") as conn:
        entries, more = await audit_log_pages.page(
            conn, start, end, conditions,
            sort_by=sort_by, descending=descending, offset=offset, limit=limit,
        )  # fmt: skip
        total = await audit_log_pages.count(conn, start, end, conditions) if counted else 0
    return entries, more, total
