"""`GET /api/v1/authorization/permissions`, `POST .../permitted-scopes` and the roles' wording: what
the caller may do and where, from the grants its request was settled with (docs/api/access.md).
Also: domain/permissions.py, the catalogue."""

from typing import Final, Literal

import msgspec
from litestar import get, post
from litestar.params import JSONBody

from domain import permissions
from domain.permissions import Action
from domain.values import Role, ScopeKind, ScopeRef
from infra.http.callers import Caller, lineages_of
from infra.http.consistency import READS

TENANT_ID: Final = "1"  # one tenant per service, as its access rules number it

# Every resource type Run:ai's document names; those this service has no such thing of are
# permitted nowhere.
ResourceType = Literal[
    "department", "tenant", "project", "cluster", "cluster-config", "nodepools", "nodes",
    "settings", "security-settings", "branding-settings", "users", "apps", "service-account",
    "dashboards-overview", "dashboards-analytics", "dashboards-consumption", "roles",
    "access_rules", "jobs", "workloads", "workspaces", "trainings", "inferences", "environments",
    "pvc-assets", "git-assets", "host-path-assets", "nfs-assets", "s3-assets", "compute-resources",
    "templates", "credentials", "events-history", "policies", "cm-volume-assets", "datavolumes",
    "secret-volume-assets", "storage-class-configuration", "access-keys", "workload-properties",
    "network-topologies", "registries", "scrapeable-metrics",
]  # fmt: skip


class Permission(msgspec.Struct, frozen=True, rename="camel"):
    resource_type: str
    display_name: str
    group_id: str
    actions: list[str]


# How Run:ai's console groups and names each resource type of the catalogue.
_GROUPS: Final = {
    **dict.fromkeys(permissions.UNITS, "organization"),
    **dict.fromkeys(permissions.ASSETS, "workload-asset"),
    "workloads": "workload",
    "access_rules": "iam",
    "service-account": "iam",
    "events-history": "iam",
}
_NAMES: Final = {
    "access_rules": "Access rules",
    "service-account": "Service accounts",
    "events-history": "Event history",
}


def _permission(resource: str, actions: list[Action]) -> Permission:
    name = _NAMES.get(resource, resource.replace("-", " ").title())
    return Permission(resource, name, _GROUPS[resource], list(actions))


def permissions_of(role: Role) -> list[Permission]:
    """What a holder of the role may do, resource type by resource type."""
    found = ((r, permissions.actions_of(role, r)) for r in permissions.CATALOGUE)
    return [_permission(resource, actions) for resource, actions in found if actions]


@get("/api/v1/authorization/permissions", tags=["Permissions"])
async def get_permissions(request: Caller) -> list[Permission]:
    """Each resource type the caller may act on somewhere, with the actions it may take."""
    lineages = await lineages_of(request)
    found = (
        (r, permissions.held_actions(request.user.grants, lineages, r))
        for r in permissions.CATALOGUE
    )
    return [_permission(resource, actions) for resource, actions in found if actions]


class PermittedScopesRequest(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"
):
    resource_type: ResourceType
    action: Action | None = None


class PermittedScopes(msgspec.Struct, frozen=True, kw_only=True):
    system: bool
    tenants: list[str]
    clusters: list[str]
    departments: list[str]
    projects: list[str]


class PermittedScopesActions(msgspec.Struct, frozen=True, kw_only=True):
    create: PermittedScopes
    read: PermittedScopes
    update: PermittedScopes
    delete: PermittedScopes


# A question asked by POST: the caller's own writes (a unit it just made) are read first.
@post(
    "/api/v1/authorization/permitted-scopes",
    status_code=200,
    tags=["Permissions"],
    opt={READS: True},
)
async def get_permitted_scopes(
    request: Caller, data: JSONBody[PermittedScopesRequest]
) -> PermittedScopesActions:
    """The scopes where the caller may take each action on the resource type: where it holds
    the role the action needs, on the scope or above (reading: wherever it sees the type's
    things). An `action` names the one the caller asks about; the others are answered too."""
    lineages = await lineages_of(request)

    def scopes(action: Action) -> PermittedScopes:
        found = permissions.permitted_scopes(
            request.user.grants, lineages, data.resource_type, action
        )
        return PermittedScopes(
            system=False,
            tenants=[TENANT_ID] if ScopeRef("tenant") in found else [],
            clusters=_ids(found, "cluster"),
            departments=_ids(found, "department"),
            projects=_ids(found, "project"),
        )

    return PermittedScopesActions(
        create=scopes("create"),
        read=scopes("read"),
        update=scopes("update"),
        delete=scopes("delete"),
    )


def _ids(scopes: set[ScopeRef], kind: ScopeKind) -> list[str]:
    """The ids of one kind, in numeric-aware order (department and project ids are numbers)."""
    return sorted((s.id for s in scopes if s.kind == kind), key=lambda i: (len(i), i))


PERMISSION_ROUTES: Final = (get_permissions, get_permitted_scopes)
