"""What a caller's org-unit request does, shared by the API's handlers (infra/http/org_units.py)
and the console's pages, so both refuse alike: creating clusters and projects, deleting any
unit, the units a caller may see, and whether the caller is a tenant admin (the console's nav)."""

from domain.access import permits
from domain.commands import CreateCluster, CreateProject, DeleteOrgUnit
from domain.values import TENANT, ScopeKind, ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, creation_id, seen_scopes
from infra.http.lists import conditions_of
from infra.http.org_unit_schemas import (
    TENANT_ID,
    ClusterCreationRequest,
    DisplayedCluster,
    Project,
    ProjectCreationRequest,
    project_wire,
)
from projections.list_grammar import Condition
from projections.org_units import OrgUnitRow
from projections.queries import Reads
from projections.queries import org_unit_reads as queries
from services import org_units
from services.ports.event_store import EventStore


async def create_cluster_from(
    request: Caller, data: ClusterCreationRequest, streams: EventStore
) -> DisplayedCluster:
    """Create a cluster from Run:ai's body (the API's and the console's form alike)."""
    cluster_id, keyed = creation_id(request, "cluster")
    command = CreateCluster(
        cluster_id=cluster_id,
        keyed=keyed,
        name=data.name,
        domain=data.domain,
        version=data.version,
        metadata=actor(request),
    )
    created = await org_units.create_cluster(command, streams=streams)
    return DisplayedCluster(
        uuid=str(command.cluster_id),
        tenant_id=TENANT_ID,
        name=data.name,
        created_at=created.created.at,
        domain=data.domain,
        version=data.version,
    )


async def create_project_from(
    request: Caller, data: ProjectCreationRequest, adapters: Adapters
) -> Project:
    """Create a project from Run:ai's body (the API's and the console's form alike)."""
    creation, keyed = creation_id(request, "project")
    command = CreateProject(
        cluster_id=data.cluster_id,
        creation_id=creation,
        keyed=keyed,
        department_id=data.parent_id,
        name=data.name,
        description=data.description,
        requested_namespace=data.requested_namespace,
        resources=data.resources,
        metadata=actor(request),
    )
    created = await org_units.create_project(command, streams=adapters.streams, ids=adapters.ids)
    written = created.stamps.created
    return project_wire(
        project_id=created.state,
        name=data.name,
        cluster_id=data.cluster_id,
        parent_id=data.parent_id,
        description=data.description,
        requested_namespace=data.requested_namespace,
        resources=data.resources,
        created=(written.at, written.by),
        updated=(written.at, written.by),
    )


async def delete_from(request: Caller, kind: ScopeKind, unit_id: str, streams: EventStore) -> None:
    """Delete the unit (refused while it holds anything): the API's and the console's."""
    command = DeleteOrgUnit(scope=ScopeRef(kind, unit_id), metadata=actor(request))
    await org_units.delete_org_unit(command, streams=streams)


def tenant_admin(request: Caller) -> bool:
    """Whether the caller holds what creating a cluster takes (a tenant admin): only for
    showing the console's entries to clusters and projects; the use cases are what refuse."""
    return permits(request.user.grants, (TENANT,), "admin")


async def visible_units(request: Caller, kind: ScopeKind, reads: Reads) -> list[OrgUnitRow]:
    """The units of a kind the caller may see (the API's lists and the console's choices)."""
    return await chosen_units(request, kind, reads, None)


async def chosen_units(
    request: Caller,
    kind: ScopeKind,
    reads: Reads,
    filter_by: list[str] | None,
    search: str | None = None,
) -> list[OrgUnitRow]:
    """The units of a kind the caller may see that a list's `filterBy` and `search` select
    (projections/queries/org_unit_reads.py), as the list shows them."""
    conditions, search = _query(kind, filter_by, search)
    seen = await seen_scopes(request)
    return await queries.chosen(reads, kind, seen, conditions, search=search)


async def counted_units(
    request: Caller,
    kind: ScopeKind,
    reads: Reads,
    filter_by: list[str] | None,
    search: str | None = None,
) -> int:
    conditions, search = _query(kind, filter_by, search)
    return await queries.count(reads, kind, await seen_scopes(request), conditions, search=search)


def _query(
    kind: ScopeKind, filter_by: list[str] | None, search: str | None
) -> tuple[list[Condition], str | None]:
    """The conditions of a list of the kind, and its search; clusters are listed whole."""
    grammar = queries.GRAMMARS.get(kind)
    if grammar is None:
        return [], None
    return conditions_of(grammar, filter_by), search
