"""The EventStore contract, the one way to append: expected versions, idempotent replays by event
ids, names unique per namespace and the record of which streams use which, all moving with each
append, all or nothing, and a unit of work over several streams committing or rolling back as
one; the in-memory fake and PostgreSQL behave the same."""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.events import (
    EnvironmentCreated,
    EnvironmentDeleted,
    EnvironmentUpdated,
    Event,
    EventMetadata,
)
from domain.specs import EnvironmentSpec
from domain.values import AssetMeta
from services.errors import (
    EventTooLargeError,
    IdempotencyKeyReusedError,
    InvalidRequestError,
    NameTakenError,
    StaleReadError,
    VersionConflictError,
)
from services.event_ids import event_ids_for
from services.idempotency import create_once
from services.ports.event_store import (
    Append,
    AppendResult,
    EventStore,
    NameClaim,
    OneAppend,
    Stream,
    Uses,
    Written,
)
from tests.conftest import ACTOR
from tests.sample_events import CounterIncremented, CounterLabelled, CounterOpened


async def test_a_new_stream_is_empty_at_version_zero(streams: EventStore) -> None:
    stream = await streams.load(uuid4())
    assert stream.version == 0
    assert stream.events == ()


async def test_appended_events_load_back_in_order(streams: EventStore) -> None:
    sid = uuid4()
    events = [CounterOpened(name="a"), CounterIncremented(by=2), CounterIncremented(by=3)]
    result = await streams.append(Append(sid, events, expected_version=0, metadata=ACTOR))
    assert result.version == 3
    assert len(result.positions) == 3
    assert list(result.positions) == sorted(result.positions)
    assert not result.replayed
    stream = await streams.load(sid)
    assert stream.version == 3
    assert stream.events == tuple(events)


async def test_appending_at_a_stale_version_is_refused_and_writes_nothing(
    streams: EventStore,
) -> None:
    sid = uuid4()
    await streams.append(Append(sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR))
    with pytest.raises(VersionConflictError) as refused:
        await streams.append(
            Append(sid, [CounterIncremented(by=1)], expected_version=0, metadata=ACTOR)
        )
    assert refused.value.expected == 0
    assert refused.value.actual == 1
    assert (await streams.load(sid)).version == 1


async def test_a_stream_says_when_and_by_whom_its_first_and_last_events_were_written(
    streams: EventStore,
) -> None:
    sid = uuid4()
    first = await streams.append(
        Append(sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR)
    )
    other = msgspec.structs.replace(ACTOR, actor_subject="someone-else")
    last = await streams.append(
        Append(
            sid,
            [CounterIncremented(by=1), CounterIncremented(by=2)],
            expected_version=1,
            metadata=other,
        )
    )
    assert first.recorded_at is not None
    assert last.recorded_at is not None
    assert first.recorded_at <= last.recorded_at
    stream = await streams.load(sid)
    assert stream.first == Written(first.recorded_at, ACTOR.actor_subject)
    assert stream.last == Written(last.recorded_at, "someone-else")
    assert (await streams.load(uuid4())).first is None


async def test_a_creations_events_are_read_with_its_request_digest_and_no_later_ones(
    streams: EventStore,
) -> None:
    """A keyed create's events carry its request digest (services/idempotency.py), read back
    alone and with other streams; an event appended later is read without one, whatever its
    metadata carries."""
    sid, other = uuid4(), uuid4()
    keyed = msgspec.structs.replace(ACTOR, request_digest="d" * 64)
    opened = [CounterOpened(name="a"), CounterIncremented(by=1)]
    await streams.append(Append(sid, opened, expected_version=0, metadata=keyed))
    later = msgspec.structs.replace(ACTOR, request_digest="e" * 64)
    await streams.append(
        Append(sid, [CounterIncremented(by=2)], expected_version=2, metadata=later)
    )
    await streams.append(
        Append(other, [CounterOpened(name="b")], expected_version=0, metadata=ACTOR)
    )
    alone = await streams.load(sid)
    together = (await streams.load_many([sid, other]))[sid]
    for stream in (alone, together):
        assert [w.request for w in stream.written] == ["d" * 64, "d" * 64, None]
    assert [w.request for w in (await streams.load_many([other]))[other].written] == [None]


