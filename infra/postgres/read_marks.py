"""How far the read models must be for a caller to read its own writes: every follower past its
last event (each append records its `caller`, indexed), every read model past what the fan-out
made of it (`downstream_marks`). Why so: docs/decisions/0019-request-standing.md."""

import functools
import re
from collections.abc import Sequence
from typing import Final

import asyncpg

from infra.postgres.connections import Connection
from infra.security.standing import Standing as Standing  # re-exported for writer_standing

# The caller's marks: its own last event (`mine`) and the last of what the fan-out appended for
# its events (`caused`), in the order the followers apply the log.
_MARKS: Final = """
WITH mine AS (
    SELECT transaction_id, global_position FROM events
     WHERE caller = $1
     ORDER BY caller DESC, transaction_id DESC, global_position DESC
     LIMIT 1
), caused AS (
    SELECT transaction_id, global_position FROM downstream_marks WHERE principal = $1
)
"""

_READY: Final = f"""
{_MARKS}SELECT (NOT EXISTS (SELECT FROM mine) OR (
            SELECT count(*) FROM consumer_checkpoints c, mine m
             WHERE c.name = ANY({{followers}})
               AND (c.transaction_id, c.global_position) >= (m.transaction_id, m.global_position)
        ) = {{follower_count}})
   AND (NOT EXISTS (SELECT FROM caused) OR (
            SELECT count(*) FROM consumer_checkpoints c, caused d
             WHERE c.name = ANY({{read_models}})
               AND (c.transaction_id, c.global_position) >= (d.transaction_id, d.global_position)
        ) = {{read_model_count}})
"""

# Asked only when a caller is not ready, so the standing costs no more: whether a follower it
# waits for is stuck (follower_faults, migration 0013) at or before the caller's event or the
# fan-out's mark. Waiting is then in vain until someone moves it on: the read answers stale.
_BLOCKED: Final = f"""
{_MARKS}SELECT EXISTS (
           SELECT FROM follower_faults f, mine m
            WHERE f.name = ANY({{followers}})
              AND (f.transaction_id, f.global_position) <= (m.transaction_id, m.global_position))
    OR EXISTS (
           SELECT FROM follower_faults f, caused d
            WHERE f.name = ANY({{read_models}})
              AND (f.transaction_id, f.global_position) <= (d.transaction_id, d.global_position))
"""

# A request's standing in one round trip: the access epochs (migration 0017) and, for a read,
# whether the caller's writes are read. A write asks the epochs alone, in a statement of its own,
# so a read's plan stays generic (docs/decisions/0019-request-standing.md).
_EPOCHS: Final = """
SELECT (SELECT epoch FROM access_epoch) AS access_epoch,
       (SELECT epoch FROM org_units_epoch) AS org_epoch"""
_STANDING: Final = f"""{_EPOCHS},
       (SELECT epoch FROM policy_epoch) AS policy_epoch,
       ({_READY}) AS ready
"""
_WRITER_STANDING: Final = f"{_EPOCHS}, true AS ready"


_CHECKPOINT_NAME: Final = re.compile(r"[a-z0-9_:.-]+")


# The standing and, in the same statement (one round trip, one snapshot), a row a request's
# handler will need: `row` reads with $2, after the standing's own parameter.
_STANDING_WITH: Final = """
SELECT s.access_epoch, s.org_epoch, s.policy_epoch, s.ready, r.*
  FROM ({standing}) s LEFT JOIN LATERAL ({row}) r ON true
"""


_MARK_DOWNSTREAM: Final = """
INSERT INTO downstream_marks (principal, transaction_id, global_position)
VALUES ($1, pg_current_xact_id(), $2)
ON CONFLICT (principal) DO UPDATE
   SET transaction_id = excluded.transaction_id, global_position = excluded.global_position
 WHERE (downstream_marks.transaction_id, downstream_marks.global_position)
     < (excluded.transaction_id, excluded.global_position)
"""


