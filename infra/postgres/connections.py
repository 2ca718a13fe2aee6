"""Connections: the type SQL helpers accept, and what a lost one looks like to callers."""

from types import TracebackType
from typing import TYPE_CHECKING, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from domain.applications import LastTenantAdminError
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


# The invariants the database itself keeps, by the SQLSTATE its triggers raise (migrations).
_REFUSALS: dict[str, type[Exception]] = {"TP409": LastTenantAdminError}


def translated(operation: str) -> "_Translated":
    """`async with translated("append"):` turns a lost or refused connection into
    StoreUnavailableError naming the operation, and a refusal of an invariant the database
    keeps into the domain's error for it."""
    return _Translated(operation)


class _Translated:
    # A class rather than @asynccontextmanager: it wraps every statement, and a generator-based
    # context manager costs several times as much to enter and leave.
    __slots__ = ("_operation",)

    def __init__(self, operation: str) -> None:
        self._operation = operation

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:  # (never swallows: any other error propagates as it is)
        if isinstance(exc, _UNAVAILABLE) and not isinstance(exc, asyncpg.DataError):
            raise StoreUnavailableError(self._operation) from exc
        if isinstance(exc, asyncpg.PostgresError) and exc.sqlstate in _REFUSALS:
            raise _REFUSALS[exc.sqlstate]() from exc