async def test_a_read_after_a_version_holds_only_the_events_after_it(streams: EventStore) -> None:
    reader = streams  # the store is the fan-out's batch port as well
    long, short, empty = uuid4(), uuid4(), uuid4()
    events = [CounterOpened(name="a"), CounterIncremented(by=2), CounterIncremented(by=3)]
    await streams.append(Append(long, events, expected_version=0, metadata=ACTOR))
    await streams.append(Append(short, events[:1], expected_version=0, metadata=ACTOR))
    found = await reader.load_after({long: 1, short: 1, empty: 0})
    assert found == {long: tuple(events[1:])}  # none after the version: absent
    assert await reader.load_after({long: 0}) == {long: tuple(events)}
    assert await reader.load_after({}) == {}


async def test_no_expectation_appends_at_the_end(streams: EventStore) -> None:
    sid = uuid4()
    await streams.append(Append(sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR))
    result = await streams.append(
        Append(sid, [CounterIncremented(by=1)], expected_version=None, metadata=ACTOR)
    )
    assert result.version == 2


async def test_a_retry_with_the_same_event_ids_returns_the_first_result(
    streams: EventStore,
) -> None:
    sid = uuid4()
    events = [CounterOpened(name="a"), CounterIncremented(by=1)]
    ids = event_ids_for("request-42", sid, len(events))
    first = await streams.append(
        Append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids)
    )
    again = await streams.append(
        Append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids)
    )
    assert again.replayed
    assert (again.version, again.positions) == (first.version, first.positions)
    assert again.recorded_at == first.recorded_at
    assert (await streams.load(sid)).version == 2


async def test_event_ids_reused_for_another_stream_are_refused(streams: EventStore) -> None:
    ids = event_ids_for("k", uuid4(), 1)
    await streams.append(
        Append(
            uuid4(), [CounterOpened(name="a")], expected_version=0, metadata=ACTOR, event_ids=ids
        )
    )
    other = uuid4()
    with pytest.raises(IdempotencyKeyReusedError):
        await streams.append(
            Append(
                other, [CounterOpened(name="b")], expected_version=0, metadata=ACTOR, event_ids=ids
            )
        )
    assert (await streams.load(other)).version == 0


async def test_appending_nothing_writes_nothing(streams: EventStore) -> None:
    sid = uuid4()
    result = await streams.append(Append(sid, [], expected_version=0, metadata=ACTOR))
    assert result.positions == ()
    assert (await streams.load(sid)).version == 0


SPACE = "environment@tenant:"
SPEC = EnvironmentSpec(image="pt")


def claim(name: str) -> NameClaim:
    return NameClaim(namespace=SPACE, name=name, field="/meta/name")


def created(asset_id: UUID, name: str) -> EnvironmentCreated:
    meta = AssetMeta(name=name, scope="tenant")
    return EnvironmentCreated(asset_id=asset_id, meta=meta, spec=EnvironmentSpec(image="pt"))


class InUseError(Exception):
    pass


async def make(streams: EventStore, name: str, uses: Uses | None = None) -> UUID:
    stream_id = uuid4()
    await streams.append(
        Append(
            stream_id,
            [created(stream_id, name)],
            expected_version=0,
            metadata=ACTOR,
            name=claim(name),
            uses=uses,
        )
    )
    return stream_id


async def test_a_name_taken_in_its_namespace_is_refused_and_nothing_is_written(
    streams: EventStore,
) -> None:
    await make(streams, "pt")
    other = uuid4()
    with pytest.raises(NameTakenError) as refused:
        await streams.append(
            Append(
                other, [created(other, "pt")], expected_version=0, metadata=ACTOR, name=claim("pt")
            )
        )
    assert refused.value.field == "/meta/name"
    assert (await streams.load(other)).version == 0
    # Another namespace may hold the same name.
    await streams.append(
        Append(
            other,
            [created(other, "pt")],
            expected_version=0,
            metadata=ACTOR,
            name=NameClaim(namespace="environment@project:7", name="pt"),
        )
    )


