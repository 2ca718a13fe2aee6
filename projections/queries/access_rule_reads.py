"""The access rules a caller may see, chosen and paged in SQL (Run:ai's `filterBy` and
`search`), and the caller's own with the names of their scopes."""

from collections.abc import Sequence, Set
from typing import Final

import asyncpg
import msgspec

from domain.access import ROLE_IDS, granted_scope
from domain.values import TENANT, Grant, ScopeRef
from projections import access_rules
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


class Held(msgspec.Struct, frozen=True, kw_only=True):
    """One of a subject's grants, the name of its scope, and the rule it holds it by (None:
    none yet in the read model)."""

    grant: Grant
    scope_name: str
    rule: AccessRuleRow | None


# A subject's grants in the order it holds them, each paired with the k-th of its rules alike
# when it is the k-th grant alike (one rule for each grant, should two be alike), named by the
# org tree's read model (else by id; the tenant's is `tenant`).
_HELD: Final = """
WITH grants AS (
  SELECT g.ord, g.role, g.kind, g.id,
         row_number() OVER (PARTITION BY g.role, g.kind, g.id ORDER BY g.ord) AS k
    FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS g(role, kind, id, ord)
), rules AS (
  SELECT r.*, row_number() OVER (PARTITION BY r.role, r.scope_kind, r.scope_id
                                 ORDER BY r.rule_id) AS k
    FROM access_rules r WHERE r.subject_type = $4 AND r.subject_id = $5
), held AS (
  SELECT g.ord, g.role, g.kind, g.id,
         CASE WHEN g.kind = 'tenant' AND g.id = 'tenant' THEN 'tenant'
              ELSE coalesce(o.name, g.id) END AS scope_name,
         r.rule_id, r.created_at, r.created_by
    FROM grants g
    LEFT JOIN rules r ON r.role = g.role AND r.scope_kind = g.kind AND r.scope_id = g.id
                     AND r.k = g.k
    LEFT JOIN org_units o ON g.kind <> 'tenant' AND o.kind = g.kind AND o.id = g.id
)
SELECT * FROM held
"""


def _held(subject_type: str, subject: str, grants: Sequence[Grant], search: str | None) -> Where:
    query = Where({}, {})
    query.param([g.role for g in grants])
    query.param([g.scope_kind for g in grants])
    query.param([g.scope_id for g in grants])
    query.param(subject_type)
    subject_param = query.param(subject)
    if search:
        query.search(search, (f"{subject_param}::text", "role", "scope_name"))
    return query


async def held_page(
    reads: Reads,
    subject_type: str,
    subject: str,
    grants: Sequence[Grant],
    *,
    search: str | None,
    offset: int,
    limit: int,
) -> tuple[list[Held], int]:
    """A page of the subject's grants the search selects, in the order it holds them, and how
    many it selects in all."""
    query = _held(subject_type, subject, grants, search)
    chosen = f"{_HELD} WHERE {query.clause}"
    async with reads.connection() as conn:
        total = await conn.fetchrow(f"SELECT count(*) FROM ({chosen}) c", *query.params)
        rows = await conn.fetch(
            f"{chosen} ORDER BY ord OFFSET {query.param(offset)} LIMIT {query.param(limit)}",
            *query.params,
        )
    assert total is not None  # an aggregate always answers
    return [_held_of(row, subject_type, subject) for row in rows], int(total[0])


async def held_count(
    reads: Reads, subject_type: str, subject: str, grants: Sequence[Grant], *, search: str | None
) -> int:
    query = _held(subject_type, subject, grants, search)
    async with reads.connection() as conn:
        row = await conn.fetchrow(
            f"SELECT count(*) FROM ({_HELD} WHERE {query.clause}) c", *query.params
        )
    assert row is not None  # an aggregate always answers
    return int(row[0])


def _held_of(row: asyncpg.Record, subject_type: str, subject: str) -> Held:
    grant = Grant(role=row["role"], scope_kind=row["kind"], scope_id=row["id"])
    rule = None
    if row["rule_id"] is not None:
        rule = AccessRuleRow(
            rule_id=row["rule_id"],
            subject_type=subject_type,
            subject_id=subject,
            role=grant.role,
            scope_kind=grant.scope_kind,
            scope_id=grant.scope_id,
            scope_name=row["scope_name"],
            created_at=row["created_at"],
            created_by=row["created_by"],
        )
    return Held(grant=grant, scope_name=row["scope_name"], rule=rule)