async def standing(
    conn: Connection,
    subject: str,
    followers: Sequence[str],
    read_models: Sequence[str],
    *,
    reads: bool,
) -> Standing:
    """The access epochs and, when the request `reads`, whether `followers` (checkpoint names)
    have applied the subject's last event and `read_models` what the fan-out appended for the
    subject's events."""
    if not reads:
        return await writer_standing_of(conn)
    row = await conn.fetchrow(_named(_STANDING, tuple(followers), tuple(read_models)), subject)
    assert row is not None
    return _standing_of(row)


async def writer_standing_of(conn: Connection) -> Standing:
    """The access epochs alone: a writer's standing (infra/postgres/writer_standing.py)."""
    row = await conn.fetchrow(_WRITER_STANDING)
    assert row is not None
    return _standing_of(row)


async def standing_with(
    conn: Connection,
    subject: str,
    followers: Sequence[str],
    read_models: Sequence[str],
    row: str,
    args: tuple[object, ...],
) -> tuple[Standing, asyncpg.Record]:
    """`standing` of a request that reads, and what the query `row` (taking `args` from $2)
    finds in the same snapshot: when the standing is ready, the row holds the caller's own
    writes. The record's row columns are all NULL when `row` finds nothing."""
    statement = _named(_with(row), tuple(followers), tuple(read_models))
    record = await conn.fetchrow(statement, subject, *args)
    assert record is not None
    return _standing_of(record), record


async def standing_with_rows(
    conn: Connection,
    subject: str,
    followers: Sequence[str],
    read_models: Sequence[str],
    rows: str,
    args: tuple[object, ...],
) -> tuple[Standing, list[asyncpg.Record]]:
    """`standing_with` of a query of many rows (a page): every row, in the query's order (a
    one-row standing joined without a condition is a nested loop, which keeps it); one row of
    NULLs when it finds none."""
    statement = _named(_with(rows), tuple(followers), tuple(read_models))
    records = await conn.fetch(statement, subject, *args)
    return _standing_of(records[0]), records


def _standing_of(record: asyncpg.Record) -> Standing:
    return Standing(
        access_epoch=record["access_epoch"],
        org_epoch=record["org_epoch"],
        policy_epoch=record.get("policy_epoch"),  # (a writer's standing does not ask it)
        ready=bool(record["ready"]),
    )


async def blocked(
    conn: Connection, subject: str, followers: Sequence[str], read_models: Sequence[str]
) -> bool:
    """For a subject whose writes are not read yet: whether one of `followers` (or of
    `read_models`, for what the fan-out made of them) is stuck on an event before them."""
    statement = _named(_BLOCKED, tuple(followers), tuple(read_models))
    return bool(await conn.fetchval(statement, subject))


# Bounded: a page's statement text varies with what its caller asks (sort, size, filters).
@functools.lru_cache(maxsize=256)
def _with(row: str) -> str:
    return _STANDING_WITH.format(standing=_STANDING, row=row)


@functools.lru_cache(maxsize=256)
def _named(statement: str, followers: tuple[str, ...], read_models: tuple[str, ...]) -> str:
    """`statement` with the checkpoint names written in: they are the process's constants, so
    the prepared statement holds them rather than every request encoding and sending them."""
    # replace, not format: a row's query written in may hold braces of its own.
    return (
        statement.replace("{followers}", _literal(followers))
        .replace("{follower_count}", str(len(followers)))
        .replace("{read_models}", _literal(read_models))
        .replace("{read_model_count}", str(len(read_models)))
    )


def _literal(names: tuple[str, ...]) -> str:
    for name in names:
        # Checkpoint names are the service's own (projection:<name>); nothing else is written in.
        if not _CHECKPOINT_NAME.fullmatch(name):
            raise ValueError(f"not a checkpoint name: {name!r}")
    return "ARRAY[" + ",".join(f"'{name}'" for name in names) + "]::text[]"


async def mark_downstream(conn: Connection, subject: str, position: int) -> None:
    """Within the fan-out's transaction: the events it appended for `subject`'s event end at
    `position`."""
    await conn.execute(_MARK_DOWNSTREAM, subject, position)
