"""The org tree (tenant, clusters, departments, projects), a stream per unit, found from its id
alone: departments' and projects' stream ids are uuid5 of Run:ai's numeric ids. Parents never
change. Also: services/org_units.py, projections/org_units.py, infra/http/org_units.py."""

from collections.abc import Iterable, Sequence
from typing import Final, assert_never
from uuid import UUID, uuid5

import msgspec

from domain import name_rules
from domain.errors import DomainError, InvalidHistoryError
from domain.events import (
    ClusterCreated,
    ClusterDeleted,
    ClusterRenamed,
    DepartmentCreated,
    DepartmentDeleted,
    DepartmentUpdated,
    Event,
    OrgUnitEvent,
    ProjectCreated,
    ProjectDeleted,
    ProjectUpdated,
)
from domain.values import TENANT, NodePoolResources, ScopeKind, ScopeRef

_STREAMS: Final = UUID("6f1c2b1e-6d2a-4f4e-9a51-0c7a4b6f2d10")


class OrgUnit(msgspec.Struct, frozen=True, kw_only=True):
    """Any unit of the tree. `department_id` is set for projects under a department."""

    kind: ScopeKind
    id: str
    cluster_id: UUID
    department_id: str | None = None
    name: str
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()
    domain: str | None = None
    version: str | None = None
    requested_namespace: str | None = None
    deleted: bool = False

    @property
    def ref(self) -> ScopeRef:
        return ScopeRef(self.kind, self.id)

    @property
    def lineage(self) -> tuple[ScopeRef, ...]:
        """This unit, then its ancestors up to the tenant."""
        return lineage(self.kind, self.id, self.cluster_id, self.department_id)


def lineage(
    kind: ScopeKind, unit_id: str, cluster_id: UUID, department_id: str | None
) -> tuple[ScopeRef, ...]:
    """A unit, then its ancestors up to the tenant: its department (a project's, if it has
    one), its cluster, the tenant."""
    chain = [ScopeRef(kind, unit_id)]
    if kind == "project" and department_id is not None:
        chain.append(ScopeRef("department", department_id))
    if kind != "cluster":
        chain.append(ScopeRef("cluster", str(cluster_id)))
    return (*chain, TENANT)


class OrgUnitNotFoundError(DomainError):
    slug = "org-unit-not-found"

    def __init__(self, kind: ScopeKind, unit_id: str) -> None:
        super().__init__(f"{kind} {unit_id} does not exist")
        self.kind = kind
        self.unit_id = unit_id


class UnknownScopeError(DomainError):
    """A request names a scope (or parent) that does not exist; `field` points at the id."""

    slug = "unknown-scope"

    def __init__(self, kind: ScopeKind, unit_id: str, *, field: str) -> None:
        super().__init__(f"{field}: there is no {kind} {unit_id!r}")
        self.kind = kind
        self.unit_id = unit_id
        self.field = field


class OrgUnitNotEmptyError(DomainError):
    slug = "org-unit-not-empty"

    def __init__(self, kind: ScopeKind, unit_id: str, holds: Sequence[str]) -> None:
        super().__init__(f"{kind} {unit_id} still holds {', '.join(holds)}; delete them first")
        self.kind = kind
        self.unit_id = unit_id
        self.holds = ", ".join(holds)


def stream_of(scope: ScopeRef) -> UUID:
    """The stream that holds a unit's history."""
    if scope.kind == "cluster":
        return UUID(scope.id)
    return uuid5(_STREAMS, f"{scope.kind}:{scope.id}")


def name_namespace(kind: ScopeKind, cluster_id: UUID | None) -> str:
    """Where a unit's name must be unique: clusters tenant-wide, the rest within their cluster."""
    return "cluster@tenant" if kind == "cluster" else f"{kind}@cluster:{cluster_id}"


def evolve(state: OrgUnit | None, event: OrgUnitEvent) -> OrgUnit:
    """Apply one past event. Total over OrgUnitEvent: a missing case fails mypy."""
    match event:
        case ClusterCreated():
            return OrgUnit(
                kind="cluster",
                id=str(event.cluster_id),
                cluster_id=event.cluster_id,
                name=event.name,
                domain=event.domain,
                version=event.version,
            )
        case DepartmentCreated():
            return OrgUnit(
                kind="department",
                id=event.department_id,
                cluster_id=event.cluster_id,
                name=event.name,
                description=event.description,
                resources=event.resources,
            )
        case ProjectCreated():
            return OrgUnit(
                kind="project",
                id=event.project_id,
                cluster_id=event.cluster_id,
                department_id=event.department_id,
                name=event.name,
                description=event.description,
                resources=event.resources,
                requested_namespace=event.requested_namespace,
            )
        case ClusterRenamed():
            return msgspec.structs.replace(_existing(state, event), name=event.name)
        case DepartmentUpdated() | ProjectUpdated():
            return msgspec.structs.replace(
                _existing(state, event), description=event.description, resources=event.resources
            )
        case ClusterDeleted() | DepartmentDeleted() | ProjectDeleted():
            return msgspec.structs.replace(_existing(state, event), deleted=True)
        case _:
            assert_never(event)


