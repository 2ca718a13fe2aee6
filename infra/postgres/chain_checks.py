"""The hash chains walked for the audit API's verification (infra/postgres/hashchain.py), as
the HTTP layer reports them: how many streams, whether all hold, and the first broken link."""

from uuid import UUID

import asyncpg
import msgspec

from infra.postgres.hashchain import first_missing, verify_all, verify_stream


class ChainBreak(msgspec.Struct, frozen=True):
    stream_id: UUID
    version: int
    event_id: UUID
    reason: str


class ChainVerification(msgspec.Struct, frozen=True):
    streams: int
    intact: bool
    first_break: ChainBreak | None


class PostgresChainChecks:
    __slots__ = ("_pool",)

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def verify(self, stream_id: UUID | None) -> ChainVerification:
        """One stream's chain, or every stream's and the log's own sequence."""
        async with self._pool.acquire() as conn:
            reports = (
                [await verify_stream(conn, stream_id)] if stream_id else await verify_all(conn)
            )
            missing = None if stream_id else await first_missing(conn)
        broken = next((r for r in reports if not r.intact), missing)
        first = None
        if broken is not None and broken.broken_at is not None:
            at = broken.broken_at
            first = ChainBreak(broken.stream_id, at.version, at.event_id, at.reason)
        return ChainVerification(len(reports), broken is None, first)
