"""The access rules a caller may see, and the caller's own with the names of their scopes."""

from collections import defaultdict
from collections.abc import Set

from domain.access import granted_scope
from domain.values import Grant, ScopeKind, ScopeRef
from projections import access_rules, org_units
from projections.access_rules import AccessRuleRow
from projections.queries import Reads


def _scope(row: AccessRuleRow) -> ScopeRef:
    return granted_scope(Grant(role=row.role, scope_kind=row.scope_kind, scope_id=row.scope_id))


async def visible(reads: Reads, seen: Set[ScopeRef]) -> list[AccessRuleRow]:
    """Every rule whose scope the caller sees."""
    async with reads.connection() as conn:
        rows = await access_rules.list_rules(conn)
    return [row for row in rows if _scope(row) in seen]


ScopeNames = dict[tuple[ScopeKind, str], str]


async def held_by(
    reads: Reads, subject_type: str, subject: str, grants: tuple[Grant, ...]
) -> tuple[list[AccessRuleRow], ScopeNames]:
    """The subject's rules, and the names of the scopes of its grants (the tenant's is
    `tenant`), one query per kind."""
    ids: dict[ScopeKind, set[str]] = defaultdict(set)
    for grant in grants:
        if grant.scope_kind != "tenant":
            ids[grant.scope_kind].add(grant.scope_id)
    names: ScopeNames = {("tenant", "tenant"): "tenant"}
    async with reads.connection() as conn:
        rows = await access_rules.rules_of(conn, subject_type, subject)
        for kind, wanted in ids.items():
            for unit_id, name in (await org_units.names_of(conn, kind, wanted)).items():
                names[(kind, unit_id)] = name
    return rows, names
