"""The org-unit use cases against fakes of their ports: a unit's name is unique under its
parent, and a unit that still holds units or things is not deleted."""

from uuid import UUID, uuid4

import msgspec
import pytest

from domain.commands import (
    CreateAsset,
    CreateCluster,
    CreateDepartment,
    CreateProject,
    DeleteOrgUnit,
    UpdateOrgUnit,
)
from domain.events import EventMetadata
from domain.org_units import OrgUnitNotEmptyError, UnknownScopeError, stream_of
from domain.specs import EnvironmentSpec
from domain.values import ScopeRef
from services import assets, org_units
from services.errors import IdempotencyKeyReusedError, NameTakenError
from tests.fakes import Ids, InMemoryStreams

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


async def test_units_nest_their_names_are_unique_under_a_parent_and_a_holder_is_not_deleted() -> (
    None
):
    streams, ids = InMemoryStreams(), Ids()
    cluster = uuid4()
    await org_units.create_cluster(
        CreateCluster(cluster_id=cluster, name="east", metadata=SYSTEM), streams=streams
    )
    department = await org_units.create_department(
        CreateDepartment(cluster_id=cluster, name="ml", metadata=SYSTEM), streams=streams, ids=ids
    )
    project = await org_units.create_project(
        CreateProject(
            cluster_id=cluster, department_id=department.state, name="llm", metadata=SYSTEM
        ),
        streams=streams,
        ids=ids,
    )
    with pytest.raises(NameTakenError):
        await org_units.create_department(
            CreateDepartment(cluster_id=cluster, name="ml", metadata=SYSTEM),
            streams=streams,
            ids=ids,
        )
    in_project = ScopeRef("project", project.state)
    env = CreateAsset(
        asset_id=uuid4(),
        scope=in_project,
        name="pt",
        spec=EnvironmentSpec(image="pt"),
        metadata=SYSTEM,
    )
    await assets.create_asset(env, streams=streams, names=streams.lookups)

    ml = ScopeRef("department", department.state)
    with pytest.raises(OrgUnitNotEmptyError, match="project llm"):
        await org_units.delete_org_unit(DeleteOrgUnit(scope=ml, metadata=SYSTEM), streams=streams)
    with pytest.raises(OrgUnitNotEmptyError, match="environment pt"):
        await org_units.delete_org_unit(
            DeleteOrgUnit(scope=in_project, metadata=SYSTEM), streams=streams
        )

    updated = await org_units.update_org_unit(
        UpdateOrgUnit(scope=ml, description="the ML department", resources=(), metadata=SYSTEM),
        streams=streams,
    )
    assert updated.state.description == "the ML department"
    assert updated.stamps.created == department.stamps.created


async def test_a_unit_under_a_parent_that_is_not_there_is_refused_naming_the_field() -> None:
    streams = InMemoryStreams()
    with pytest.raises(UnknownScopeError) as refused:
        await org_units.create_department(
            CreateDepartment(cluster_id=uuid4(), name="ml", metadata=SYSTEM),
            streams=streams,
            ids=Ids(),
        )
    assert refused.value.field == "/clusterId"
    assert streams.names == {}


async def test_a_project_created_again_under_its_key_is_the_first_and_another_body_is_refused() -> (
    None
):
    streams, ids = InMemoryStreams(), Ids()
    cluster, key = uuid4(), uuid4()
    await org_units.create_cluster(
        CreateCluster(cluster_id=cluster, name="east", metadata=SYSTEM), streams=streams
    )
    command = CreateProject(
        cluster_id=cluster,
        department_id=None,
        name="llm",
        creation_id=key,
        keyed=True,
        metadata=SYSTEM,
    )
    first = await org_units.create_project(command, streams=streams, ids=ids)
    again = await org_units.create_project(command, streams=streams, ids=ids)
    assert again.state == first.state
    assert again.stamps == first.stamps
    stream = await streams.load(org_units_stream(first.state))
    assert stream.version == 1
    with pytest.raises(IdempotencyKeyReusedError):
        await org_units.create_project(
            msgspec.structs.replace(command, description="other"), streams=streams, ids=ids
        )


def org_units_stream(project_id: str) -> UUID:
    return stream_of(ScopeRef("project", project_id))


async def test_a_keyed_create_refused_before_it_is_decided_is_issued_no_number() -> None:
    streams, ids = InMemoryStreams(), Ids()
    cluster, key = uuid4(), uuid4()
    command = CreateDepartment(
        cluster_id=cluster, name="ml", creation_id=key, keyed=True, metadata=SYSTEM
    )
    with pytest.raises(UnknownScopeError):  # (the cluster is not there yet)
        await org_units.create_department(command, streams=streams, ids=ids)
    assert (await ids.issued(key), ids.last) == (None, 0)
    await org_units.create_cluster(
        CreateCluster(cluster_id=cluster, name="east", metadata=SYSTEM), streams=streams
    )
    made = await org_units.create_department(command, streams=streams, ids=ids)
    assert (made.state, await ids.issued(key)) == ("1", 1)
    again = await org_units.create_department(command, streams=streams, ids=ids)
    assert again == made