async def test_an_event_past_the_size_limit_is_refused_naming_its_largest_part(
    streams: EventStore,
) -> None:
    sid = uuid4()
    await streams.append(Append(sid, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR))
    big = CounterLabelled(labels={"team": "x", "notes": "n" * streams.max_event_bytes})
    with pytest.raises(EventTooLargeError) as refused:
        await streams.append(
            Append(sid, [CounterIncremented(by=1), big], expected_version=1, metadata=ACTOR)
        )
    assert refused.value.field == "/labels/notes"
    assert (refused.value.event_type, refused.value.limit) == (
        "counter.labelled.v2",
        streams.max_event_bytes,
    )
    assert refused.value.size > streams.max_event_bytes
    assert (await streams.load(sid)).version == 1
    # A named creation claims nothing.
    other, huge = uuid4(), "i" * streams.max_event_bytes
    large = msgspec.structs.replace(created(other, "pt"), spec=EnvironmentSpec(image=huge))
    with pytest.raises(EventTooLargeError) as refused:
        await streams.append(
            Append(other, [large], expected_version=0, metadata=ACTOR, name=claim("pt"))
        )
    assert refused.value.field == "/spec/image"
    await make(streams, "pt")


async def test_a_rename_frees_the_old_name_and_a_deletion_frees_the_name(
    streams: EventStore,
) -> None:
    first = await make(streams, "pt")
    renamed = EnvironmentUpdated(asset_id=first, name="pt-2", spec=EnvironmentSpec(image="pt"))
    await streams.append(
        Append(first, [renamed], expected_version=1, metadata=ACTOR, name=claim("pt-2"))
    )
    second = await make(streams, "pt")  # the old name is free
    with pytest.raises(NameTakenError):
        await make(streams, "pt-2")
    await streams.append(
        Append(
            first,
            [EnvironmentDeleted(asset_id=first)],
            expected_version=2,
            metadata=ACTOR,
            name=None,
        )
    )
    assert await make(streams, "pt-2") not in (first, second)


async def test_a_stale_version_is_refused_and_writes_nothing(streams: EventStore) -> None:
    first = await make(streams, "pt")
    renamed = EnvironmentUpdated(asset_id=first, name="pt-2", spec=EnvironmentSpec(image="pt"))
    with pytest.raises(VersionConflictError):
        await streams.append(
            Append(first, [renamed], expected_version=0, metadata=ACTOR, name=claim("pt-2"))
        )
    assert (await streams.load(first)).version == 1
    await make(streams, "pt-2")  # the refused append claimed nothing


@pytest.mark.parametrize("named", [True, False], ids=["named-creation", "plain-append"])
async def test_an_append_checked_against_a_stream_that_moved_on_writes_nothing(
    streams: EventStore, named: bool
) -> None:
    decided_on = await make(streams, "pt")  # read at version 1, then moved on by another writer
    never = uuid4()  # read with no events, then created
    moved = EnvironmentUpdated(asset_id=decided_on, name="pt", spec=EnvironmentSpec(image="v2"))
    await streams.append(Append(decided_on, [moved], expected_version=1, metadata=ACTOR))
    target = uuid4()

    async def append(checked: Mapping[UUID, int]) -> AppendResult:
        if named:
            return await streams.append(
                Append(
                    target,
                    [created(target, "new")],
                    expected_version=0,
                    metadata=ACTOR,
                    name=claim("new"),
                    checked=checked,
                )
            )
        return await streams.append(Append(
            target, [CounterOpened(name="c")], expected_version=0, metadata=ACTOR,
            checked=checked,
        ))  # fmt: skip

    for stale in ({decided_on: 1}, {never: 0, decided_on: 1}):
        with pytest.raises(StaleReadError) as refused:
            await append(stale)
        assert refused.value.stream_id == decided_on
        assert (await streams.load(target)).version == 0  # nothing written, no name claimed
    assert (await append({decided_on: 2, never: 0})).version == 1  # unmoved: written
    if named:
        with pytest.raises(NameTakenError):
            await make(streams, "new")
    created_since = await make(streams, "created-since")
    with pytest.raises(StaleReadError):  # a stream read with no events that has some now
        await streams.append(Append(
            uuid4(), [CounterOpened(name="c")], expected_version=0, metadata=ACTOR,
            checked={created_since: 0},
        ))  # fmt: skip


