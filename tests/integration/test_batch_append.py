"""PostgresStreams on a pool (the submitter's): each append_each is a transaction of its
own, committed when it returns, and a stream that moved on takes nothing; on a bare connection
it still refuses to run outside the caller's transaction."""

from uuid import uuid4

import asyncpg
import pytest

from infra.postgres.streams import PostgresStreams
from services.ports.event_store import Append, OneAppend
from tests.conftest import ACTOR
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = pytest.mark.integration


async def test_on_a_pool_each_append_each_commits_by_itself(clean_pool: asyncpg.Pool) -> None:
    store = PostgresStreams(clean_pool, CODEC)
    moved, quiet = uuid4(), uuid4()
    for stream in (moved, quiet):
        await store.append(
            Append(stream, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR)
        )
    await store.append(
        Append(moved, [CounterIncremented(by=1)], expected_version=1, metadata=ACTOR)
    )

    taken = await store.append_each(
        [
            OneAppend(stream_id=s, event=CounterIncremented(by=5), expected_version=1,
                      event_id=uuid4())
            for s in (moved, quiet)
        ],
        metadata=ACTOR,
    )  # fmt: skip

    assert taken == frozenset({quiet})
    # Committed: another connection reads it at once.
    async with clean_pool.acquire() as other:
        rows = await other.fetch(
            "SELECT stream_id, max(version) AS version FROM events"
            " WHERE stream_id = ANY($1::uuid[]) GROUP BY stream_id",
            [moved, quiet],
        )
    assert {row["stream_id"]: row["version"] for row in rows} == {moved: 2, quiet: 2}


async def test_on_a_connection_it_runs_only_inside_a_transaction(
    clean_pool: asyncpg.Pool,
) -> None:
    store = PostgresStreams(clean_pool, CODEC)
    stream = uuid4()
    await store.append(
        Append(stream, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR)
    )
    one = OneAppend(
        stream_id=stream, event=CounterIncremented(by=1), expected_version=1, event_id=uuid4()
    )
    async with clean_pool.acquire() as conn:
        appender = PostgresStreams(conn, CODEC, notifier=store.notifier)
        with pytest.raises(RuntimeError, match="inside the caller's transaction"):
            await appender.append_each([one], metadata=ACTOR)
    assert (await store.load(stream)).version == 1
