"""The asset use cases against fakes of their ports: a create under an Idempotency-Key happens
once, an update renames and re-specs under the name rule, and nothing is written for a refusal
or for an update that changes nothing."""

from collections import Counter
from uuid import UUID, uuid4

import msgspec
import pytest

from domain.assets import AssetNotFoundError
from domain.commands import CreateAsset, DeleteAsset, UpdateAsset
from domain.events import ApplicationCreated, EventMetadata
from domain.specs import EnvironmentSpec
from domain.values import Grant, ScopeRef
from services import assets
from services.errors import IdempotencyKeyReusedError, NameTakenError
from services.idempotency import creation_id, request_digest
from services.ports.event_store import Append, Stream
from services.prefetch import prefetch
from tests.fakes import InMemoryStreams

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")
OTHER = EventMetadata(actor_subject="someone-else", actor_kind="application", request_id="r-2")


def creating(name: str, image: str = "pt:1", key: str | None = None) -> CreateAsset:
    asset_id, keyed = creation_id("someone", "environment", key)
    return CreateAsset(
        asset_id=asset_id,
        keyed=keyed,
        scope=ScopeRef("tenant"),
        name=name,
        spec=EnvironmentSpec(image=image),
        metadata=SYSTEM,
    )


async def test_a_create_under_a_key_happens_once_and_the_key_names_that_request_only() -> None:
    streams = InMemoryStreams()
    first = await assets.create_asset(
        creating("pt", key="k-1"), streams=streams, names=streams.lookups
    )
    again = await assets.create_asset(
        creating("pt", key="k-1"), streams=streams, names=streams.lookups
    )
    assert again == first
    assert (await streams.load(first.state.id)).version == 1
    with pytest.raises(IdempotencyKeyReusedError):
        await assets.create_asset(
            creating("pt", image="pt:2", key="k-1"), streams=streams, names=streams.lookups
        )
    other = await assets.create_asset(
        creating("pt-2", key="k-2"), streams=streams, names=streams.lookups
    )
    assert other.state.id != first.state.id


async def test_an_update_keeps_names_unique_and_writes_nothing_when_nothing_changes() -> None:
    streams = InMemoryStreams()
    pt = (await assets.create_asset(creating("pt"), streams=streams, names=streams.lookups)).state
    await assets.create_asset(creating("taken"), streams=streams, names=streams.lookups)

    def update(name: str, image: str) -> UpdateAsset:
        spec = EnvironmentSpec(image=image)
        return UpdateAsset(asset_id=pt.id, name=name, spec=spec, metadata=SYSTEM)

    with pytest.raises(NameTakenError):
        await assets.update_asset(update("taken", "pt:1"), streams=streams, names=streams.lookups)
    unchanged = await assets.update_asset(
        update("pt", "pt:1"), streams=streams, names=streams.lookups
    )
    assert unchanged.state.version == 1
    assert (await streams.load(pt.id)).version == 1
    changed = await assets.update_asset(
        update("pt-renamed", "pt:2"), streams=streams, names=streams.lookups
    )
    assert (changed.state.meta.name, changed.state.version) == ("pt-renamed", 2)
    assert changed.stamps.created == unchanged.stamps.created
    await assets.create_asset(
        creating("pt"), streams=streams, names=streams.lookups
    )  # the old name is free again


async def test_an_asset_out_of_sight_of_another_kind_or_deleted_is_missing() -> None:
    streams = InMemoryStreams()
    pt = (await assets.create_asset(creating("pt"), streams=streams, names=streams.lookups)).state
    await assets.require_visible("environment", pt.id, SYSTEM, streams)
    application_id = uuid4()
    nobody = ApplicationCreated(
        application_id=application_id, name="nobody", client_id="nobody", grants=()
    )
    await streams.append(Append(application_id, [nobody], expected_version=0, metadata=SYSTEM))
    stranger = EventMetadata(actor_subject=str(application_id), actor_kind="application")
    deletion = DeleteAsset(asset_id=pt.id, kind="environment", metadata=SYSTEM)
    for kind, actor in [("environment", stranger), ("compute", SYSTEM)]:
        with pytest.raises(AssetNotFoundError):
            await assets.require_visible(kind, pt.id, actor, streams)
    await assets.delete_asset(deletion, streams=streams)
    with pytest.raises(AssetNotFoundError):
        await assets.require_visible("environment", pt.id, SYSTEM, streams)


