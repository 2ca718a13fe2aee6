"""Gap-safe global reads: a transaction that commits late is still delivered, in cursor order."""

import json
from uuid import UUID, uuid4

import asyncpg
import pytest

from infra.followers import global_log
from infra.followers.global_log import START
from infra.postgres.connections import Connection
from infra.postgres.hashchain import content_digest
from infra.postgres.sql import statement

pytestmark = pytest.mark.integration


async def _append(conn: Connection, stream_id: UUID, name: str) -> int:
    """One event through the store's append statement, in whatever transaction `conn` is in."""
    event_id, data = uuid4(), json.dumps({"type": "counter.opened.v1", "name": name})
    digest = content_digest(
        event_id=event_id,
        stream_type="counter",
        stream_id=stream_id,
        type="counter.opened.v1",
        schema_version=1,
        data=data,
        metadata="{}",
    )
    row = await conn.fetchrow(
        statement("append_one"),
        stream_id,
        "counter",
        0,
        event_id,
        "counter.opened.v1",
        1,
        data,
        "{}",
        digest,
        None,  # no caller: written by the service itself
    )
    assert row is not None
    position: int = row["positions"][0]
    return position


async def test_a_transaction_that_commits_late_is_not_skipped(clean_pool: asyncpg.Pool) -> None:
    async with (
        clean_pool.acquire() as slow,
        clean_pool.acquire() as fast,
        clean_pool.acquire() as reader,
    ):
        transaction = slow.transaction()
        await transaction.start()
        early = await _append(slow, uuid4(), "early position, late commit")
        late = await _append(fast, uuid4(), "later position, early commit")
        assert early < late

        # A reader that followed positions alone would deliver `late` now and never see `early`.
        # Below the horizon it waits: nothing is readable while the slow transaction is open.
        assert await global_log.read_after(reader, START, 100) == []

        await transaction.commit()
        entries = await global_log.read_after(reader, START, 100)
        assert [e.cursor.position for e in entries] == [early, late]
        assert entries[0].cursor < entries[1].cursor
        assert await global_log.read_after(reader, entries[-1].cursor, 100) == []


async def test_reading_in_pages_resumes_exactly_after_the_cursor(clean_pool: asyncpg.Pool) -> None:
    async with clean_pool.acquire() as conn:
        positions = [await _append(conn, uuid4(), f"e{i}") for i in range(25)]
        seen: list[int] = []
        cursor = START
        while page := await global_log.read_after(conn, cursor, 10):
            seen += [e.cursor.position for e in page]
            cursor = page[-1].cursor
        assert seen == positions


async def test_checkpoints_only_move_forward(clean_pool: asyncpg.Pool) -> None:
    async with clean_pool.acquire() as conn:
        ahead, behind = global_log.Cursor(900, 7), global_log.Cursor(800, 9)
        await global_log.save_checkpoint(conn, "c", ahead)
        await global_log.save_checkpoint(conn, "c", behind)
        assert await global_log.load_checkpoint(conn, "c") == ahead
        assert await global_log.load_checkpoint(conn, "unknown") == START
