"""Clusters, departments and projects in Run:ai's shapes (docs/api/organization.md); reads show the
units the caller's grants reach, any other is a 404, so its existence does not leak. Also:
domain/org_units.py, services/org_units.py, projections/org_units.py."""

from typing import Final
from uuid import UUID

from litestar import delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from domain.commands import (
    CreateDepartment,
    RenameCluster,
    UpdateOrgUnit,
)
from domain.org_units import OrgUnitNotFoundError
from domain.values import ScopeKind, ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, creation_id, seen_scopes
from infra.http.lists import Count, FilterBy, Search
from infra.http.org_unit_actions import (
    chosen_units,
    counted_units,
    create_cluster_from,
    create_project_from,
    delete_from,
    visible_units,
)
from infra.http.org_unit_schemas import (
    ClusterCreationRequest,
    ClusterUpdateRequest,
    Department,
    DepartmentCreationRequest,
    DepartmentList,
    DisplayedCluster,
    OrgUnitUpdateRequest,
    Project,
    ProjectCreationRequest,
    ProjectList,
    cluster_wire,
    department_wire,
    project_from_row,
    totals,
)
from projections.org_units import Details, OrgUnitRow
from projections.queries import Reads
from projections.queries import org_unit_reads as queries
from services import org_units
from services.ports.event_store import EventStore


@post("/api/v1/clusters", status_code=201, tags=["Clusters"])
async def create_cluster(
    request: Caller,
    data: JSONBody[ClusterCreationRequest],
    adapters: NamedDependency[Adapters],
) -> DisplayedCluster:
    return await create_cluster_from(request, data, adapters.streams)


@get("/api/v1/clusters", tags=["Clusters"])
async def list_clusters(
    request: Caller,
    adapters: NamedDependency[Adapters],
) -> list[DisplayedCluster]:
    return [cluster_wire(u) for u in await visible_units(request, "cluster", adapters.reads)]


