"""What an API process remembers of the streams its decisions read (infra/postgres/
units_of_work.py `RememberedStreams`): answered from memory, however the stream moved since in
another process, until a fresh read brings it up to date or this process appends to it."""

from uuid import uuid4

import asyncpg
import pytest

from infra.postgres.streams import PostgresStreams
from services.ports.event_store import Append
from tests.conftest import ACTOR
from tests.sample_events import CONTRACT_CODEC, CounterIncremented, CounterOpened

pytestmark = pytest.mark.integration


async def test_a_remembered_stream_is_what_was_read_until_a_fresh_read_or_an_own_append(
    clean_pool: asyncpg.Pool,
) -> None:
    here, elsewhere = (
        PostgresStreams(clean_pool, CONTRACT_CODEC),
        PostgresStreams(clean_pool, CONTRACT_CODEC),
    )
    counter, never = uuid4(), uuid4()
    await elsewhere.append(
        Append(counter, [CounterOpened(name="c")], expected_version=0, metadata=ACTOR)
    )
    first = await here.load_many([counter, never], remembered=True)
    assert first[counter].version == 1
    assert never not in first

    await elsewhere.append(
        Append(counter, [CounterIncremented(by=1)], expected_version=1, metadata=ACTOR)
    )
    await elsewhere.append(
        Append(never, [CounterOpened(name="n")], expected_version=0, metadata=ACTOR)
    )
    remembered = await here.load_many([counter, never], remembered=True)
    assert remembered[counter].version == 1  # from memory, as is the stream read with none
    assert never not in remembered

    assert (await here.load_many([counter]))[counter].version == 2  # fresh, and remembered so
    assert (await here.load_many([counter], remembered=True))[counter].version == 2

    await here.append(
        Append(counter, [CounterIncremented(by=1)], expected_version=2, metadata=ACTOR)
    )
    assert (await here.load_many([counter], remembered=True))[counter].version == 3  # forgotten


async def test_only_what_decisions_read_is_remembered(clean_pool: asyncpg.Pool) -> None:
    here, elsewhere = (
        PostgresStreams(clean_pool, CONTRACT_CODEC),
        PostgresStreams(clean_pool, CONTRACT_CODEC),
    )
    counter = uuid4()
    await elsewhere.append(
        Append(counter, [CounterOpened(name="c")], expected_version=0, metadata=ACTOR)
    )
    await here.load_many([counter])  # a batch read of the submitter's or the fan-out's kind
    await elsewhere.append(
        Append(counter, [CounterIncremented(by=1)], expected_version=1, metadata=ACTOR)
    )
    assert (await here.load_many([counter], remembered=True))[counter].version == 2
