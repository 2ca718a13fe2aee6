"""Who may do what where: roles granted on a scope cover it and everything below, and nest (admin
⊇ editor ⊇ submitter ⊇ viewer). Pure: the caller supplies the grants and the scopes' lineages.
Also: services/access.py."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from domain.values import TENANT, Grant, Role, ScopeRef

RANK: Final[Mapping[Role, int]] = {"viewer": 0, "submitter": 1, "editor": 2, "admin": 3}


def granted_scope(grant: Grant) -> ScopeRef:
    return TENANT if grant.scope_kind == "tenant" else ScopeRef(grant.scope_kind, grant.scope_id)


def permits(grants: Iterable[Grant], lineage: Sequence[ScopeRef], role: Role) -> bool:
    """Whether a grant on the scope or one of its ancestors carries `role` (or a larger one).
    `lineage` is the scope followed by its ancestors up to the tenant."""
    chain = set(lineage)
    return any(granted_scope(g) in chain and RANK[g.role] >= RANK[role] for g in grants)


def visible_scopes(
    grants: Iterable[Grant], lineages: Mapping[ScopeRef, Sequence[ScopeRef]]
) -> set[ScopeRef]:
    """The scopes whose things the grants show: every scope at or under a granted one, and the
    ancestors of a granted one (their things are usable below, so they are seen there too).
    `lineages` maps every live scope, the tenant included, to its lineage."""
    granted = {granted_scope(g) for g in grants}
    seen: set[ScopeRef] = set()
    for scope, lineage in lineages.items():
        if granted.intersection(lineage):
            seen.add(scope)
        if scope in granted:
            seen.update(lineage)
    return seen


def governed_scopes(
    grants: Iterable[Grant], lineages: Mapping[ScopeRef, Sequence[ScopeRef]]
) -> set[ScopeRef]:
    """The scopes at or under a granted one (no ancestors): whose history a holder may audit."""
    granted = {granted_scope(g) for g in grants}
    return {scope for scope, lineage in lineages.items() if granted.intersection(lineage)}


# Run:ai numbers its roles; these are this service's, with what each lets a holder do.
ROLE_IDS: Final[Mapping[int, Role]] = {1: "admin", 2: "editor", 3: "submitter", 4: "viewer"}
ROLE_DESCRIPTIONS: Final[Mapping[Role, str]] = {
    "admin": "Manages the scope: its units, access rules, service accounts, assets and templates",
    "editor": "Manages assets and templates in the scope, and submits workloads",
    "submitter": "Views the scope's assets and templates and submits workloads from them",
    "viewer": "Views the scope's units, assets, templates and workloads",
}
