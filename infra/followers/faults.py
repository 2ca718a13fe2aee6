"""A follower that meets an event it cannot apply stops there, loudly, and never skips it: the
culprit goes to `follower_faults` (read by readiness, metrics and `projections status`) and is
retried every STUCK_RETRY_S. Why, and the way out: docs/decisions/0023-followers.md."""

from datetime import datetime
from typing import Final
from uuid import UUID

import asyncpg
import msgspec

from infra.followers import global_log
from infra.followers.global_log import Cursor, LogEntry
from infra.postgres.connections import Connection

STUCK_RETRY_S: Final = 30.0
_REASON_CHARS: Final = 500

# Failures that say nothing about the event: the connection, the server or a concurrent
# transaction. The same batch is retried as it is.
TRANSIENT: Final[tuple[type[BaseException], ...]] = (
    OSError,
    TimeoutError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.SerializationError,
    asyncpg.exceptions.DeadlockDetectedError,
    asyncpg.exceptions.LockNotAvailableError,
    asyncpg.exceptions.QueryCanceledError,
)


class Fault(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    cursor: Cursor
    event_id: UUID
    event_type: str
    reason: str
    since: datetime

    def where(self) -> str:
        return (
            f"at position {self.cursor.position} (event {self.event_id}, {self.event_type}):"
            f" {self.reason}"
        )

    def describe(self) -> str:
        return f"{self.name} is stuck {self.where()}"


class FollowerStuckError(Exception):
    def __init__(self, fault: Fault) -> None:
        super().__init__(fault.describe())
        self.fault = fault


class NothingToSkipError(Exception):
    pass


def reason_of(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:_REASON_CHARS]


async def record(conn: Connection, name: str, entry: LogEntry, error: BaseException) -> Fault:
    row = await conn.fetchrow(
        """
        INSERT INTO follower_faults AS f
               (name, transaction_id, global_position, event_id, event_type, reason)
        VALUES ($1, $2::xid8, $3, $4, $5, $6)
        ON CONFLICT (name) DO UPDATE
           SET transaction_id = excluded.transaction_id,
               global_position = excluded.global_position,
               event_id = excluded.event_id,
               event_type = excluded.event_type,
               reason = excluded.reason,
               since = CASE WHEN f.event_id = excluded.event_id THEN f.since ELSE now() END
        RETURNING name, transaction_id, global_position, event_id, event_type, reason, since
        """,
        name,
        entry.cursor.transaction_id,
        entry.cursor.position,
        entry.event_id,
        entry.type,
        reason_of(error),
    )
    assert row is not None
    return _fault(row)


async def clear(conn: Connection, name: str) -> None:
    await conn.execute("DELETE FROM follower_faults WHERE name = $1", name)


_SELECT: Final = (
    "SELECT name, transaction_id, global_position, event_id, event_type, reason, since"
    " FROM follower_faults"
)


def _fault(row: asyncpg.Record) -> Fault:
    return Fault(
        name=row["name"],
        cursor=Cursor(row["transaction_id"], row["global_position"]),
        event_id=row["event_id"],
        event_type=row["event_type"],
        reason=row["reason"],
        since=row["since"],
    )


async def stuck(conn: Connection) -> dict[str, Fault]:
    """Every follower that is stuck now, by name."""
    return {row["name"]: _fault(row) for row in await conn.fetch(f"{_SELECT} ORDER BY name")}


async def fault_of(conn: Connection, name: str, *, lock: bool = False) -> Fault | None:
    """Where and why `name` is stuck, if it is."""
    row = await conn.fetchrow(f"{_SELECT} WHERE name = $1{' FOR UPDATE' if lock else ''}", name)
    return None if row is None else _fault(row)


async def skip(conn: Connection, name: str) -> Fault:
    """Move `name`'s checkpoint past exactly its recorded event, and clear the fault."""
    async with conn.transaction():
        fault = await fault_of(conn, name, lock=True)
        if fault is None:
            raise NothingToSkipError(f"{name} is not stuck")
        await global_log.save_checkpoint(conn, name, fault.cursor)
        await clear(conn, name)
    return fault