async def test_a_keyed_creation_carries_its_request_digest_and_a_retry_is_told_by_it() -> None:
    streams = InMemoryStreams()
    first = await assets.create_asset(
        creating("pt", key="k-1"), streams=streams, names=streams.lookups
    )
    assert streams.metadata[-1].request_digest == request_digest(creating("pt", key="k-1"))
    # The same request from another actor's metadata digests the same: who asked is no part of it.
    assert request_digest(creating("pt", key="k-1")) == request_digest(
        msgspec.structs.replace(creating("pt", key="k-1"), metadata=OTHER)
    )
    again = await assets.create_asset(
        creating("pt", key="k-1"), streams=streams, names=streams.lookups
    )
    assert again == first
    with pytest.raises(IdempotencyKeyReusedError):
        await assets.create_asset(
            creating("pt", image="pt:2", key="k-1"), streams=streams, names=streams.lookups
        )


async def test_a_stream_created_before_requests_were_digested_is_compared_by_its_events() -> None:
    streams = InMemoryStreams()
    command = creating("pt", key="k-1")
    made = await assets.create_asset(
        msgspec.structs.replace(command, keyed=False), streams=streams, names=streams.lookups
    )
    assert streams.metadata[-1].request_digest is None
    again = await assets.create_asset(command, streams=streams, names=streams.lookups)
    assert again.state == made.state
    assert (await streams.load(made.state.id)).version == 1
    with pytest.raises(IdempotencyKeyReusedError):
        await assets.create_asset(
            creating("pt", image="pt:2", key="k-1"), streams=streams, names=streams.lookups
        )


class CountedStreams(InMemoryStreams):
    """The store, counting how often each stream is read from it."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[UUID] = Counter()

    async def load(self, stream_id: UUID) -> Stream:
        self.reads[stream_id] += 1
        return await super().load(stream_id)


async def test_an_update_decides_on_what_its_guard_read_and_again_if_that_moved() -> None:
    """A PUT's guard reads the asset's stream and the caller's roles together to check the asset
    is visible (infra/http/callers.py `guarded`); the update decides on those reads instead of
    reading both again; its append still finds the asset moved by a write in between, and the
    update is then decided again on the stream as it is."""
    streams = CountedStreams()
    pt = (await assets.create_asset(creating("pt"), streams=streams, names=streams.lookups)).state
    application_id = uuid4()
    editor_of_tenant = Grant(role="editor", scope_kind="tenant", scope_id="tenant")
    application = ApplicationCreated(
        application_id=application_id, name="ci", client_id="ci", grants=(editor_of_tenant,)
    )
    await streams.append(Append(application_id, [application], expected_version=0, metadata=SYSTEM))
    editor = EventMetadata(actor_subject=str(application_id), actor_kind="application")

    def update(image: str) -> UpdateAsset:
        spec = EnvironmentSpec(image=image)
        return UpdateAsset(asset_id=pt.id, name="pt", spec=spec, metadata=editor)

    streams.reads.clear()
    reads = await prefetch(streams, [pt.id, application_id])
    await assets.require_visible("environment", pt.id, editor, reads)
    changed = await assets.update_asset(
        update("pt:2"), streams=streams, names=streams.lookups, reads=reads
    )
    assert changed.state.version == 2
    assert (streams.reads[pt.id], streams.reads[application_id]) == (1, 1)

    reads = await prefetch(streams, [pt.id, application_id])
    await assets.require_visible("environment", pt.id, editor, reads)
    await assets.update_asset(
        update("pt:3"), streams=streams, names=streams.lookups
    )  # another request, in between
    streams.reads.clear()
    changed = await assets.update_asset(
        update("pt:4"), streams=streams, names=streams.lookups, reads=reads
    )
    assert changed.state.version == 4  # refused on what the guard read, decided again on what is
    assert streams.reads[pt.id] == 1