def _existing(state: OrgUnit | None, event: Event) -> OrgUnit:
    if state is None:
        raise InvalidHistoryError(f"{type(event).__name__} before the unit was created")
    return state


_ORG_EVENTS: Final = (
    ClusterCreated,
    ClusterRenamed,
    ClusterDeleted,
    DepartmentCreated,
    DepartmentUpdated,
    DepartmentDeleted,
    ProjectCreated,
    ProjectUpdated,
    ProjectDeleted,
)


def fold(events: Iterable[Event]) -> OrgUnit | None:
    state: OrgUnit | None = None
    for event in events:
        if not isinstance(event, _ORG_EVENTS):
            raise InvalidHistoryError(f"{type(event).__name__} in an org unit stream")
        state = evolve(state, event)
    return state


def live(state: OrgUnit | None, kind: ScopeKind, unit_id: str) -> OrgUnit:
    """The unit, or OrgUnitNotFoundError when it never existed, was deleted, or is another kind."""
    if state is None or state.deleted or state.kind != kind:
        raise OrgUnitNotFoundError(kind, unit_id)
    return state


def parent(state: OrgUnit | None, kind: ScopeKind, unit_id: str, *, field: str) -> OrgUnit:
    """A unit a request names as the parent: a missing one is the request's fault (400)."""
    if state is None or state.deleted or state.kind != kind:
        raise UnknownScopeError(kind, unit_id, field=field)
    return state


def create_cluster(
    state: OrgUnit | None, cluster_id: UUID, *, name: str, domain: str | None, version: str | None
) -> list[OrgUnitEvent]:
    if state is not None:
        raise OrgUnitExistsError("cluster", str(cluster_id))
    name_rules.check(name, "/name")
    return [ClusterCreated(cluster_id=cluster_id, name=name, domain=domain, version=version)]


def rename_cluster(state: OrgUnit | None, cluster_id: UUID, *, name: str) -> list[OrgUnitEvent]:
    current = live(state, "cluster", str(cluster_id))
    name_rules.check(name, "/name")
    return [] if current.name == name else [ClusterRenamed(cluster_id=cluster_id, name=name)]


def create_department(
    state: OrgUnit | None,
    department_id: str,
    *,
    cluster: OrgUnit,
    name: str,
    description: str,
    resources: tuple[NodePoolResources, ...],
) -> list[OrgUnitEvent]:
    if state is not None:
        raise OrgUnitExistsError("department", department_id)
    name_rules.check(name, "/name")
    return [
        DepartmentCreated(
            department_id=department_id,
            cluster_id=cluster.cluster_id,
            name=name,
            description=description,
            resources=resources,
        )
    ]


def create_project(
    state: OrgUnit | None,
    project_id: str,
    *,
    cluster: OrgUnit,
    department: OrgUnit | None,
    name: str,
    description: str,
    requested_namespace: str | None,
    resources: tuple[NodePoolResources, ...],
) -> list[OrgUnitEvent]:
    if state is not None:
        raise OrgUnitExistsError("project", project_id)
    name_rules.check(name, "/name")
    if department is not None and department.cluster_id != cluster.cluster_id:
        raise UnknownScopeError("department", department.id, field="/parentId")
    return [
        ProjectCreated(
            project_id=project_id,
            cluster_id=cluster.cluster_id,
            department_id=None if department is None else department.id,
            name=name,
            description=description,
            requested_namespace=requested_namespace,
            resources=resources,
        )
    ]


def update_unit(
    state: OrgUnit | None,
    kind: ScopeKind,
    unit_id: str,
    *,
    description: str,
    resources: tuple[NodePoolResources, ...],
) -> list[OrgUnitEvent]:
    """Replace a department's or project's updatable fields; an unchanged unit writes nothing."""
    current = live(state, kind, unit_id)
    if (current.description, current.resources) == (description, resources):
        return []
    if kind == "department":
        return [
            DepartmentUpdated(department_id=unit_id, description=description, resources=resources)
        ]
    return [ProjectUpdated(project_id=unit_id, description=description, resources=resources)]


def delete_unit(state: OrgUnit | None, kind: ScopeKind, unit_id: str) -> list[OrgUnitEvent]:
    """Deleting a deleted unit is a no-op. Whether the unit still holds units, templates,
    assets or workloads is decided where the deletion is written, in its transaction
    (OrgUnitNotEmptyError, `Uses`)."""
    if state is not None and state.deleted and state.kind == kind:
        return []
    current = live(state, kind, unit_id)
    match kind:
        case "cluster":
            return [ClusterDeleted(cluster_id=current.cluster_id)]
        case "department":
            return [DepartmentDeleted(department_id=unit_id)]
        case "project":
            return [ProjectDeleted(project_id=unit_id)]
        case "tenant":
            raise OrgUnitNotFoundError(kind, unit_id)
        case _:
            assert_never(kind)


class OrgUnitExistsError(DomainError):
    slug = "org-unit-exists"

    def __init__(self, kind: ScopeKind, unit_id: str) -> None:
        super().__init__(f"{kind} {unit_id} exists already")
        self.kind = kind
        self.unit_id = unit_id
