"""The linked-asset fan-out against real PostgreSQL: concurrent linkers and updaters all end on
the asset's latest version, and a replay from zero writes nothing twice."""

import asyncio
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import msgspec
import pytest

from domain import templates
from domain.commands import CreateAsset, CreateTemplate, UpdateAsset
from domain.events import EventMetadata
from domain.specs import EnvironmentSpec, WorkloadSupportedTypes
from domain.template_specs import DistributedTemplateSpec, TemplateAssets
from domain.templates import TemplateBody
from domain.values import ScopeRef
from infra.followers.fanout_runner import FanoutRunner
from infra.followers.global_log import load_checkpoint
from infra.postgres.commit_notifier import NOTIFY_CHANNEL, CommitNotifier
from infra.postgres.names import name_lookups
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import ProjectorSettings
from services import assets
from services import templates as template_use_cases
from services.errors import VersionConflictError
from services.ports.event_store import Append, OneAppend
from services.ports.name_lookups import Lookups
from tests.conftest import ACTOR
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = pytest.mark.integration

SYSTEM = EventMetadata(actor_subject="test", actor_kind="system")


def runner(pool: asyncpg.Pool, batch_size: int = 50) -> FanoutRunner:
    settings = ProjectorSettings(batch_size=batch_size, poll_interval_s=0.05)
    return FanoutRunner(pool, DOMAIN_CODEC, settings)


async def catch_up(pool: asyncpg.Pool, fanout: FanoutRunner) -> None:
    async with pool.acquire() as conn:
        cursor = await load_checkpoint(conn, fanout.checkpoint_name)
        while True:
            cursor, read = await fanout.step(conn, cursor)
            if not read:
                return


async def environment(streams: PostgresStreams, name: str, names: Lookups) -> UUID:
    command = CreateAsset(
        asset_id=uuid4(),
        scope=ScopeRef("tenant"),
        name=name,
        workload_supported_types=WorkloadSupportedTypes(distributed=True, dist_framework="PyTorch"),
        spec=EnvironmentSpec(image="pt:0"),
        metadata=SYSTEM,
    )
    return (await assets.create_asset(command, streams=streams, names=names)).state.id


async def link(streams: PostgresStreams, names: Lookups, asset_id: UUID, name: str) -> UUID:
    body = TemplateBody(
        spec=DistributedTemplateSpec(distributed_framework="PyTorch", num_workers=2),
        assets=TemplateAssets(environment=asset_id),
    )
    command = CreateTemplate(
        template_id=uuid4(), scope=ScopeRef("tenant"), name=name, body=body, metadata=SYSTEM
    )
    view = await template_use_cases.create_template(command, streams=streams, names=names)
    return view.template.id


async def bump(streams: PostgresStreams, asset_id: UUID, image: str, names: Lookups) -> None:
    """Update the environment, retrying when another updater got there first."""
    while True:
        command = UpdateAsset(
            asset_id=asset_id, name="env", spec=EnvironmentSpec(image=image), metadata=SYSTEM
        )
        try:
            await assets.update_asset(command, streams=streams, names=names)
            return
        except VersionConflictError:
            continue


async def recorded_versions(pool: asyncpg.Pool, ids: list[UUID]) -> dict[UUID, int]:
    store = PostgresStreams(pool, DOMAIN_CODEC)
    found = {}
    for template_id in ids:
        state = templates.fold((await store.load(template_id)).events)
        assert state is not None
        found[template_id] = state.asset_versions[0].version
    return found


async def test_concurrent_linkers_and_updaters_end_on_the_latest_version(
    clean_pool: asyncpg.Pool,
) -> None:
    streams = PostgresStreams(clean_pool, DOMAIN_CODEC)
    asset_id = await environment(streams, "env", name_lookups(clean_pool))
    fanout = runner(clean_pool, batch_size=7)
    stop = asyncio.Event()
    following = asyncio.create_task(fanout.run(stop))  # the fan-out runs while they race
    try:
        linkers = [link(streams, name_lookups(clean_pool), asset_id, f"t-{i}") for i in range(40)]
        updaters = [
            bump(streams, asset_id, f"pt:{i}", name_lookups(clean_pool)) for i in range(1, 21)
        ]
        results = await asyncio.gather(*linkers, *updaters)
        await asyncio.sleep(0.3)
    finally:
        stop.set()
        await following
    template_ids = [r for r in results if isinstance(r, UUID)]
    await catch_up(clean_pool, fanout)

    latest = len((await PostgresStreams(clean_pool, DOMAIN_CODEC).load(asset_id)).events)
    assert latest == 21
    versions = await recorded_versions(clean_pool, template_ids)
    assert set(versions.values()) == {latest}, versions
    # Each template was moved on at most once per asset version it had missed, never twice.
    duplicates = await clean_pool.fetchval(
        "SELECT count(*) FROM (SELECT stream_id, data::text FROM events"
        " WHERE type = 'template.linked_asset_updated.v1'"
        " GROUP BY stream_id, data::text HAVING count(*) > 1) AS d"
    )
    assert duplicates == 0


