"""Request and response bodies of the org-unit endpoints, in Run:ai's shapes, and how a unit of
the read model becomes one."""

from datetime import datetime
from typing import Final
from uuid import UUID

import msgspec

from domain.values import NodePoolResources, quota_total
from infra.http.openapi_document import DisplayName
from projections.org_units import OrgUnitRow
from projections.queries.org_unit_reads import PHASE

TENANT_ID: Final = 1  # one tenant per service


class RequestBody(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Unknown keys are accepted and ignored: Run:ai's clients send fields (scheduling rules,
    node types, ...) this service does not keep."""


class ClusterCreationRequest(RequestBody, frozen=True, kw_only=True):
    name: DisplayName
    domain: str | None = None
    version: str | None = None


class ClusterUpdateRequest(RequestBody, frozen=True, kw_only=True):
    name: DisplayName


class DepartmentCreationRequest(RequestBody, frozen=True, kw_only=True):
    name: DisplayName
    cluster_id: UUID
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()


class OrgUnitUpdateRequest(RequestBody, frozen=True, kw_only=True):
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()


class ProjectCreationRequest(RequestBody, frozen=True, kw_only=True):
    name: DisplayName
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


def totals(resources: tuple[NodePoolResources, ...]) -> TotalResources:
    return TotalResources(
        gpu_quota=quota_total(resources, "gpu"),
        cpu_quota=quota_total(resources, "cpu"),
        memory_quota=quota_total(resources, "memory"),
    )


def cluster_wire(unit: OrgUnitRow) -> DisplayedCluster:
    return DisplayedCluster(
        uuid=unit.id,
        tenant_id=TENANT_ID,
        name=unit.name,
        created_at=unit.created_at,
        domain=unit.details.domain,
        version=unit.details.cluster_version,
    )


def department_wire(unit: OrgUnitRow) -> Department:
    return Department(
        id=unit.id,
        name=unit.name,
        cluster_id=str(unit.cluster_id),
        description=unit.description,
        resources=unit.details.resources,
        total_resources=totals(unit.details.resources),
        created_at=unit.created_at,
        updated_at=unit.updated_at,
        created_by=unit.created_by,
        updated_by=unit.updated_by,
    )


def project_from_row(unit: OrgUnitRow) -> Project:
    return project_wire(
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


def project_wire(
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
        total_resources=totals(resources),
        effective={},
        status=ProjectStatus(namespace=requested_namespace or f"runai-{name}", phase=PHASE),
        created_at=created[0],
        updated_at=updated[0],
        created_by=created[1],
        updated_by=updated[1],
    )
