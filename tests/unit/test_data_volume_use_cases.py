"""The data volume use cases against fakes of their ports: a data volume out of the actor's
sight is missing before a change's body is read."""

from uuid import UUID, uuid4

import pytest

from domain.assets import AssetNotFoundError
from domain.commands import (
    CreateCluster,
    CreateDataVolume,
    CreateDepartment,
    CreateProject,
    DeleteDataVolume,
)
from domain.events import ApplicationCreated, EventMetadata
from domain.values import Grant, ScopeKind
from services import data_volumes, org_units
from tests.fakes import InMemoryStreams

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


class Ids:
    """The IdSequence port: Run:ai's small integer ids."""

    def __init__(self) -> None:
        self.last = 0

    async def next_id(self) -> int:
        self.last += 1
        return self.last


async def tree(streams: InMemoryStreams) -> tuple[UUID, str, str, str]:
    """A cluster, a department in it and two projects in that: their ids."""
    ids, cluster = Ids(), uuid4()
    await org_units.create_cluster(
        CreateCluster(cluster_id=cluster, name="east", metadata=SYSTEM), streams=streams
    )
    department = await org_units.create_department(
        CreateDepartment(cluster_id=cluster, name="ml", metadata=SYSTEM), streams=streams, ids=ids
    )
    projects = [
        await org_units.create_project(
            CreateProject(
                cluster_id=cluster, department_id=department.state, name=name, metadata=SYSTEM
            ),
            streams=streams,
            ids=ids,
        )
        for name in ("llm", "vision")
    ]
    return cluster, department.state, projects[0].state, projects[1].state


async def viewer_of(streams: InMemoryStreams, kind: ScopeKind, scope_id: str) -> EventMetadata:
    """An application that may see the things of one scope."""
    application_id = uuid4()
    grant = Grant(role="viewer", scope_kind=kind, scope_id=scope_id)
    created = ApplicationCreated(
        application_id=application_id, name="reader", client_id="reader", grants=(grant,)
    )
    await streams.append(application_id, [created], expected_version=0, metadata=SYSTEM)
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
