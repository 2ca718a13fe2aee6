"""Names unique per namespace under concurrency: creating (one statement) and renaming (a
transaction) alike."""

import asyncio
from uuid import uuid4

import asyncpg
import pytest

from infra.postgres.streams import PostgresStreams
from services.errors import NameTakenError
from services.ports.event_store import Append, NameClaim
from tests.conftest import ACTOR
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = pytest.mark.integration

CLAIM = NameClaim(namespace="counter@tenant:", name="busy")


async def test_of_many_concurrent_creators_of_a_name_one_wins(clean_pool: asyncpg.Pool) -> None:
    streams = PostgresStreams(clean_pool, CODEC)

    async def create() -> bool:
        stream_id = uuid4()
        event = CounterOpened(name="busy")
        try:
            await streams.append(
                Append(stream_id, [event], expected_version=0, metadata=ACTOR, name=CLAIM)
            )
        except NameTakenError:
            return False
        return True

    outcomes = await asyncio.gather(*(create() for _ in range(20)))
    assert outcomes.count(True) == 1
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == 1
    assert await clean_pool.fetchval("SELECT count(*) FROM stream_names") == 1


async def test_a_stream_keeps_its_name_when_it_appends_and_frees_it_when_renamed(
    clean_pool: asyncpg.Pool,
) -> None:
    streams = PostgresStreams(clean_pool, CODEC)
    first, second = uuid4(), uuid4()
    opened = CounterOpened(name="busy")
    await streams.append(Append(first, [opened], expected_version=0, metadata=ACTOR, name=CLAIM))
    bump = CounterIncremented(by=1)
    await streams.append(Append(first, [bump], expected_version=1, metadata=ACTOR, name=CLAIM))
    other = CounterOpened(name="busy")
    with pytest.raises(NameTakenError):
        await streams.append(
            Append(second, [other], expected_version=0, metadata=ACTOR, name=CLAIM)
        )
    renamed = NameClaim(namespace=CLAIM.namespace, name="calm")
    await streams.append(Append(first, [bump], expected_version=2, metadata=ACTOR, name=renamed))
    await streams.append(Append(second, [other], expected_version=0, metadata=ACTOR, name=CLAIM))
    names = await clean_pool.fetch("SELECT name FROM stream_names ORDER BY name")
    assert [row["name"] for row in names] == ["busy", "calm"]