async def test_a_used_stream_cannot_be_deleted_until_nothing_uses_it(
    streams: EventStore,
) -> None:
    used = await make(streams, "base")
    user = await make(streams, "user", Uses(user="environment user", used=((used, "/x"),)))

    def refuse(users: object) -> Exception:
        return InUseError(users)

    deletion = [EnvironmentDeleted(asset_id=used)]
    with pytest.raises(InUseError) as refused:
        await streams.append(
            Append(used, deletion, expected_version=1, metadata=ACTOR, name=None, unused=refuse)
        )
    assert refused.value.args == (["environment user"],)
    assert (await streams.load(used)).version == 1
    # The user stops using it (its deletion uses nothing): then the deletion goes through.
    await streams.append(
        Append(
            user,
            [EnvironmentDeleted(asset_id=user)],
            expected_version=1,
            metadata=ACTOR,
            name=None,
            uses=Uses(user="environment user"),
        )
    )
    await streams.append(
        Append(used, deletion, expected_version=1, metadata=ACTOR, name=None, unused=refuse)
    )
    assert (await streams.load(used)).version == 2


async def test_a_use_of_a_deleted_stream_is_refused_naming_its_field(
    streams: EventStore,
) -> None:
    gone = await make(streams, "gone")
    await streams.append(
        Append(
            gone, [EnvironmentDeleted(asset_id=gone)], expected_version=1, metadata=ACTOR, name=None
        )
    )
    user = uuid4()
    with pytest.raises(InvalidRequestError) as refused:
        await streams.append(
            Append(
                user,
                [created(user, "user")],
                expected_version=0,
                metadata=ACTOR,
                name=claim("user"),
                uses=Uses(user="environment user", used=((gone, "/spec/credential"),)),
            )
        )
    assert refused.value.field == "/spec/credential"
    assert (await streams.load(user)).version == 0
    await make(streams, "user")  # nor was the name claimed


async def test_an_append_keeps_the_name_unless_it_says_otherwise(streams: EventStore) -> None:
    first = await make(streams, "pt")
    kept = EnvironmentUpdated(asset_id=first, name="pt", spec=EnvironmentSpec(image="pt:2"))
    await streams.append(Append(first, [kept], expected_version=1, metadata=ACTOR))  # name: KEEP
    with pytest.raises(NameTakenError):
        await make(streams, "pt")
    await streams.append(
        Append(
            first,
            [EnvironmentDeleted(asset_id=first)],
            expected_version=2,
            metadata=ACTOR,
            name=None,
        )
    )
    await make(streams, "pt")


async def test_a_retried_named_creation_returns_the_first_result(streams: EventStore) -> None:
    sid = uuid4()
    events = [created(sid, "pt"), EnvironmentUpdated(asset_id=sid, name="pt", spec=SPEC)]
    ids = event_ids_for("create-pt", sid, len(events))
    first = await streams.append(
        Append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids, name=claim("pt"))
    )
    again = await streams.append(
        Append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids, name=claim("pt"))
    )
    assert again.replayed
    assert (again.version, again.positions) == (first.version, first.positions)
    assert (await streams.load(sid)).version == 2


async def retried_after_rename(streams: EventStore) -> tuple[UUID, AppendResult, AppendResult]:
    """A named creation (event ids of its idempotency key), then a rename that frees its first
    name, then the creation once more: a client retrying the create with the same key."""
    sid = uuid4()
    events = [created(sid, "pt"), EnvironmentUpdated(asset_id=sid, name="pt", spec=SPEC)]
    ids = event_ids_for("create-pt", sid, len(events))
    first = await streams.append(
        Append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids, name=claim("pt"))
    )
    renamed = EnvironmentUpdated(asset_id=sid, name="pt-2", spec=SPEC)
    await streams.append(
        Append(sid, [renamed], expected_version=2, metadata=ACTOR, name=claim("pt-2"))
    )
    again = await streams.append(
        Append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids, name=claim("pt"))
    )
    return sid, first, again


async def test_a_replayed_named_creation_moves_no_name(streams: EventStore) -> None:
    sid, first, again = await retried_after_rename(streams)
    assert again.replayed
    assert (again.version, again.positions) == (first.version, first.positions)
    assert (await streams.load(sid)).version == 3
    with pytest.raises(NameTakenError):
        await make(streams, "pt-2")  # the stream still holds the name it was renamed to
    await make(streams, "pt")  # and the replay did not take its first name back


