"""The access rules a caller may see, chosen and paged in SQL (Run:ai's `filterBy` and
`search`), and the caller's own with the names of their scopes."""

from collections import defaultdict
from collections.abc import Sequence, Set
from typing import Final

from domain.access import ROLE_IDS, granted_scope
from domain.values import TENANT, Grant, ScopeKind, ScopeRef
from projections import access_rules, org_units
from projections.access_rules import AccessRuleRow
from projections.list_grammar import Condition, Grammar
from projections.list_sql import Where
from projections.queries import Reads

GRAMMAR: Final = Grammar(
    (
        "subjectId", "subjectType", "roleId", "scopeId", "scopeType", "roleName", "scopeName",
        "createdAt", "deletedAt", "createdBy", "phase",
    ),
    dates=("createdAt", "deletedAt"),
    numbers=("roleId",),
)  # fmt: skip
# Revoked rules are not kept (their events are, in the audit log): none has a `deletedAt`.
_DATES: Final = {"createdAt": "r.created_at", "deletedAt": "NULL::timestamptz"}
PHASE: Final = "Ready"
_ROLE_ID: Final = (
    "CASE r.role "
    + " ".join(f"WHEN '{role}' THEN {role_id}" for role_id, role in ROLE_IDS.items())
    + " END"
)
_TEXT: Final = {
    "subjectId": "r.subject_id",
    "subjectType": "r.subject_type",
    "scopeId": "CASE WHEN r.scope_kind = 'tenant' THEN '' ELSE r.scope_id END",
    "scopeType": "r.scope_kind",
    "roleName": "r.role",
    "scopeName": "CASE WHEN r.scope_kind = 'tenant' THEN 'tenant' ELSE r.scope_name END",
    "createdBy": "r.created_by",
    "phase": f"'{PHASE}'",
}


def _where(seen: Set[ScopeRef], conditions: Sequence[Condition], search: str | None) -> Where:
    """The rules whose scope (domain/access.py `granted_scope`) the caller sees that the
    conditions and the search select."""
    query = Where(_TEXT, _DATES, numbers={"roleId": _ROLE_ID})
    units = sorted(ref for ref in seen if ref.kind != "tenant")
    kinds, ids = query.param([u.kind for u in units]), query.param([u.id for u in units])
    tenant = query.param(TENANT in seen)  # every tenant-wide rule's scope (`granted_scope`)
    query.where.append(
        f"((r.scope_kind = 'tenant' AND {tenant}::bool) OR (r.scope_kind <> 'tenant' AND"
        f" (r.scope_kind, r.scope_id) IN (SELECT * FROM unnest({kinds}::text[], {ids}::text[]))))"
    )
    for condition in conditions:
        query.condition(condition)
    if search:
        query.search(search, (_TEXT["subjectId"], _TEXT["roleName"], _TEXT["scopeName"]))
    return query


async def page(
    reads: Reads,
    seen: Set[ScopeRef],
    conditions: Sequence[Condition],
    *,
    search: str | None,
    subject_id: str | None = None,
    role_id: int | None = None,
    offset: int,
    limit: int,
) -> tuple[list[AccessRuleRow], int]:
    """A page of the rules the caller sees that the query selects, oldest first, and how many
    it selects in all."""
    query = _where(seen, conditions, search)
    if subject_id is not None:
        query.where.append(f"r.subject_id = {query.param(subject_id)}")
    if role_id is not None:
        query.where.append(f"({_ROLE_ID}) = {query.param(role_id)}::bigint")
    chosen = f"SELECT * FROM ({access_rules.SELECT}) r WHERE {query.clause}"
    async with reads.connection() as conn:
        total = await conn.fetchrow(f"SELECT count(*) FROM ({chosen}) c", *query.params)
        rows = await conn.fetch(
            f"{chosen} ORDER BY r.rule_id OFFSET {query.param(offset)} LIMIT {query.param(limit)}",
            *query.params,
        )
    assert total is not None  # an aggregate always answers
    return [access_rules.row_of(r) for r in rows], int(total[0])


async def count(
    reads: Reads, seen: Set[ScopeRef], conditions: Sequence[Condition], *, search: str | None
) -> int:
    query = _where(seen, conditions, search)
    async with reads.connection() as conn:
        row = await conn.fetchrow(
            f"SELECT count(*) FROM ({access_rules.SELECT}) r WHERE {query.clause}", *query.params
        )
    assert row is not None  # an aggregate always answers
    return int(row[0])


async def one(reads: Reads, rule_id: int, seen: Set[ScopeRef]) -> AccessRuleRow | None:
    """The rule, if the caller sees its scope."""
    async with reads.connection() as conn:
        row = await access_rules.get_rule(conn, rule_id)
    return row if row is not None and _scope(row) in seen else None


def _scope(row: AccessRuleRow) -> ScopeRef:
    return granted_scope(Grant(role=row.role, scope_kind=row.scope_kind, scope_id=row.scope_id))


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
