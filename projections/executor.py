"""What a projection writes and queries through: a connection, inside the runner's transaction."""

from typing import Any, Protocol

import asyncpg


class Executor(Protocol):
    async def execute(self, query: str, *args: Any) -> str: ...

    async def fetch(self, query: str, *args: Any) -> list[asyncpg.Record]: ...

    async def fetchrow(self, query: str, *args: Any) -> asyncpg.Record | None: ...
