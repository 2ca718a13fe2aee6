"""The linked-asset fan-out (services/fanout.py) and the rule it applies
(domain/templates.follow_asset), against fakes of the fan-out's ports."""

from datetime import UTC, datetime
from uuid import UUID, uuid4

import pytest

from domain import templates
from domain.events import (
    AssetVersion,
    EnvironmentCreated,
    EnvironmentUpdated,
    Event,
    EventMetadata,
    RecordedEvent,
    TemplateEvent,
    TemplateLinkedAssetUpdated,
)
from domain.specs import EnvironmentSpec
from domain.template_specs import DistributedTemplateSpec, TemplateAssets
from domain.templates import TemplateBody
from domain.values import AssetMeta, TemplateMeta
from services import fanout
from services.errors import VersionConflictError
from services.ports.event_store import Append
from tests.fakes import InMemoryBatchAppender, InMemoryLinkIndex, InMemoryStreams

USER = EventMetadata(actor_subject="alice", actor_kind="user")


class World:
    """An environment, templates that link it, and the fan-out's ports."""

    def __init__(self) -> None:
        self.store = InMemoryStreams()
        self.appender = InMemoryBatchAppender(self.store)
        self.index = InMemoryLinkIndex()
        self.asset_id = uuid4()
        self.asset_version = 0

    async def asset_event(self, event: Event) -> RecordedEvent:
        self.asset_version += 1
        await self.store.append(
            Append(self.asset_id, [event], expected_version=self.asset_version - 1, metadata=USER)
        )
        return recorded(self.asset_id, self.asset_version, event)

    async def created(self) -> RecordedEvent:
        spec = EnvironmentSpec(image="pt:0")
        return await self.asset_event(
            EnvironmentCreated(
                asset_id=self.asset_id, meta=AssetMeta(name="env", scope="tenant"), spec=spec
            )
        )

    async def updated(self, image: str) -> RecordedEvent:
        spec = EnvironmentSpec(image=image)
        return await self.asset_event(
            EnvironmentUpdated(asset_id=self.asset_id, name="env", spec=spec)
        )

    async def template(self, name: str, *, links: bool = True) -> RecordedEvent:
        """A template written against the asset's version as it is now."""
        template_id = uuid4()
        body = TemplateBody(
            spec=DistributedTemplateSpec(distributed_framework="PyTorch", num_workers=2),
            assets=TemplateAssets(environment=self.asset_id) if links else None,
        )
        versions = (
            (AssetVersion(asset_id=self.asset_id, version=self.asset_version),) if links else ()
        )
        [event] = templates.create(
            None, template_id, TemplateMeta(name=name, scope="tenant"), body, versions
        )
        await self.store.append(Append(template_id, [event], expected_version=0, metadata=USER))
        if links:  # as the template's append records its uses
            self.index.users.setdefault(self.asset_id, set()).add(template_id)
        return recorded(template_id, 1, event)

    async def recorded_version(self, template_id: UUID) -> int:
        state = templates.fold((await self.store.load(template_id)).events)
        assert state is not None
        return next(v.version for v in state.asset_versions if v.asset_id == self.asset_id)

    async def handle(self, event: RecordedEvent, followed: fanout.Followed | None = None) -> int:
        return await fanout.handle(event, index=self.index, store=self.appender, followed=followed)

    async def committed(self, event: RecordedEvent, followed: fanout.Followed) -> int:
        """Handle the event in a batch of its own that commits, as the runner does."""
        followed.begin()
        appended = await self.handle(event, followed)
        followed.commit()
        return appended


def recorded(stream_id: UUID, version: int, event: Event) -> RecordedEvent:
    return RecordedEvent(
        position=0,
        event_id=uuid4(),
        stream_type="test",
        stream_id=stream_id,
        version=version,
        recorded_at=datetime.now(UTC),
        metadata=USER,
        event=event,
    )


async def test_an_update_moves_every_linking_template_on_once() -> None:
    world = World()
    await world.handle(await world.created())
    linking = [(await world.template(f"t{i}")).stream_id for i in range(3)]
    await world.template("loose", links=False)
    update = await world.updated("pt:1")
    assert await world.handle(update) == 3
    assert [await world.recorded_version(t) for t in linking] == [2, 2, 2]
    assert sorted(world.appender.appended) == sorted(linking)
    assert await world.handle(update) == 0  # the same event again (a replay): nothing more
    assert len(world.appender.appended) == 3


async def test_a_template_written_against_an_older_version_catches_up_when_it_is_read() -> None:
    """The template's event comes after the update in the log, but was written against the
    version before it: its own event does the catching up."""
    world = World()
    await world.handle(await world.created())
    late = await world.template("late")  # written against version 1
    world.index.users.clear()  # not yet among the asset's users when the update is read
    assert await world.handle(await world.updated("pt:1")) == 0
    assert await world.handle(late) == 1
    assert await world.recorded_version(late.stream_id) == 2
    assert await world.handle(late) == 0


async def test_a_template_written_against_the_latest_version_is_left_alone() -> None:
    world = World()
    await world.handle(await world.created())
    await world.handle(await world.updated("pt:1"))
    current = await world.template("current")
    assert await world.handle(current) == 0
    assert world.appender.appended == []


