"""What each role lets its holder do to each kind of resource, in Run:ai's resource-type and
action names: the catalogue the use cases' checks follow, and where it permits what. Also:
infra/http/permissions.py, the routes that answer from it."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Literal

from domain.access import RANK, granted_scope, permits, visible_scopes
from domain.values import TENANT, Grant, Role, ScopeRef

Action = Literal["create", "read", "update", "delete"]
ACTIONS: Final[tuple[Action, ...]] = ("create", "read", "update", "delete")

_UNIT: Final[Mapping[Action, Role]] = {
    "create": "admin",
    "read": "viewer",
    "update": "admin",
    "delete": "admin",
}
_ASSET: Final[Mapping[Action, Role]] = {
    "create": "editor",
    "read": "viewer",
    "update": "editor",
    "delete": "editor",
}
UNITS: Final = ("cluster", "department", "project")
ASSETS: Final = (
    "environments", "compute-resources", "credentials", "nfs-assets", "pvc-assets", "s3-assets",
    "git-assets", "host-path-assets", "cm-volume-assets", "secret-volume-assets", "templates",
)  # fmt: skip

# The role each action on each resource type needs (an action not listed is not offered).
CATALOGUE: Final[Mapping[str, Mapping[Action, Role]]] = {
    **dict.fromkeys(UNITS, _UNIT),
    **dict.fromkeys(ASSETS, _ASSET),
    "workloads": {"create": "submitter", "read": "viewer", "delete": "submitter"},
    # Anyone sees the rules on the scopes it sees; granting and revoking take an admin.
    "access_rules": {"create": "admin", "read": "viewer", "delete": "admin"},
    "service-account": {"create": "admin", "read": "admin", "update": "admin", "delete": "admin"},
    # Run:ai's name for its audit log: who did what, sign-ins included (a tenant admin's to read).
    "events-history": {"read": "admin"},
}
# Resource types that belong to the tenant as a whole: only a grant on the tenant reaches them.
TENANT_WIDE: Final = frozenset({"service-account", "events-history"})
# Run:ai's older names of resource types, read as the current ones.
ALIASES: Final[Mapping[str, str]] = {"apps": "service-account"}


def actions_of(role: Role, resource: str) -> list[Action]:
    """What a holder of `role` may do to the resource type (in CRUD order)."""
    needs = CATALOGUE.get(ALIASES.get(resource, resource), {})
    return [action for action in ACTIONS if action in needs and RANK[role] >= RANK[needs[action]]]


def permitted_scopes(
    grants: Iterable[Grant],
    lineages: Mapping[ScopeRef, Sequence[ScopeRef]],
    resource: str,
    action: Action,
) -> set[ScopeRef]:
    """The live scopes where the grants carry the role the action needs (there or above). Reading
    is also permitted wherever lists show things (domain/access.py `visible_scopes`) unless it
    needs more than a viewer. `lineages`: every live scope's, the tenant's too."""
    resource = ALIASES.get(resource, resource)
    needed = CATALOGUE.get(resource, {}).get(action)
    if needed is None:
        return set()
    held = tuple(grants)
    if resource in TENANT_WIDE:
        return {TENANT} if permits(held, (TENANT,), needed) else set()
    if action == "read" and needed == "viewer":
        return visible_scopes(held, lineages)
    return {scope for scope, lineage in lineages.items() if permits(held, lineage, needed)}


def held_actions(
    grants: Iterable[Grant], lineages: Mapping[ScopeRef, Sequence[ScopeRef]], resource: str
) -> list[Action]:
    """The actions on the resource type the grants permit somewhere: those whose
    `permitted_scopes` are not empty, known from the largest role held on a live scope without
    visiting every scope."""
    resource = ALIASES.get(resource, resource)
    live = [g for g in grants if granted_scope(g) in lineages]
    if resource in TENANT_WIDE:
        live = [g for g in live if g.scope_kind == "tenant"]
    if not live:
        return []
    largest = max((g.role for g in live), key=RANK.__getitem__)
    return actions_of(largest, resource)