@get("/api/v1/clusters/{cluster_uuid:uuid}", tags=["Clusters"])
async def get_cluster(
    request: Caller,
    cluster_uuid: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> DisplayedCluster:
    return cluster_wire(await _one(request, "cluster", str(cluster_uuid), adapters.reads))


@put("/api/v1/clusters/{cluster_uuid:uuid}", status_code=204, tags=["Clusters"])
async def update_cluster(
    request: Caller,
    cluster_uuid: FromPath[UUID],
    data: JSONBody[ClusterUpdateRequest],
    adapters: NamedDependency[Adapters],
) -> None:
    command = RenameCluster(cluster_id=cluster_uuid, name=data.name, metadata=actor(request))
    await org_units.rename_cluster(command, streams=adapters.streams)


@delete("/api/v1/clusters/{cluster_uuid:uuid}", tags=["Clusters"])
async def delete_cluster(
    request: Caller,
    cluster_uuid: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> None:
    await delete_from(request, "cluster", str(cluster_uuid), adapters.streams)


@post("/api/v1/org-unit/departments", status_code=201, tags=["Departments"])
async def create_department(
    request: Caller,
    data: JSONBody[DepartmentCreationRequest],
    adapters: NamedDependency[Adapters],
) -> Department:
    creation, keyed = creation_id(request, "department")
    command = CreateDepartment(
        cluster_id=data.cluster_id,
        creation_id=creation,
        keyed=keyed,
        name=data.name,
        description=data.description,
        resources=data.resources,
        metadata=actor(request),
    )
    created = await org_units.create_department(command, streams=adapters.streams, ids=adapters.ids)
    written = created.stamps.created
    return Department(
        id=created.state,
        name=data.name,
        cluster_id=str(data.cluster_id),
        description=data.description,
        resources=data.resources,
        total_resources=totals(data.resources),
        created_at=written.at,
        updated_at=written.at,
        created_by=written.by,
        updated_by=written.by,
    )


@get("/api/v1/org-unit/departments", tags=["Departments"])
async def list_departments(
    request: Caller,
    adapters: NamedDependency[Adapters],
    filter_by: FilterBy = None,
) -> DepartmentList:
    """`filterBy` over name, clusterId, totalGpuQuota and createdAt (`name=^re`)."""
    units = await chosen_units(request, "department", adapters.reads, filter_by)
    return DepartmentList([department_wire(u) for u in units])


@get("/api/v1/org-unit/departments/count", tags=["Departments"])
async def count_departments(
    request: Caller,
    adapters: NamedDependency[Adapters],
    filter_by: FilterBy = None,
) -> Count:
    """How many departments the list shows for the same `filterBy`."""
    return Count(await counted_units(request, "department", adapters.reads, filter_by))


@get("/api/v1/org-unit/departments/{department_id:str}", tags=["Departments"])
async def get_department(
    request: Caller,
    department_id: FromPath[str],
    adapters: NamedDependency[Adapters],
) -> Department:
    return department_wire(await _one(request, "department", department_id, adapters.reads))


@put("/api/v1/org-unit/departments/{department_id:str}", tags=["Departments"])
async def update_department(
    request: Caller,
    department_id: FromPath[str],
    data: JSONBody[OrgUnitUpdateRequest],
    adapters: NamedDependency[Adapters],
) -> Department:
    unit = await _update(request, "department", department_id, data, adapters.streams)
    return department_wire(unit)


@delete("/api/v1/org-unit/departments/{department_id:str}", tags=["Departments"])
async def delete_department(
    request: Caller,
    department_id: FromPath[str],
    adapters: NamedDependency[Adapters],
) -> None:
    await delete_from(request, "department", department_id, adapters.streams)


@post("/api/v1/org-unit/projects", status_code=201, tags=["Projects"])
async def create_project(
    request: Caller,
    data: JSONBody[ProjectCreationRequest],
    adapters: NamedDependency[Adapters],
) -> Project:
    return await create_project_from(request, data, adapters)


@get("/api/v1/org-unit/projects", tags=["Projects"])
async def list_projects(
    request: Caller,
    adapters: NamedDependency[Adapters],
    filter_by: FilterBy = None,
    search: Search = None,
) -> ProjectList:
    """`filterBy` over name, clusterId, departmentId, parentId, parentName, phase,
    totalGpuQuota and createdAt; `search` finds a text in the name."""
    units = await chosen_units(request, "project", adapters.reads, filter_by, search)
    return ProjectList([project_from_row(u) for u in units])


@get("/api/v1/org-unit/projects/count", tags=["Projects"])
async def count_projects(
    request: Caller,
    adapters: NamedDependency[Adapters],
    filter_by: FilterBy = None,
    search: Search = None,
) -> Count:
    """How many projects the list shows for the same `filterBy` and `search`."""
    return Count(await counted_units(request, "project", adapters.reads, filter_by, search))


@get("/api/v1/org-unit/projects/{project_id:str}", tags=["Projects"])
async def get_project(
    request: Caller,
    project_id: FromPath[str],
    adapters: NamedDependency[Adapters],
) -> Project:
    return project_from_row(await _one(request, "project", project_id, adapters.reads))


@put("/api/v1/org-unit/projects/{project_id:str}", tags=["Projects"])
async def update_project(
    request: Caller,
    project_id: FromPath[str],
    data: JSONBody[OrgUnitUpdateRequest],
    adapters: NamedDependency[Adapters],
) -> Project:
    return project_from_row(await _update(request, "project", project_id, data, adapters.streams))


@delete("/api/v1/org-unit/projects/{project_id:str}", tags=["Projects"])
async def delete_project(
    request: Caller,
    project_id: FromPath[str],
    adapters: NamedDependency[Adapters],
) -> None:
    await delete_from(request, "project", project_id, adapters.streams)


ORG_UNIT_ROUTES: Final = (
    create_cluster,
    list_clusters,
    get_cluster,
    update_cluster,
    delete_cluster,
    create_department,
    list_departments,
    count_departments,
    get_department,
    update_department,
    delete_department,
    create_project,
    list_projects,
    count_projects,
    get_project,
    update_project,
    delete_project,
)


async def _one(request: Caller, kind: ScopeKind, unit_id: str, reads: Reads) -> OrgUnitRow:
    unit = await _find(request, kind, unit_id, reads)
    if unit is None:
        raise OrgUnitNotFoundError(kind, unit_id)
    return unit


async def _find(request: Caller, kind: ScopeKind, unit_id: str, reads: Reads) -> OrgUnitRow | None:
    """The unit if the caller may see it; None when it is unknown or out of the caller's
    sight (one answer for both, so existence does not leak)."""
    unit = await queries.one(reads, kind, unit_id)
    if unit is None or ScopeRef(kind, unit_id) not in await seen_scopes(request):
        return None
    return unit


async def _update(
    request: Caller,
    kind: ScopeKind,
    unit_id: str,
    data: OrgUnitUpdateRequest,
    streams: EventStore,
) -> OrgUnitRow:
    command = UpdateOrgUnit(
        scope=ScopeRef(kind, unit_id),
        description=data.description,
        resources=data.resources,
        metadata=actor(request),
    )
    updated = await org_units.update_org_unit(command, streams=streams)
    unit, created, changed = updated.state, updated.stamps.created, updated.stamps.updated
    return OrgUnitRow(
        kind=unit.kind,
        id=unit.id,
        name=unit.name,
        cluster_id=unit.cluster_id,
        department_id=unit.department_id,
        description=unit.description,
        details=Details(resources=unit.resources, requested_namespace=unit.requested_namespace),
        created_at=created.at,
        created_by=created.by,
        updated_at=changed.at,
        updated_by=changed.by,
    )
