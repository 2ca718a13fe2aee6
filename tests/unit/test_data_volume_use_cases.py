"""The data volume use cases against fakes of their ports: a data volume out of the actor's
sight is missing before a change's body is read, a share answers each scope with the stamps of
the event that shared it, a unit too new for the read model is named from its stream, and a
name's availability is asked of the cluster's names, within the asker's sight."""

from uuid import UUID, uuid4

import pytest

from domain.assets import AssetNotFoundError
from domain.commands import (
    CreateDataVolume,
    DeleteDataVolume,
    ShareDataVolume,
)
from domain.events import ApplicationCreated, EventMetadata
from domain.org_units import UnknownScopeError
from domain.specs import SharedScope
from domain.values import Grant, ScopeKind, ScopeRef
from services import data_volumes, org_units
from services.errors import NameTakenError
from services.ports.event_store import Append
from tests.fakes import InMemoryStreams
from tests.unit.org_tree import tree

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


async def viewer_of(streams: InMemoryStreams, kind: ScopeKind, scope_id: str) -> EventMetadata:
    """An application that may see the things of one scope."""
    application_id = uuid4()
    grant = Grant(role="viewer", scope_kind=kind, scope_id=scope_id)
    created = ApplicationCreated(
        application_id=application_id, name="reader", client_id="reader", grants=(grant,)
    )
    await streams.append(Append(application_id, [created], expected_version=0, metadata=SYSTEM))
    return EventMetadata(actor_subject=str(application_id), actor_kind="application")


async def volume(streams: InMemoryStreams, project: str) -> UUID:
    command = CreateDataVolume(
        datavolume_id=uuid4(),
        project_id=project,
        name="corpus",
        origin_pvc_name="pvc-a",
        metadata=SYSTEM,
    )
    return (await data_volumes.create_data_volume(command, streams=streams)).state.id


async def test_a_data_volume_out_of_sight_or_not_there_is_missing() -> None:
    streams = InMemoryStreams()
    cluster, _, llm, vision = await tree(streams)
    found = await volume(streams, llm)
    await data_volumes.require_visible(found, await viewer_of(streams, "project", llm), streams)
    stranger = await viewer_of(streams, "project", vision)
    for actor, datavolume_id in [
        (stranger, found),  # out of its sight
        (SYSTEM, uuid4()),  # nothing there
        (SYSTEM, cluster),  # another kind's stream
    ]:
        with pytest.raises(AssetNotFoundError):
            await data_volumes.require_visible(datavolume_id, actor, streams)
    deletion = DeleteDataVolume(datavolume_id=found, metadata=SYSTEM)
    await data_volumes.delete_data_volume(deletion, streams=streams)
    with pytest.raises(AssetNotFoundError):
        await data_volumes.require_visible(found, SYSTEM, streams)


async def test_a_share_answers_each_scope_with_the_stamps_of_the_event_that_shared_it() -> None:
    streams = InMemoryStreams()
    cluster, department, llm, _ = await tree(streams)
    found = await volume(streams, llm)
    in_department = SharedScope(scope_type="department", scope_id=department)
    in_cluster = SharedScope(scope_type="cluster", scope_id=str(cluster))

    def sharing(*add: SharedScope) -> ShareDataVolume:
        return ShareDataVolume(datavolume_id=found, add=add, metadata=SYSTEM)

    (first,) = await data_volumes.share_data_volume(sharing(in_department), streams=streams)
    shared = await data_volumes.share_data_volume(
        sharing(in_department, in_cluster), streams=streams
    )
    written = (await streams.load(found)).written
    assert first == (in_department, written[1])
    assert shared == ((in_department, written[1]), (in_cluster, written[2]))
    assert written[1].by == SYSTEM.actor_subject
    # Sharing again what is shared writes nothing and answers the same.
    assert await data_volumes.share_data_volume(sharing(in_cluster), streams=streams) == shared
    assert (await streams.load(found)).version == 3


async def test_an_org_unit_is_named_from_its_own_stream() -> None:
    streams = InMemoryStreams()
    cluster, department, llm, _ = await tree(streams)
    assert await org_units.unit_name(ScopeRef("project", llm), streams=streams) == "llm"
    assert await org_units.unit_name(ScopeRef("department", department), streams=streams) == "ml"
    assert await org_units.unit_name(ScopeRef("cluster", str(cluster)), streams=streams) == "east"
    assert await org_units.unit_name(ScopeRef("project", "404"), streams=streams) == ""


async def test_a_name_is_available_unless_a_data_volume_of_the_cluster_holds_it() -> None:
    streams = InMemoryStreams()
    cluster, _, llm, _ = await tree(streams)
    await volume(streams, llm)  # "corpus"
    check = data_volumes.check_name_available
    await check(cluster, "other", SYSTEM, streams=streams, holder=streams.holder)
    with pytest.raises(NameTakenError) as taken:
        await check(cluster, "corpus", SYSTEM, streams=streams, holder=streams.holder)
    assert taken.value.field == "/dataName"
    stranger = await viewer_of(streams, "cluster", str(uuid4()))
    for cluster_id in (cluster, uuid4()):  # out of its sight, or not there: both unknown
        with pytest.raises(UnknownScopeError) as unknown:
            await check(cluster_id, "corpus", stranger, streams=streams, holder=streams.holder)
        assert unknown.value.field == "/clusterId"
