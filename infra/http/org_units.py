"""Clusters, departments and projects in Run:ai's shapes (`/api/v1/clusters`,
`/api/v1/org-unit/departments`, `/api/v1/org-unit/projects`).

Writes go through the use cases; reads come from the org_units read model and show only the units
the caller's grants reach (at, above or below a granted scope). A unit the caller cannot see is a
404, so its existence does not leak.
"""

from datetime import UTC, datetime
from typing import Final
from uuid import UUID, uuid4

import msgspec
from litestar import delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from domain import access as access_rules
from domain.commands import (
    CreateCluster,
    CreateDepartment,
    CreateProject,
    DeleteOrgUnit,
    RenameCluster,
    UpdateOrgUnit,
)
from domain.org_units import OrgUnitNotFoundError
from domain.values import NodePoolResources, ScopeKind, ScopeRef
from infra.bootstrap import Resources
from infra.http.callers import Caller, actor
from projections import org_units as read_model
from projections.org_units import OrgUnitRow
from services import access, org_units
from services.ports import IdSequence, NamedStreams, OrgTree

TENANT_ID: Final = 1  # one tenant per service


class RequestBody(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Unknown keys are accepted and ignored: Run:ai's clients send fields (scheduling rules,
    node types, ...) this service does not keep."""


class ClusterCreationRequest(RequestBody, frozen=True, kw_only=True):
    name: str
    domain: str | None = None
    version: str | None = None


class ClusterUpdateRequest(RequestBody, frozen=True, kw_only=True):
    name: str


class DepartmentCreationRequest(RequestBody, frozen=True, kw_only=True):
    name: str
    cluster_id: UUID
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()


class OrgUnitUpdateRequest(RequestBody, frozen=True, kw_only=True):
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()


class ProjectCreationRequest(RequestBody, frozen=True, kw_only=True):
    name: str
    cluster_id: UUID
    parent_id: str | None = None
    description: str = ""
    requested_namespace: str | None = None
    resources: tuple[NodePoolResources, ...] = ()


class DisplayedCluster(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    uuid: str
    tenant_id: int
    name: str
    created_at: datetime
    domain: str | None = None
    version: str | None = None


class TotalResources(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    gpu_quota: float | None
    cpu_quota: float | None
    memory_quota: float | None


class Department(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    id: str
    name: str
    cluster_id: str
    description: str
    resources: tuple[NodePoolResources, ...]
    total_resources: TotalResources
    created_at: datetime
    updated_at: datetime
    created_by: str
    updated_by: str


class ProjectStatus(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    namespace: str | None
    phase: str


class Project(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    id: str
    name: str
    cluster_id: str
    parent_id: str
    description: str
    requested_namespace: str | None
    enforce_runai_scheduler: bool
    resources: tuple[NodePoolResources, ...]
    total_resources: TotalResources
    effective: dict[str, object]
    status: ProjectStatus
    created_at: datetime
    updated_at: datetime
    created_by: str
    updated_by: str


class DepartmentList(msgspec.Struct, frozen=True):
    departments: list[Department]


class ProjectList(msgspec.Struct, frozen=True):
    projects: list[Project]


@post("/api/v1/clusters", status_code=201, tags=["Clusters"])
async def create_cluster(
    request: Caller, data: JSONBody[ClusterCreationRequest], streams: NamedDependency[NamedStreams]
) -> DisplayedCluster:
    command = CreateCluster(
        cluster_id=uuid4(),
        name=data.name,
        domain=data.domain,
        version=data.version,
        metadata=actor(request),
    )
    await org_units.create_cluster(command, streams=streams)
    return DisplayedCluster(
        uuid=str(command.cluster_id),
        tenant_id=TENANT_ID,
        name=data.name,
        created_at=datetime.now(UTC),
        domain=data.domain,
        version=data.version,
    )


@get("/api/v1/clusters", tags=["Clusters"])
async def list_clusters(
    request: Caller, streams: NamedDependency[NamedStreams], resources: NamedDependency[Resources]
) -> list[DisplayedCluster]:
    return [_cluster(u) for u in await _visible(request, "cluster", streams, resources)]


@get("/api/v1/clusters/{cluster_uuid:uuid}", tags=["Clusters"])
async def get_cluster(
    request: Caller,
    cluster_uuid: FromPath[UUID],
    streams: NamedDependency[NamedStreams],
    resources: NamedDependency[Resources],
) -> DisplayedCluster:
    return _cluster(await _one(request, "cluster", str(cluster_uuid), streams, resources))


@put("/api/v1/clusters/{cluster_uuid:uuid}", status_code=204, tags=["Clusters"])
async def update_cluster(
    request: Caller,
    cluster_uuid: FromPath[UUID],
    data: JSONBody[ClusterUpdateRequest],
    streams: NamedDependency[NamedStreams],
) -> None:
    command = RenameCluster(cluster_id=cluster_uuid, name=data.name, metadata=actor(request))
    await org_units.rename_cluster(command, streams=streams)


@delete("/api/v1/clusters/{cluster_uuid:uuid}", tags=["Clusters"])
async def delete_cluster(
    request: Caller,
    cluster_uuid: FromPath[UUID],
    streams: NamedDependency[NamedStreams],
    tree: NamedDependency[OrgTree],
) -> None:
    command = DeleteOrgUnit(scope=ScopeRef("cluster", str(cluster_uuid)), metadata=actor(request))
    await org_units.delete_org_unit(command, streams=streams, tree=tree)


@post("/api/v1/org-unit/departments", status_code=201, tags=["Departments"])
async def create_department(
    request: Caller,
    data: JSONBody[DepartmentCreationRequest],
    streams: NamedDependency[NamedStreams],
    ids: NamedDependency[IdSequence],
) -> Department:
    command = CreateDepartment(
        cluster_id=data.cluster_id,
        name=data.name,
        description=data.description,
        resources=data.resources,
        metadata=actor(request),
    )
    department_id = await org_units.create_department(command, streams=streams, ids=ids)
    now, by = datetime.now(UTC), request.user.subject
    return Department(
        id=department_id,
        name=data.name,
        cluster_id=str(data.cluster_id),
        description=data.description,
        resources=data.resources,
        total_resources=_totals(data.resources),
        created_at=now,
        updated_at=now,
        created_by=by,
        updated_by=by,
    )


@get("/api/v1/org-unit/departments", tags=["Departments"])
async def list_departments(
    request: Caller, streams: NamedDependency[NamedStreams], resources: NamedDependency[Resources]
) -> DepartmentList:
    units = await _visible(request, "department", streams, resources)
    return DepartmentList([_department(u) for u in units])


@get("/api/v1/org-unit/departments/{department_id:str}", tags=["Departments"])
async def get_department(
    request: Caller,
    department_id: FromPath[str],
    streams: NamedDependency[NamedStreams],
    resources: NamedDependency[Resources],
) -> Department:
    return _department(await _one(request, "department", department_id, streams, resources))


@put("/api/v1/org-unit/departments/{department_id:str}", tags=["Departments"])
async def update_department(
    request: Caller,
    department_id: FromPath[str],
    data: JSONBody[OrgUnitUpdateRequest],
    streams: NamedDependency[NamedStreams],
    resources: NamedDependency[Resources],
) -> Department:
    unit = await _update(request, "department", department_id, data, streams, resources)
    return _department(unit)


@delete("/api/v1/org-unit/departments/{department_id:str}", tags=["Departments"])
async def delete_department(
    request: Caller,
    department_id: FromPath[str],
    streams: NamedDependency[NamedStreams],
    tree: NamedDependency[OrgTree],
) -> None:
    command = DeleteOrgUnit(scope=ScopeRef("department", department_id), metadata=actor(request))
    await org_units.delete_org_unit(command, streams=streams, tree=tree)


@post("/api/v1/org-unit/projects", status_code=201, tags=["Projects"])
async def create_project(
    request: Caller,
    data: JSONBody[ProjectCreationRequest],
    streams: NamedDependency[NamedStreams],
    ids: NamedDependency[IdSequence],
) -> Project:
    command = CreateProject(
        cluster_id=data.cluster_id,
        department_id=data.parent_id,
        name=data.name,
        description=data.description,
        requested_namespace=data.requested_namespace,
        resources=data.resources,
        metadata=actor(request),
    )
    project_id = await org_units.create_project(command, streams=streams, ids=ids)
    now, by = datetime.now(UTC), request.user.subject
    return _project_wire(
        project_id=project_id,
        name=data.name,
        cluster_id=data.cluster_id,
        parent_id=data.parent_id,
        description=data.description,
        requested_namespace=data.requested_namespace,
        resources=data.resources,
        created=(now, by),
        updated=(now, by),
    )


@get("/api/v1/org-unit/projects", tags=["Projects"])
async def list_projects(
    request: Caller, streams: NamedDependency[NamedStreams], resources: NamedDependency[Resources]
) -> ProjectList:
    units = await _visible(request, "project", streams, resources)
    return ProjectList([_project(u) for u in units])


@get("/api/v1/org-unit/projects/{project_id:str}", tags=["Projects"])
async def get_project(
    request: Caller,
    project_id: FromPath[str],
    streams: NamedDependency[NamedStreams],
    resources: NamedDependency[Resources],
) -> Project:
    return _project(await _one(request, "project", project_id, streams, resources))


@put("/api/v1/org-unit/projects/{project_id:str}", tags=["Projects"])
async def update_project(
    request: Caller,
    project_id: FromPath[str],
    data: JSONBody[OrgUnitUpdateRequest],
    streams: NamedDependency[NamedStreams],
    resources: NamedDependency[Resources],
) -> Project:
    return _project(await _update(request, "project", project_id, data, streams, resources))


@delete("/api/v1/org-unit/projects/{project_id:str}", tags=["Projects"])
async def delete_project(
    request: Caller,
    project_id: FromPath[str],
    streams: NamedDependency[NamedStreams],
    tree: NamedDependency[OrgTree],
) -> None:
    command = DeleteOrgUnit(scope=ScopeRef("project", project_id), metadata=actor(request))
    await org_units.delete_org_unit(command, streams=streams, tree=tree)


ORG_UNIT_ROUTES: Final = (
    create_cluster,
    list_clusters,
    get_cluster,
    update_cluster,
    delete_cluster,
    create_department,
    list_departments,
    get_department,
    update_department,
    delete_department,
    create_project,
    list_projects,
    get_project,
    update_project,
    delete_project,
)


async def _visible(
    request: Caller, kind: ScopeKind, streams: NamedStreams, resources: Resources
) -> list[OrgUnitRow]:
    grants = await access.grants_of(actor(request), streams=streams)
    async with resources.pool.acquire() as conn:
        units = await read_model.list_units(conn)
    seen = access_rules.visible_scopes(grants, {ScopeRef(u.kind, u.id): u.lineage for u in units})
    return [u for u in units if u.kind == kind and ScopeRef(u.kind, u.id) in seen]


async def _one(
    request: Caller, kind: ScopeKind, unit_id: str, streams: NamedStreams, resources: Resources
) -> OrgUnitRow:
    unit = await _find(request, kind, unit_id, streams, resources)
    if unit is None:
        raise OrgUnitNotFoundError(kind, unit_id)
    return unit


async def _find(
    request: Caller, kind: ScopeKind, unit_id: str, streams: NamedStreams, resources: Resources
) -> OrgUnitRow | None:
    """The unit if the caller may see it; None when it is unknown or out of the caller's
    sight (one answer for both, so existence does not leak)."""
    grants = await access.grants_of(actor(request), streams=streams)
    async with resources.pool.acquire() as conn:
        unit = await read_model.get_unit(conn, kind, unit_id)
        units = [] if unit is None else await read_model.list_units(conn)
    lineages = {ScopeRef(u.kind, u.id): u.lineage for u in units}
    if unit is None or ScopeRef(kind, unit_id) not in access_rules.visible_scopes(grants, lineages):
        return None
    return unit


async def _update(
    request: Caller,
    kind: ScopeKind,
    unit_id: str,
    data: OrgUnitUpdateRequest,
    streams: NamedStreams,
    resources: Resources,
) -> OrgUnitRow:
    command = UpdateOrgUnit(
        scope=ScopeRef(kind, unit_id),
        description=data.description,
        resources=data.resources,
        metadata=actor(request),
    )
    unit = await org_units.update_org_unit(command, streams=streams)
    seen = await _find(request, kind, unit_id, streams, resources)
    # The read model may trail the write: answer with the unit as written, its times as read.
    now, by = datetime.now(UTC), request.user.subject
    return OrgUnitRow(
        kind=unit.kind,
        id=unit.id,
        name=unit.name,
        cluster_id=unit.cluster_id,
        department_id=unit.department_id,
        description=unit.description,
        details=read_model.Details(
            resources=unit.resources, requested_namespace=unit.requested_namespace
        ),
        created_at=now if seen is None else seen.created_at,
        created_by=by if seen is None else seen.created_by,
        updated_at=now,
        updated_by=by,
    )


def _totals(resources: tuple[NodePoolResources, ...]) -> TotalResources:
    def total(pick: str) -> float | None:
        values = [getattr(r, pick).deserved for r in resources if getattr(r, pick) is not None]
        known = [v for v in values if v is not None]
        return sum(known) if known else None

    return TotalResources(
        gpu_quota=total("gpu"), cpu_quota=total("cpu"), memory_quota=total("memory")
    )


def _cluster(unit: OrgUnitRow) -> DisplayedCluster:
    return DisplayedCluster(
        uuid=unit.id,
        tenant_id=TENANT_ID,
        name=unit.name,
        created_at=unit.created_at,
        domain=unit.details.domain,
        version=unit.details.cluster_version,
    )


def _department(unit: OrgUnitRow) -> Department:
    return Department(
        id=unit.id,
        name=unit.name,
        cluster_id=str(unit.cluster_id),
        description=unit.description,
        resources=unit.details.resources,
        total_resources=_totals(unit.details.resources),
        created_at=unit.created_at,
        updated_at=unit.updated_at,
        created_by=unit.created_by,
        updated_by=unit.updated_by,
    )


def _project(unit: OrgUnitRow) -> Project:
    return _project_wire(
        project_id=unit.id,
        name=unit.name,
        cluster_id=unit.cluster_id,
        parent_id=unit.department_id,
        description=unit.description,
        requested_namespace=unit.details.requested_namespace,
        resources=unit.details.resources,
        created=(unit.created_at, unit.created_by),
        updated=(unit.updated_at, unit.updated_by),
    )


def _project_wire(
    *,
    project_id: str,
    name: str,
    cluster_id: UUID,
    parent_id: str | None,
    description: str,
    requested_namespace: str | None,
    resources: tuple[NodePoolResources, ...],
    created: tuple[datetime, str],
    updated: tuple[datetime, str],
) -> Project:
    return Project(
        id=project_id,
        name=name,
        cluster_id=str(cluster_id),
        # A project directly under its cluster names the cluster as its parent.
        parent_id=parent_id if parent_id is not None else str(cluster_id),
        description=description,
        requested_namespace=requested_namespace,
        enforce_runai_scheduler=True,
        resources=resources,
        total_resources=_totals(resources),
        effective={},
        status=ProjectStatus(namespace=requested_namespace or f"runai-{name}", phase="Ready"),
        created_at=created[0],
        updated_at=updated[0],
        created_by=created[1],
        updated_by=updated[1],
    )