async def test_a_replayed_named_creation_whose_name_was_taken_since_returns_the_first_result(
    streams: EventStore,
) -> None:
    sid = uuid4()
    events = [created(sid, "pt"), EnvironmentUpdated(asset_id=sid, name="pt", spec=SPEC)]
    ids = event_ids_for("create-pt", sid, len(events))
    first = await streams.append(
        Append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids, name=claim("pt"))
    )
    await streams.append(
        Append(
            sid, [EnvironmentDeleted(asset_id=sid)], expected_version=2, metadata=ACTOR, name=None
        )
    )
    taker = await make(streams, "pt")  # another stream takes the freed name
    again = await streams.append(
        Append(sid, events, expected_version=0, metadata=ACTOR, event_ids=ids, name=claim("pt"))
    )
    assert again.replayed
    assert (again.version, again.positions) == (first.version, first.positions)
    assert (await streams.load(sid)).version == 3
    assert (await streams.load(taker)).version == 1
    with pytest.raises(NameTakenError):
        await make(streams, "pt")  # still the taker's


async def test_a_unit_of_work_commits_its_appends_to_several_streams_together(
    streams: EventStore,
) -> None:
    one, other = uuid4(), uuid4()
    async with streams.transaction() as tx:
        await tx.append(Append(one, [created(one, "one")], expected_version=0, metadata=ACTOR))
        await tx.append(
            Append(
                other,
                [created(other, "other")],
                expected_version=0,
                metadata=ACTOR,
                name=claim("b"),
            )
        )
        async with tx.transaction() as inner:  # joins the unit
            renamed = EnvironmentUpdated(asset_id=one, name="one", spec=SPEC)
            await inner.append(Append(one, [renamed], expected_version=1, metadata=ACTOR))
    assert (await streams.load(one)).version == 2
    assert (await streams.load(other)).version == 1
    with pytest.raises(NameTakenError):
        await make(streams, "b")


async def delete_held_then_conflict(streams: EventStore, held: UUID, one: UUID) -> None:
    """A unit of work that claims a name, frees another, and then meets a stale version."""
    async with streams.transaction() as tx:
        await tx.append(
            Append(one, [created(one, "one")], expected_version=0, metadata=ACTOR, name=claim("a"))
        )
        deleted = [EnvironmentDeleted(asset_id=held)]
        await tx.append(Append(held, deleted, expected_version=1, metadata=ACTOR, name=None))
        await tx.append(Append(uuid4(), [created(one, "x")], expected_version=3, metadata=ACTOR))


async def test_a_unit_of_work_that_fails_writes_nothing_to_any_stream(streams: EventStore) -> None:
    held, one = await make(streams, "held"), uuid4()
    with pytest.raises(VersionConflictError):
        await delete_held_then_conflict(streams, held, one)
    assert (await streams.load(one)).version == 0
    assert (await streams.load(held)).version == 1
    await make(streams, "a")  # the name claimed in the unit is free
    with pytest.raises(NameTakenError):
        await make(streams, "held")  # and the one it freed is still held


async def append_then_refuse(streams: EventStore, sid: UUID) -> None:
    async with streams.transaction() as tx:
        await tx.append(Append(sid, [created(sid, "a")], expected_version=0, metadata=ACTOR))
        raise InUseError("the caller's own refusal, after the append")


async def test_an_error_of_the_caller_rolls_its_unit_of_work_back(streams: EventStore) -> None:
    sid = uuid4()
    with pytest.raises(InUseError):
        await append_then_refuse(streams, sid)
    assert (await streams.load(sid)).version == 0


class Through:
    """The store a use case is given, passing every call on to `store` (where a test looks in
    between)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.max_event_bytes = store.max_event_bytes

    async def load(self, stream_id: UUID) -> Stream:
        return await self.store.load(stream_id)

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        return await self.store.load_many(stream_ids, remembered=remembered)

    async def load_after(self, versions: Mapping[UUID, int]) -> dict[UUID, tuple[Event, ...]]:
        return await self.store.load_after(versions)

    async def append(self, append: Append) -> AppendResult:
        return await self.store.append(append)

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        return await self.store.append_each(appends, metadata=metadata)

    def transaction(self) -> AbstractAsyncContextManager[EventStore]:
        return self.store.transaction()


class LosesTheRace(Through):
    """A unit of work as a use case sees it, where another writer's identical creation commits
    right after the use case's first read: the race a retry under the same key loses."""

    def __init__(self, unit: EventStore, winner: Callable[[], Awaitable[object]]) -> None:
        super().__init__(unit)
        self._winner: Callable[[], Awaitable[object]] | None = winner

    async def load(self, stream_id: UUID) -> Stream:
        stream = await self.store.load(stream_id)
        if self._winner is not None:
            winner, self._winner = self._winner, None
            await winner()
        return stream


