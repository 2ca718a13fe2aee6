"""An append that claims the wake-up carries pg_notify('trainplate_events') in its own statement,
whichever statement it takes; one within the interval of another carries none. (The interval is
long here, so no trailing NOTIFY can stand in for a carried one.)"""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from uuid import UUID, uuid4

import asyncpg
import pytest

from infra.postgres.commit_notifier import NOTIFY_CHANNEL, CommitNotifier
from infra.postgres.streams import PostgresStreams
from services.ports.event_store import Append, AppendResult, NameClaim, OneAppend
from tests.conftest import ACTOR
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = pytest.mark.integration

Appending = Callable[[PostgresStreams, asyncpg.Pool, UUID], Awaitable[AppendResult]]


async def one_known(store: PostgresStreams, pool: asyncpg.Pool, sid: UUID) -> AppendResult:
    return await store.append(
        Append(sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR)
    )


async def many_known(store: PostgresStreams, pool: asyncpg.Pool, sid: UUID) -> AppendResult:
    events = [CounterOpened(name="a"), CounterIncremented(by=1)]
    return await store.append(Append(sid, events, expected_version=0, metadata=ACTOR))


async def one_at_the_end(store: PostgresStreams, pool: asyncpg.Pool, sid: UUID) -> AppendResult:
    event = CounterOpened(name="a")
    return await store.append(Append(sid, [event], expected_version=None, metadata=ACTOR))


async def many_at_the_end(store: PostgresStreams, pool: asyncpg.Pool, sid: UUID) -> AppendResult:
    events = [CounterOpened(name="a"), CounterIncremented(by=1)]
    return await store.append(Append(sid, events, expected_version=None, metadata=ACTOR))


async def first_named(store: PostgresStreams, pool: asyncpg.Pool, sid: UUID) -> AppendResult:
    event = CounterOpened(name="a")
    name = NameClaim(namespace="counters", name=str(sid))
    return await store.append(Append(sid, [event], expected_version=0, metadata=ACTOR, name=name))


async def each_of_many_streams(
    store: PostgresStreams, pool: asyncpg.Pool, sid: UUID
) -> AppendResult:
    async with pool.acquire() as conn, conn.transaction():
        appender = PostgresStreams(conn, CODEC, notifier=store.notifier)
        appends = [
            OneAppend(
                stream_id=stream,
                event=CounterOpened(name="a"),
                expected_version=0,
                event_id=uuid4(),
            )
            for stream in (sid, uuid4())
        ]
        await appender.append_each(appends, metadata=ACTOR)
    return AppendResult(stream_id=sid, version=1, positions=())


@pytest.fixture
async def wakeups(clean_pool: asyncpg.Pool) -> AsyncIterator["asyncio.Queue[str]"]:
    received: asyncio.Queue[str] = asyncio.Queue()

    def heard(*args: object) -> None:
        received.put_nowait(str(args[2]))

    async with clean_pool.acquire() as listener:
        await listener.add_listener(NOTIFY_CHANNEL, heard)
        yield received
        await listener.remove_listener(NOTIFY_CHANNEL, heard)


@pytest.mark.parametrize(
    "append",
    [one_known, many_known, one_at_the_end, many_at_the_end, first_named, each_of_many_streams],
)
async def test_the_claiming_append_wakes_the_readers_and_the_next_one_does_not(
    clean_pool: asyncpg.Pool, wakeups: "asyncio.Queue[str]", append: Appending
) -> None:
    notifier = CommitNotifier(clean_pool, interval_s=30)
    store = PostgresStreams(clean_pool, CODEC, notifier=notifier)
    try:
        await append(store, clean_pool, uuid4())
        assert await asyncio.wait_for(wakeups.get(), timeout=5) == NOTIFY_CHANNEL
        await append(store, clean_pool, uuid4())  # within the interval: nothing carried
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(wakeups.get(), timeout=0.5)
    finally:
        notifier.close()  # its trailing NOTIFY is a minute away
