"""Optimistic concurrency under real contention: 20 appenders racing on one stream."""

import asyncio
from collections import defaultdict
from uuid import uuid4

import asyncpg
import pytest

from infra.postgres.hashchain import verify_stream
from infra.postgres.streams import PostgresStreams
from services.errors import VersionConflictError
from services.ports.event_store import Append
from tests.conftest import ACTOR
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = pytest.mark.integration

APPENDERS = 20
TARGET_VERSION = 300


async def test_twenty_appenders_on_one_stream_one_winner_per_version_and_no_gaps(
    clean_pool: asyncpg.Pool,
) -> None:
    store = PostgresStreams(clean_pool, CODEC)
    sid = uuid4()
    await store.append(
        Append(sid, [CounterOpened(name="race")], expected_version=0, metadata=ACTOR)
    )
    winners: dict[int, list[int]] = defaultdict(list)  # version -> appenders that won it
    conflicts: list[VersionConflictError] = []
    start = asyncio.Event()

    async def appender(number: int) -> None:
        await start.wait()
        while True:
            seen = (await store.load(sid)).version
            if seen >= TARGET_VERSION:
                return
            try:
                result = await store.append(
                    Append(
                        sid, [CounterIncremented(by=number)], expected_version=seen, metadata=ACTOR
                    )
                )
            except VersionConflictError as conflict:
                conflicts.append(conflict)
                continue
            winners[result.version].append(number)

    tasks = [asyncio.create_task(appender(n)) for n in range(APPENDERS)]
    start.set()
    await asyncio.gather(*tasks)

    assert sorted(winners) == list(range(2, TARGET_VERSION + 1))
    assert all(len(won) == 1 for won in winners.values())
    assert conflicts, "20 appenders on one stream never collided: the test proved nothing"
    assert all(c.expected is not None and c.actual != c.expected for c in conflicts)
    versions = [
        r[0]
        for r in await clean_pool.fetch(
            "SELECT version FROM events WHERE stream_id = $1 ORDER BY version", sid
        )
    ]
    assert versions == list(range(1, TARGET_VERSION + 1))
    stream = await store.load(sid)
    assert [e.by for e in stream.events[1:] if isinstance(e, CounterIncremented)] == [
        winners[v][0] for v in range(2, TARGET_VERSION + 1)
    ]


async def test_concurrent_retries_of_one_append_write_it_once(clean_pool: asyncpg.Pool) -> None:
    store = PostgresStreams(clean_pool, CODEC)
    sid = uuid4()
    ids = [uuid4(), uuid4()]
    events = [CounterOpened(name="once"), CounterIncremented(by=1)]
    results = await asyncio.gather(
        *(
            store.append(Append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids))
            for _ in range(10)
        )
    )
    assert {(r.version, r.positions) for r in results} == {(2, results[0].positions)}
    assert sum(not r.replayed for r in results) == 1
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == 2


@pytest.mark.parametrize("events", [1, 3])
async def test_a_writer_that_missed_another_process_append_gets_a_conflict(
    clean_pool: asyncpg.Pool, events: int
) -> None:
    """Two processes: the first still trusts the head it read; the append built on it fails."""
    first, second = PostgresStreams(clean_pool, CODEC), PostgresStreams(clean_pool, CODEC)
    sid = uuid4()
    await first.append(Append(sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR))
    assert (await first.load(sid)).version == 1
    await second.append(Append(sid, [CounterIncremented(by=1)], expected_version=1, metadata=ACTOR))
    with pytest.raises(VersionConflictError) as refused:
        await first.append(
            Append(sid, [CounterIncremented(by=2)] * events, expected_version=1, metadata=ACTOR)
        )
    assert (refused.value.expected, refused.value.actual) == (1, 2)
    assert (await first.load(sid)).version == 2
    result = await first.append(
        Append(sid, [CounterIncremented(by=3)] * events, expected_version=2, metadata=ACTOR)
    )
    assert result.version == 2 + events
    async with clean_pool.acquire() as conn:
        assert (await verify_stream(conn, sid)).intact


async def test_an_append_rolled_back_by_its_callers_transaction_leaves_no_head(
    clean_pool: asyncpg.Pool,
) -> None:
    """Streams bound to a connection in the caller's transaction do not see it end: a head
    kept from it, rolled back, would let a later append link to a hash no event has."""
    sid = uuid4()
    async with clean_pool.acquire() as conn:
        bound = PostgresStreams(conn, CODEC)
        transaction = conn.transaction()
        await transaction.start()
        await bound.append(
            Append(sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR)
        )
        await transaction.rollback()
        other = PostgresStreams(clean_pool, CODEC)
        await other.append(
            Append(sid, [CounterOpened(name="b")], expected_version=0, metadata=ACTOR)
        )
        await bound.append(
            Append(sid, [CounterIncremented(by=1)], expected_version=1, metadata=ACTOR)
        )
        assert (await verify_stream(conn, sid)).intact