@pytest.mark.parametrize(
    ("named", "count"), [(False, 2), (True, 2), (True, 1)], ids=["unnamed", "named", "one-event"]
)
async def test_a_creation_retried_in_a_unit_of_work_after_a_concurrent_one_returns_the_first(
    streams: EventStore, named: bool, count: int
) -> None:
    sid, kept = uuid4(), uuid4()
    events = [created(sid, "pt"), EnvironmentUpdated(asset_id=sid, name="pt", spec=SPEC)][:count]
    name = claim("pt") if named else None

    async def winner() -> None:  # another writer (in PostgreSQL, another connection) commits
        await streams.append(Append(sid, events, expected_version=0, metadata=ACTOR, name=name))

    async with streams.transaction() as tx:
        await tx.append(Append(kept, [created(kept, "kept")], expected_version=0, metadata=ACTOR))
        creation = await create_once(
            LosesTheRace(tx, winner), sid, events, keyed=True, metadata=ACTOR, name=name
        )
        # The unit goes on after the race it lost, and commits what it wrote besides.
        kept_renamed = EnvironmentUpdated(asset_id=kept, name="kept-2", spec=SPEC)
        await tx.append(Append(kept, [kept_renamed], expected_version=1, metadata=ACTOR))
    assert not creation.now
    assert tuple(creation.events) == tuple(events)
    assert (await streams.load(sid)).events == tuple(events)
    assert (await streams.load(kept)).version == 2


class Reads(Through):
    """The store as a create sees it, noting each stream it reads."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store)
        self.loaded: list[UUID] = []

    async def load(self, stream_id: UUID) -> Stream:
        self.loaded.append(stream_id)
        return await self.store.load(stream_id)


async def test_a_keyed_creation_its_caller_looked_up_is_not_read_again(streams: EventStore) -> None:
    sid = uuid4()
    reads = Reads(streams)
    creation = await create_once(
        reads, sid, [created(sid, "pt")], keyed=True, metadata=ACTOR, name=claim("pt"),
        looked_up=True,
    )  # fmt: skip
    assert creation.now
    assert reads.loaded == []


async def test_a_keyed_creation_looked_up_before_another_attempt_wrote_answers_that_one(
    streams: EventStore,
) -> None:
    sid = uuid4()
    events = [created(sid, "pt")]
    # The caller found the stream empty; an attempt under the same key then wrote it.
    await streams.append(Append(sid, events, expected_version=0, metadata=ACTOR, name=claim("pt")))
    reads = Reads(streams)
    creation = await create_once(
        reads, sid, events, keyed=True, metadata=ACTOR, name=claim("pt"), looked_up=True
    )
    assert not creation.now
    assert tuple(creation.events) == tuple(events)
    assert reads.loaded == [sid]  # once the append met the winner, not before it
    assert (await streams.load(sid)).version == 1


async def test_an_append_refused_in_a_unit_of_work_leaves_no_trace(streams: EventStore) -> None:
    await make(streams, "pt")
    sid, kept = uuid4(), uuid4()
    events = [created(sid, "pt"), EnvironmentUpdated(asset_id=sid, name="pt", spec=SPEC)]
    async with streams.transaction() as tx:
        with pytest.raises(NameTakenError):
            await tx.append(
                Append(sid, events, expected_version=0, metadata=ACTOR, name=claim("pt"))
            )
        await tx.append(Append(kept, [created(kept, "kept")], expected_version=0, metadata=ACTOR))
    assert (await streams.load(kept)).version == 1
    # Nothing of the refused append is taken for written: the stream is still empty.
    with pytest.raises(VersionConflictError):
        await streams.append(
            Append(sid, [CounterIncremented(by=1)], expected_version=2, metadata=ACTOR)
        )
    assert (await streams.load(sid)).version == 0