async def test_a_replay_from_zero_writes_nothing_twice(clean_pool: asyncpg.Pool) -> None:
    streams = PostgresStreams(clean_pool, DOMAIN_CODEC)
    asset_id = await environment(streams, "env", name_lookups(clean_pool))
    template_id = await link(streams, name_lookups(clean_pool), asset_id, "t")
    await bump(streams, asset_id, "pt:1", name_lookups(clean_pool))
    fanout = runner(clean_pool)
    await catch_up(clean_pool, fanout)
    count = "SELECT count(*) FROM events WHERE type = 'template.linked_asset_updated.v1'"
    assert await clean_pool.fetchval(count) == 1
    await clean_pool.execute(
        "DELETE FROM consumer_checkpoints WHERE name = $1", fanout.checkpoint_name
    )
    await clean_pool.execute("TRUNCATE fanout_asset_versions")
    await catch_up(clean_pool, fanout)
    assert await clean_pool.fetchval(count) == 1
    state = templates.fold(
        (await PostgresStreams(clean_pool, DOMAIN_CODEC).load(template_id)).events
    )
    assert state is not None
    assert msgspec.structs.asdict(state.asset_versions[0])["version"] == 2


async def test_a_crash_between_two_batches_of_a_fan_out_writes_each_event_once(
    clean_pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,200 linking templates fan out in three append statements per update. A crash after the
    first leaves nothing (the batches, the asset versions and the checkpoint share one
    transaction); the
    restart, and a later replay from zero, write each template's event exactly once."""
    streams = PostgresStreams(clean_pool, DOMAIN_CODEC)
    asset_id = await environment(streams, "env", name_lookups(clean_pool))
    ids = []
    for start in range(0, 1200, 50):
        ids += await asyncio.gather(
            *(
                link(streams, name_lookups(clean_pool), asset_id, f"t{i}")
                for i in range(start, start + 50)
            )
        )
    await bump(streams, asset_id, "pt:1", name_lookups(clean_pool))
    await bump(streams, asset_id, "pt:2", name_lookups(clean_pool))
    fanout = runner(clean_pool, batch_size=1)  # one log event per transaction
    count = "SELECT count(*) FROM events WHERE type = 'template.linked_asset_updated.v1'"
    calls = 0
    real = PostgresStreams.append_each

    async def crash_on_the_second(self: PostgresStreams, *args: Any, **kw: Any) -> frozenset[UUID]:
        nonlocal calls
        calls += 1
        if calls == 2:  # the connection dies with the process: the transaction rolls back
            raise ConnectionResetError("the projector died between two batches")
        return await real(self, *args, **kw)

    monkeypatch.setattr(PostgresStreams, "append_each", crash_on_the_second)
    with pytest.raises(ConnectionResetError, match="between two batches"):
        await catch_up(clean_pool, fanout)
    assert await clean_pool.fetchval(count) == 0  # the first batch went with the crash
    monkeypatch.setattr(PostgresStreams, "append_each", real)
    await catch_up(clean_pool, fanout)
    assert await clean_pool.fetchval(count) == 2 * len(ids)
    assert set((await recorded_versions(clean_pool, ids)).values()) == {3}
    await clean_pool.execute(
        "DELETE FROM consumer_checkpoints WHERE name = $1", fanout.checkpoint_name
    )
    await clean_pool.execute("TRUNCATE fanout_asset_versions")
    await catch_up(clean_pool, fanout)  # a replay from zero
    assert await clean_pool.fetchval(count) == 2 * len(ids)


async def test_append_each_writes_the_streams_that_stayed_and_skips_the_rest(
    clean_pool: asyncpg.Pool,
) -> None:
    """One stream moved on since it was read, one already holds the event (a replay), one is
    being written by a user's transaction that commits while the statement waits on it: each
    takes nothing, and the fourth is written all the same."""
    store = PostgresStreams(clean_pool, CODEC)
    moved, replayed, contended, quiet = (uuid4() for _ in range(4))
    for stream in (moved, replayed, contended, quiet):
        await store.append(
            Append(stream, [CounterOpened(name="a")], expected_version=0, metadata=ACTOR)
        )
    await store.append(
        Append(moved, [CounterIncremented(by=1)], expected_version=1, metadata=ACTOR)
    )
    replayed_id = uuid4()  # its event went in as version 2 already
    await store.append(Append(
        replayed, [CounterIncremented(by=1)], expected_version=1, metadata=ACTOR,
        event_ids=[replayed_id],
    ))  # fmt: skip

    def one(stream: UUID, event_id: UUID | None = None, after: int = 1) -> OneAppend:
        return OneAppend(
            stream_id=stream,
            event=CounterIncremented(by=5),
            expected_version=after,
            event_id=event_id or uuid4(),
        )

    async with clean_pool.acquire() as user, clean_pool.acquire() as fanout:
        user_tx = user.transaction()
        await user_tx.start()
        await PostgresStreams(user, CODEC).append(
            Append(contended, [CounterIncremented(by=2)], expected_version=1, metadata=ACTOR)
        )
        async with fanout.transaction():
            appender = PostgresStreams(fanout, CODEC, notifier=store.notifier)
            writing = asyncio.create_task(
                appender.append_each(
                    [one(moved), one(replayed, replayed_id, after=2), one(contended), one(quiet)],
                    metadata=ACTOR,
                )
            )
            await asyncio.sleep(0.2)
            assert not writing.done()  # it waits for the user's uncommitted version 2
            await user_tx.commit()
            taken = await writing
            position = appender.take_last_position()
        assert taken == frozenset({quiet})
        assert position is not None
        assert appender.take_last_position() is None
    versions = {s: (await store.load(s)).version for s in (moved, replayed, contended, quiet)}
    assert versions == {moved: 2, replayed: 2, contended: 2, quiet: 2}


async def test_the_fan_out_wakes_the_log_s_readers_only_once_its_events_are_there(
    clean_pool: asyncpg.Pool,
) -> None:
    streams = PostgresStreams(clean_pool, DOMAIN_CODEC)
    env = await environment(streams, "env", name_lookups(clean_pool))
    template = await link(streams, name_lookups(clean_pool), env, "ddp")
    notifier = CommitNotifier(clean_pool, interval_s=0.05)
    fanout = FanoutRunner(
        clean_pool, DOMAIN_CODEC, ProjectorSettings(batch_size=50), notifier=notifier
    )
    await catch_up(clean_pool, fanout)
    await bump(streams, env, "pt:1", name_lookups(clean_pool))
    heard: asyncio.Queue[object] = asyncio.Queue()

    def hear(*args: object) -> None:
        heard.put_nowait(args)

    async with clean_pool.acquire() as listener, clean_pool.acquire() as blocker:
        await listener.add_listener(NOTIFY_CHANNEL, hear)
        await asyncio.sleep(0.3)  # the writes above have told the readers by now
        while not heard.empty():
            heard.get_nowait()
        # The fan-out's commit is held back: its checkpoint row is locked by another writer.
        holding = blocker.transaction()
        await holding.start()
        await blocker.execute(
            "SELECT FROM consumer_checkpoints WHERE name = $1 FOR UPDATE", fanout.checkpoint_name
        )
        notifier.claim()  # so its append carries no NOTIFY: a trailing one is due 0.1 s after
        stepping = asyncio.create_task(catch_up(clean_pool, fanout))
        await asyncio.sleep(0.5)
        woken_early = not heard.empty()  # nothing is there to read yet: no one may be woken
        await holding.rollback()
        await stepping
        await asyncio.sleep(0.5)
        woken_after = not heard.empty()
        await listener.remove_listener(NOTIFY_CHANNEL, hear)
    notifier.close()
    assert not woken_early, "the readers were woken before the fan-out's events were there"
    assert woken_after, "the readers were not woken once the fan-out's events were there"
    followed = await streams.load(template)
    assert followed.version == 2
