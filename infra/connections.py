"""The connection type the SQL helpers accept: a plain connection or one borrowed from a pool."""

from typing import TYPE_CHECKING, TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy

if TYPE_CHECKING:  # asyncpg's classes are generic only in its stubs
    Connection: TypeAlias = asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]
else:
    Connection: TypeAlias = asyncpg.Connection | PoolConnectionProxy
