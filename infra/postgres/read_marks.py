"""How far the read models must be for a caller to read its own writes.

A caller's writes are its events (each append writes its `caller`, the subject of its user or
application, infra/postgres/encoding.py `caller_of`), so the mark is the newest of them in the
order the followers apply the log (transaction id, then position), found by an index (migration
0014): no statement is added to the write path, and every API process sees the same mark. The
service's own writes have no caller (NULL) and are not indexed. What a caller's writes caused
downstream (the linked-asset fan-out's template events, which belong to no caller) is marked by
the fan-out itself, in its own transaction, under the caller's subject (`downstream_marks`).

A read is ready when every follower (the read models and the fan-out) has passed the caller's
own last event, and every read model has passed the downstream mark. The fan-out writes that
mark in the transaction that moves its checkpoint, so once it has passed the caller's event the
mark of what it made of it is there to be read.
"""

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

# Asked only when a caller is not ready (the standing stays as cheap as it was): whether a
# follower that has not passed the caller's event (or what the fan-out made of it) is stuck on
# an event at or before it (migration 0013's follower_faults). Waiting for it is then in vain
# until someone moves it on, so the read answers stale at once.
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

# A request's standing, in one round trip: the epochs of what an API process keeps in memory
# about access (migration 0017) and, for a read, whether the caller's writes are read. A write
# asks the epochs alone, in a statement of its own: were it one statement with a flag, each
# connection's plan cache would compare its generic plan with custom plans in which a write's
# flag folds the check away; those look far cheaper, so PostgreSQL would settle on planning
# every execution afresh, a read's whole check included (about 0.3 ms of the database's CPU
# per read, measured).
_EPOCHS: Final = """
SELECT (SELECT epoch FROM access_epoch) AS access_epoch,
       (SELECT epoch FROM org_units_epoch) AS org_epoch"""
_STANDING: Final = f"""{_EPOCHS},
       ({_READY}) AS ready
"""
_WRITER_STANDING: Final = f"{_EPOCHS}, true AS ready"


_CHECKPOINT_NAME: Final = re.compile(r"[a-z0-9_:.-]+")


# The standing and, in the same statement (one round trip, one snapshot), a row a request's
# handler will need: `row` reads with $2, after the standing's own parameter.
_STANDING_WITH: Final = """
SELECT s.access_epoch, s.org_epoch, s.ready, r.*
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
    key: object,
) -> tuple[Standing, asyncpg.Record]:
    """`standing` of a request that reads, and what the query `row` (taking `key` as $2) finds
    in the same snapshot: when the standing is ready, the row holds the caller's own writes.
    The record's row columns are all NULL when `row` finds nothing."""
    statement = _named(_with(row), tuple(followers), tuple(read_models))
    record = await conn.fetchrow(statement, subject, key)
    assert record is not None
    return _standing_of(record), record


def _standing_of(record: asyncpg.Record) -> Standing:
    return Standing(
        access_epoch=record["access_epoch"],
        org_epoch=record["org_epoch"],
        ready=bool(record["ready"]),
    )


async def blocked(
    conn: Connection, subject: str, followers: Sequence[str], read_models: Sequence[str]
) -> bool:
    """For a subject whose writes are not read yet: whether one of `followers` (or of
    `read_models`, for what the fan-out made of them) is stuck on an event before them."""
    statement = _named(_BLOCKED, tuple(followers), tuple(read_models))
    return bool(await conn.fetchval(statement, subject))


@functools.cache
def _with(row: str) -> str:
    return _STANDING_WITH.format(standing=_STANDING, row=row)


@functools.cache
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
