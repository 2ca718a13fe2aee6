"""Clusters, departments and projects from the org tree's read model: one by id, names, and a
list or count selected in SQL by `filterBy` and (projects) `search`. The GPU metrics' fields
(`gpuAllocated`, `avgGpuUtilization24h`, ...) are not measured here, so they are no fields."""

from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Final

from domain.values import ScopeKind, ScopeRef
from projections import org_units
from projections.list_grammar import Condition, Grammar
from projections.list_sql import Where
from projections.org_units import COLUMNS, OrgUnitRow, row_of
from projections.queries import Reads

_KINDS: tuple[ScopeKind, ...] = ("cluster", "department", "project")
# Every project is Ready once created (a project's `status.phase`).
PHASE: Final = "Ready"
_PROJECT_FIELDS: Final = (
    "name", "clusterId", "departmentId", "parentId", "parentName", "phase", "totalGpuQuota",
    "createdAt",
)  # fmt: skip
# The kinds a list selects from by `filterBy`; clusters are listed whole.
GRAMMARS: Final[Mapping[ScopeKind, Grammar]] = {
    "department": Grammar(
        ("name", "clusterId", "totalGpuQuota", "createdAt"),
        dates=("createdAt",),
        numbers=("totalGpuQuota",),
    ),
    "project": Grammar(_PROJECT_FIELDS, dates=("createdAt",), numbers=("totalGpuQuota",)),
}

# Each unit with the name of its parent: a project's department, else its cluster (which a
# project directly under its cluster names as its `parentId`).
_UNITS: Final = """
SELECT u.*, p.name AS parent_name
  FROM org_units u
  LEFT JOIN org_units p
    ON p.kind = CASE WHEN u.department_id IS NULL THEN 'cluster' ELSE 'department' END
   AND p.id = coalesce(u.department_id, u.cluster_id::text)
"""
_TEXT: Final = {
    "name": "u.name",
    "clusterId": "u.cluster_id::text",
    "departmentId": "coalesce(u.department_id, '')",
    "parentId": "coalesce(u.department_id, u.cluster_id::text)",
    "parentName": "coalesce(u.parent_name, '')",
    "phase": f"'{PHASE}'",
    "totalGpuQuota": "u.total_gpu_quota_text",
}
_NUMBERS: Final = {"totalGpuQuota": "u.total_gpu_quota"}
_DATES: Final = {"createdAt": "u.created_at"}


async def one(reads: Reads, kind: ScopeKind, unit_id: str) -> OrgUnitRow | None:
    async with reads.connection() as conn:
        return await org_units.get_unit(conn, kind, unit_id)


def _where(
    kind: ScopeKind, seen: Set[ScopeRef], conditions: Sequence[Condition], search: str | None
) -> Where:
    """The units of the kind the caller sees that the conditions and the search select."""
    query = Where(_TEXT, _DATES, numbers=_NUMBERS)
    ids = sorted(ref.id for ref in seen if ref.kind == kind)
    query.where.append(f"u.kind = {query.param(kind)} AND u.id = ANY({query.param(ids)}::text[])")
    for condition in conditions:
        query.condition(condition)
    if search:
        query.search(search, ("u.name",))
    return query


async def chosen(
    reads: Reads,
    kind: ScopeKind,
    seen: Set[ScopeRef],
    conditions: Sequence[Condition],
    *,
    search: str | None,
) -> list[OrgUnitRow]:
    """Every unit the query selects, by numeric-aware id: the lists take no `sortBy` and are
    not paged."""
    query = _where(kind, seen, conditions, search)
    async with reads.connection() as conn:
        rows = await conn.fetch(
            f"SELECT {COLUMNS} FROM ({_UNITS}) u WHERE {query.clause} ORDER BY length(u.id), u.id",
            *query.params,
        )
    return [row_of(r) for r in rows]


async def count(
    reads: Reads,
    kind: ScopeKind,
    seen: Set[ScopeRef],
    conditions: Sequence[Condition],
    *,
    search: str | None,
) -> int:
    query = _where(kind, seen, conditions, search)
    async with reads.connection() as conn:
        row = await conn.fetchrow(
            f"SELECT count(*) FROM ({_UNITS}) u WHERE {query.clause}", *query.params
        )
    assert row is not None  # an aggregate always answers
    return int(row[0])


async def names(reads: Reads, refs: Iterable[ScopeRef]) -> dict[ScopeRef, str]:
    """The names of these units the read model holds, one query per kind."""
    wanted = list(refs)
    found: dict[ScopeRef, str] = {}
    async with reads.connection() as conn:
        for kind in _KINDS:
            ids = {ref.id for ref in wanted if ref.kind == kind}
            if ids:
                named = await org_units.names_of(conn, kind, ids)
                found.update({ScopeRef(kind, i): n for i, n in named.items()})
    return found
