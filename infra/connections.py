"""Connections: the type SQL helpers accept, and what a lost one looks like to callers."""

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from infra.errors import StoreUnavailableError

if TYPE_CHECKING:  # asyncpg's classes are generic only in its stubs
    Connection: TypeAlias = asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]
else:
    Connection: TypeAlias = asyncpg.Connection | PoolConnectionProxy


# What a lost or refused connection looks like through asyncpg (a restart, a failover, a timeout).
_UNAVAILABLE = (
    OSError,
    TimeoutError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
)


@contextlib.asynccontextmanager
async def translated(operation: str) -> AsyncIterator[None]:
    try:
        yield
    except asyncpg.DataError:  # a bad argument, not a lost connection
        raise
    except _UNAVAILABLE as exc:
        raise StoreUnavailableError(operation) from exc
