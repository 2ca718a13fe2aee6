"""The EventStore contract: the in-memory fake and PostgreSQL must behave the same."""

from uuid import uuid4

import msgspec
import pytest

from services.errors import IdempotencyKeyReusedError, VersionConflictError
from services.event_ids import event_ids_for
from services.ports import EventStore, Written
from tests.conftest import ACTOR
from tests.sample_events import CounterIncremented, CounterOpened


async def test_a_new_stream_is_empty_at_version_zero(event_store: EventStore) -> None:
    stream = await event_store.load(uuid4())
    assert stream.version == 0
    assert stream.events == ()


async def test_appended_events_load_back_in_order(event_store: EventStore) -> None:
    sid = uuid4()
    events = [CounterOpened(name="a"), CounterIncremented(by=2), CounterIncremented(by=3)]
    result = await event_store.append(sid, events, expected_version=0, metadata=ACTOR)
    assert result.version == 3
    assert len(result.positions) == 3
    assert list(result.positions) == sorted(result.positions)
    assert not result.replayed
    stream = await event_store.load(sid)
    assert stream.version == 3
    assert stream.events == tuple(events)


async def test_appending_at_a_stale_version_is_refused_and_writes_nothing(
    event_store: EventStore,
) -> None:
    sid = uuid4()
    await event_store.append(sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR)
    with pytest.raises(VersionConflictError) as refused:
        await event_store.append(
            sid, [CounterIncremented(by=1)], expected_version=0, metadata=ACTOR
        )
    assert refused.value.expected == 0
    assert refused.value.actual == 1
    assert (await event_store.load(sid)).version == 1


async def test_a_stream_says_when_and_by_whom_its_first_and_last_events_were_written(
    event_store: EventStore,
) -> None:
    sid = uuid4()
    first = await event_store.append(
        sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR
    )
    other = msgspec.structs.replace(ACTOR, actor_subject="someone-else")
    last = await event_store.append(
        sid,
        [CounterIncremented(by=1), CounterIncremented(by=2)],
        expected_version=1,
        metadata=other,
    )
    assert first.recorded_at is not None
    assert last.recorded_at is not None
    assert first.recorded_at <= last.recorded_at
    stream = await event_store.load(sid)
    assert stream.first == Written(first.recorded_at, ACTOR.actor_subject)
    assert stream.last == Written(last.recorded_at, "someone-else")
    assert (await event_store.load(uuid4())).first is None


async def test_no_expectation_appends_at_the_end(event_store: EventStore) -> None:
    sid = uuid4()
    await event_store.append(sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR)
    result = await event_store.append(
        sid, [CounterIncremented(by=1)], expected_version=None, metadata=ACTOR
    )
    assert result.version == 2


async def test_a_retry_with_the_same_event_ids_returns_the_first_result(
    event_store: EventStore,
) -> None:
    sid = uuid4()
    events = [CounterOpened(name="a"), CounterIncremented(by=1)]
    ids = event_ids_for("request-42", sid, len(events))
    first = await event_store.append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids)
    again = await event_store.append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids)
    assert again.replayed
    assert (again.version, again.positions) == (first.version, first.positions)
    assert again.recorded_at == first.recorded_at
    assert (await event_store.load(sid)).version == 2


async def test_event_ids_reused_for_another_stream_are_refused(event_store: EventStore) -> None:
    ids = event_ids_for("k", uuid4(), 1)
    await event_store.append(
        uuid4(), [CounterOpened(name="a")], expected_version=0, metadata=ACTOR, event_ids=ids
    )
    other = uuid4()
    with pytest.raises(IdempotencyKeyReusedError):
        await event_store.append(
            other, [CounterOpened(name="b")], expected_version=0, metadata=ACTOR, event_ids=ids
        )
    assert (await event_store.load(other)).version == 0


async def test_appending_nothing_writes_nothing(event_store: EventStore) -> None:
    sid = uuid4()
    result = await event_store.append(sid, [], expected_version=0, metadata=ACTOR)
    assert result.positions == ()
    assert (await event_store.load(sid)).version == 0
