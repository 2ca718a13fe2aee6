"""Where the read side's queries (projections/queries/) read: a pooled connection each."""

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import asyncpg

from infra.postgres.connections import translated
from projections.executor import Executor


class PostgresReads:
    __slots__ = ("_pool",)

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    def connection(self, operation: str | None = None) -> AbstractAsyncContextManager[Executor]:
        if operation is None:
            return self._pool.acquire()
        return self._translated(operation)

    @asynccontextmanager
    async def _translated(self, operation: str) -> AsyncIterator[Executor]:
        async with translated(operation), self._pool.acquire() as conn:
            yield conn
