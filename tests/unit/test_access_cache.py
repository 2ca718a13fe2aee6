"""What an API process keeps about access is kept exactly while its epoch holds: the same epoch
reads nothing again, a moved one reads the stream or the tree afresh."""

import gc
import weakref
from uuid import UUID

from domain.events import ApplicationCreated, ApplicationRoleGranted, EventMetadata
from domain.values import TENANT, AccessRule, Grant, ScopeRef
from infra.http.access_cache import AccessCache
from services.ports.event_store import Append, Stream
from tests.fakes import InMemoryStreams

SETUP = EventMetadata(actor_subject="setup", actor_kind="system")
APP_ID = UUID(int=42)
PROJECT = ScopeRef("project", "7")


class CountingStore(InMemoryStreams):
    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    async def load(self, stream_id: UUID) -> Stream:
        self.loads += 1
        return await super().load(stream_id)


class CountingTree:
    def __init__(self) -> None:
        self.reads = 0
        self.units: dict[ScopeRef, tuple[ScopeRef, ...]] = {}

    async def lineages(self) -> dict[ScopeRef, tuple[ScopeRef, ...]]:
        self.reads += 1
        return dict(self.units)


async def created(store: InMemoryStreams, application_id: UUID = APP_ID) -> None:
    event = ApplicationCreated(
        application_id=application_id, name="bot", client_id="bot", grants=()
    )
    await store.append(Append(application_id, [event], expected_version=0, metadata=SETUP))


async def test_an_application_is_read_once_per_epoch() -> None:
    store, tree = CountingStore(), CountingTree()
    await created(store)
    cache = AccessCache(store, tree)
    first = await cache.application(APP_ID, 10)
    again = await cache.application(APP_ID, 10)
    assert first is not None
    assert again == first
    assert store.loads == 1
    rule = AccessRule(rule_id=1, grant=Grant(role="viewer", scope_kind="tenant", scope_id="t"))
    granted = ApplicationRoleGranted(application_id=APP_ID, rule=rule)
    await store.append(Append(APP_ID, [granted], expected_version=1, metadata=SETUP))
    assert (await cache.application(APP_ID, 10)) == first  # the epoch says nothing moved
    moved = await cache.application(APP_ID, 11)
    assert moved is not None
    assert rule.grant in moved.effective_grants
    assert store.loads == 2


async def test_an_unknown_application_is_kept_as_unknown() -> None:
    store, tree = CountingStore(), CountingTree()
    cache = AccessCache(store, tree)
    assert await cache.application(APP_ID, None) is None
    assert await cache.application(APP_ID, None) is None
    assert store.loads == 1


async def test_user_grants_are_read_once_per_epoch() -> None:
    store, tree = CountingStore(), CountingTree()
    cache = AccessCache(store, tree)
    assert await cache.user_grants("alice", 3) == ()
    assert await cache.user_grants("alice", 3) == ()
    assert store.loads == 1
    await cache.user_grants("alice", 4)
    assert store.loads == 2


async def test_lineages_are_read_once_per_tree_epoch_and_hold_the_tenant() -> None:
    store, tree = CountingStore(), CountingTree()
    cache = AccessCache(store, tree)
    assert await cache.lineages(None) == {TENANT: (TENANT,)}
    tree.units[PROJECT] = (PROJECT, TENANT)
    assert PROJECT not in await cache.lineages(None)
    assert tree.reads == 1
    assert (await cache.lineages(5))[PROJECT] == (PROJECT, TENANT)
    assert tree.reads == 2


async def test_the_least_recently_used_caller_goes_first() -> None:
    store, tree = CountingStore(), CountingTree()
    ids = [UUID(int=n) for n in range(1, 4)]
    for application_id in ids:
        await created(store, application_id)
    cache = AccessCache(store, tree, size=2)
    await cache.application(ids[0], 1)
    await cache.application(ids[1], 1)
    await cache.application(ids[0], 1)  # used again: ids[1] is now the oldest
    await cache.application(ids[2], 1)
    assert store.loads == 3
    await cache.application(ids[0], 1)
    assert store.loads == 3
    await cache.application(ids[1], 1)
    assert store.loads == 4


async def test_the_scopes_a_caller_sees_are_kept_with_the_tree_they_were_seen_in() -> None:
    tree = CountingTree()
    tree.units = {PROJECT: (PROJECT, TENANT)}
    cache = AccessCache(CountingStore(), tree)
    grants = (Grant(role="viewer", scope_kind="project", scope_id="7"),)
    first = await cache.seen(grants, 3)
    assert first == {PROJECT, TENANT}
    assert await cache.seen(grants, 3) is first
    other = ScopeRef("project", "8")
    tree.units[other] = (other, TENANT)
    assert await cache.seen(grants, 3) is first  # the epoch says nothing moved
    everything = (Grant(role="viewer", scope_kind="tenant", scope_id=""),)
    assert await cache.seen(everything, 4) == {PROJECT, other, TENANT}
    assert await cache.seen(grants, 4) == {PROJECT, TENANT}
    assert tree.reads == 2


class Units(dict[ScopeRef, tuple[ScopeRef, ...]]):
    """A tree's answer that a test can watch being let go (a dict takes no weak reference)."""


async def test_a_tree_moved_on_is_not_held_by_what_was_seen_in_it() -> None:
    made: list[weakref.ref[Units]] = []

    class WatchedTree(CountingTree):
        async def lineages(self) -> dict[ScopeRef, tuple[ScopeRef, ...]]:
            units = Units(await super().lineages())
            made.append(weakref.ref(units))
            return units

    tree = WatchedTree()
    tree.units = {PROJECT: (PROJECT, TENANT)}
    cache = AccessCache(CountingStore(), tree)
    await cache.seen((Grant(role="viewer", scope_kind="project", scope_id="7"),), 3)
    await cache.seen((Grant(role="viewer", scope_kind="tenant", scope_id=""),), 4)  # another
    gc.collect()
    assert [ref() is None for ref in made] == [True, False]