async def test_a_template_a_user_edits_meanwhile_is_read_again_alone() -> None:
    world = World()
    await world.handle(await world.created())
    ids = [(await world.template(f"t{i}")).stream_id for i in range(4)]
    edited = ids[2]
    edits = 0

    async def a_user_renames_it() -> None:
        nonlocal edits
        if edits == 0:
            edits += 1
            stream = await world.store.load(edited)
            state = templates.fold(stream.events)
            assert state is not None
            events = templates.update(
                state,
                edited,
                name="renamed",
                description=None,
                body=state.body,
                asset_versions=state.asset_versions,
            )
            await world.store.append(
                Append(edited, events, expected_version=stream.version, metadata=USER)
            )

    world.appender.before_append = a_user_renames_it
    assert await world.handle(await world.updated("pt:1")) == 4
    assert [await world.recorded_version(t) for t in ids] == [2, 2, 2, 2]
    # Each template took one event: the edited one on the second try, the others on the first.
    assert sorted(world.appender.appended) == sorted(ids)
    assert world.appender.appended[-1] == edited
    state = templates.fold((await world.store.load(edited)).events)
    assert state is not None
    assert state.meta.name == "renamed"


async def test_a_template_that_keeps_moving_gives_up_the_batch() -> None:
    world = World()
    await world.handle(await world.created())
    busy = (await world.template("busy")).stream_id

    async def always_edited() -> None:
        stream = await world.store.load(busy)
        await world.store.append(
            Append(
                busy,
                [TemplateLinkedAssetUpdated(template_id=busy, asset_id=uuid4(), asset_version=1)],
                expected_version=stream.version,
                metadata=USER,
            )
        )

    world.appender.before_append = always_edited
    with pytest.raises(VersionConflictError):
        await world.handle(await world.updated("pt:1"))


async def test_a_deleted_or_unlinked_template_does_not_follow() -> None:
    world = World()
    await world.handle(await world.created())
    gone = (await world.template("gone")).stream_id
    state = templates.fold((await world.store.load(gone)).events)
    await world.store.append(
        Append(gone, templates.delete(state, gone), expected_version=1, metadata=USER)
    )
    assert await world.handle(await world.updated("pt:1")) == 0


async def test_each_update_reads_only_what_the_templates_took_since_the_last() -> None:
    world = World()
    followed = fanout.Followed()
    await world.committed(await world.created(), followed)
    ids = [(await world.template(f"t{i}")).stream_id for i in range(3)]
    for n in range(1, 4):
        assert await world.committed(await world.updated(f"pt:{n}"), followed) == 3
    # The first update read each template whole; each one after, from what it folded then
    # (the template's own event of the update before is what it reads).
    assert [set(read.values()) for read in world.appender.read_after] == [{0}, {1}, {2}]
    assert [await world.recorded_version(t) for t in ids] == [4, 4, 4]


async def test_what_a_batch_that_did_not_commit_folded_is_not_kept() -> None:
    world = World()
    followed = fanout.Followed()
    await world.committed(await world.created(), followed)
    template_id = (await world.template("t")).stream_id
    await world.committed(await world.updated("pt:1"), followed)  # folded at version 1
    followed.begin()
    assert await world.handle(await world.updated("pt:2"), followed) == 1  # never committed
    await world.committed(await world.updated("pt:3"), followed)
    assert world.appender.read_after[-1] == {template_id: 1}  # not from the batch's fold at 2
    assert await world.recorded_version(template_id) == 4


async def test_a_template_deleted_since_it_was_folded_does_not_follow() -> None:
    world = World()
    followed = fanout.Followed()
    await world.committed(await world.created(), followed)
    gone = (await world.template("gone")).stream_id
    await world.committed(await world.updated("pt:1"), followed)
    stream = await world.store.load(gone)
    state = templates.fold(stream.events)
    deletion = templates.delete(state, gone)
    await world.store.append(Append(gone, deletion, expected_version=stream.version, metadata=USER))
    assert await world.committed(await world.updated("pt:2"), followed) == 0
    assert world.appender.read_after[-1] == {gone: 1}


def linking(asset_id: UUID, template_id: UUID, version: int) -> list[TemplateEvent]:
    """The creation of a template linking the asset at `version`."""
    body = TemplateBody(
        spec=DistributedTemplateSpec(distributed_framework="PyTorch", num_workers=1),
        assets=TemplateAssets(environment=asset_id),
    )
    meta = TemplateMeta(name="t", scope="tenant")
    return templates.create(
        None, template_id, meta, body, (AssetVersion(asset_id=asset_id, version=version),)
    )


def test_a_fold_resumed_from_a_fold_of_the_start_is_the_fold_of_the_whole() -> None:
    asset_id, template_id = uuid4(), uuid4()
    created = linking(asset_id, template_id, 1)
    followed = [
        TemplateLinkedAssetUpdated(template_id=template_id, asset_id=asset_id, asset_version=n)
        for n in range(2, 6)
    ]
    whole = [*created, *followed]
    for cut in range(len(whole) + 1):
        resumed = templates.fold_on(templates.fold(whole[:cut]), whole[cut:])
        assert resumed == templates.fold(whole)
    assert templates.fold_on(None, []) is None


def test_follow_asset_moves_only_forward_and_only_a_live_linking_template() -> None:
    asset_id, template_id = uuid4(), uuid4()
    state = templates.fold(linking(asset_id, template_id, 2))
    assert templates.follow_asset(state, template_id, asset_id, 3) == [
        TemplateLinkedAssetUpdated(template_id=template_id, asset_id=asset_id, asset_version=3)
    ]
    assert templates.follow_asset(state, template_id, asset_id, 2) == []
    assert templates.follow_asset(state, template_id, asset_id, 1) == []
    assert templates.follow_asset(state, template_id, uuid4(), 9) == []  # not linked
    assert templates.follow_asset(None, template_id, asset_id, 3) == []
    deleted = templates.fold(
        [*linking(asset_id, template_id, 2), *templates.delete(state, template_id)]
    )
    assert templates.follow_asset(deleted, template_id, asset_id, 3) == []
