"""The hash chains walked for the audit API's verification (infra/postgres/hashchain.py, and
audit_records.py), as the HTTP layer reports them: how many streams, whether all hold, the first
broken link, and the audit records' chain."""

from uuid import UUID

import asyncpg
import msgspec

from infra.postgres.audit_records import RecordsReport, verify_records
from infra.postgres.hashchain import first_missing, verify_all, verify_stream


class ChainBreak(msgspec.Struct, frozen=True):
    stream_id: UUID
    version: int
    event_id: UUID
    reason: str


class ChainVerification(msgspec.Struct, frozen=True):
    streams: int
    intact: bool  # every stream's chain, and the audit records' (when walked)
    first_break: ChainBreak | None
    records: RecordsReport | None = None  # the audit records' chain; None: not walked


class PostgresChainChecks:
    __slots__ = ("_pool",)

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def verify(self, stream_id: UUID | None) -> ChainVerification:
        """One stream's chain, or every stream's, the log's own sequence and the audit
        records' chain."""
        async with self._pool.acquire() as conn:
            reports = (
                [await verify_stream(conn, stream_id)] if stream_id else await verify_all(conn)
            )
            missing = None if stream_id else await first_missing(conn)
            records = None if stream_id else await verify_records(conn)
        broken = next((r for r in reports if not r.intact), missing)
        first = None
        if broken is not None and broken.broken_at is not None:
            at = broken.broken_at
            first = ChainBreak(broken.stream_id, at.version, at.event_id, at.reason)
        intact = broken is None and (records is None or records.intact)
        return ChainVerification(len(reports), intact, first, records)
