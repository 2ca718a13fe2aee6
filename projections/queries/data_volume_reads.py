"""Data volumes from their catalogue with their projects' names: one by id, or a list or count
chosen, sorted and paged in SQL by Run:ai's `requestType` (originated in scopes the caller sees,
or usable in one project), `filterBy` over its document's fields and `search`."""

from collections.abc import Sequence, Set
from typing import Any, Final, Literal, get_args
from uuid import UUID

import asyncpg
import msgspec

from domain.org_units import UnknownScopeError
from domain.values import ScopeRef
from projections import data_volume_catalogue
from projections.data_volume_catalogue import COLUMNS, DataVolumeRow, row_of
from projections.list_grammar import Condition, Grammar
from projections.list_sql import Where
from projections.queries import Reads, Viewer

RequestType = Literal["Originated", "UsableInProject"]
SortField = Literal[
    "name", "projectId", "clusterId", "departmentId", "projectName", "createdAt", "createdBy",
    "phase",
]  # fmt: skip
GRAMMAR: Final = Grammar(get_args(SortField), dates=("createdAt",))
# Every data volume here is Ready once created (docs/api/assets.md, "Data volumes").
PHASE: Final = "Ready"

_FROM: Final = (
    "data_volume_catalogue d LEFT JOIN org_units o ON o.kind = 'project' AND o.id = d.project_id"
)
_TEXT: Final = {
    "name": "d.name",
    "projectId": "d.project_id",
    "clusterId": "d.cluster_id::text",
    "departmentId": "coalesce(d.department_id, '')",
    "projectName": "coalesce(o.name, '')",
    "createdBy": "d.created_by",
    "phase": f"'{PHASE}'",
}
_DATES: Final = {"createdAt": "d.created_at"}
# A project id that is a natural number (64 bits) sorts as a number: zero-padded to 20.
_NATURAL: Final = (
    "(d.project_id ~ '^[0-9]+$' AND (length(ltrim(d.project_id, '0')) < 19"
    " OR (length(ltrim(d.project_id, '0')) = 19"
    " AND ltrim(d.project_id, '0') <= '9223372036854775807')))"
)
# Every data volume has the same phase: sorted by it, they fall to their ids (and a constant is
# no key PostgreSQL sorts by).
_SORT: Final = {
    **{
        field: f'{expression} COLLATE "C"'
        for field, expression in _TEXT.items()
        if field != "phase"
    },
    "projectId": (
        f"(CASE WHEN {_NATURAL} AND length(d.project_id) < 20"
        " THEN lpad(d.project_id, 20, '0') ELSE d.project_id END) COLLATE \"C\""
    ),
    **_DATES,
}
# The fields a data volume may lack: those sort after every value (before, descending).
_MISSING: Final = {"departmentId": "d.department_id IS NULL", "projectName": "o.name IS NULL"}
_SEARCHED: Final = ("d.name", "d.description", "o.name")


class Listed(msgspec.Struct, frozen=True):
    row: DataVolumeRow
    project_name: str  # "" when the org tree's read model has no such project (yet)


def origin(row: DataVolumeRow) -> ScopeRef:
    return ScopeRef("project", row.project_id)


def shared_refs(row: DataVolumeRow) -> list[ScopeRef]:
    return [ScopeRef(s.scope_type, s.scope_id) for s in row.shared_scopes]  # type: ignore[arg-type]


def visible(row: DataVolumeRow, seen: Set[ScopeRef]) -> bool:
    """Seen by those who see its project or a scope it is shared with."""
    return origin(row) in seen or any(ref in seen for ref in shared_refs(row))


async def one(reads: Reads, datavolume_id: UUID) -> DataVolumeRow | None:
    async with reads.connection() as conn:
        return await data_volume_catalogue.get_one(conn, datavolume_id)


def _in(query: Where, scopes: Sequence[ScopeRef], kind: str, scope_id: str) -> str:
    kinds = query.param([s.kind for s in scopes])
    ids = query.param([s.id for s in scopes])
    return f"({kind}, {scope_id}) IN (SELECT * FROM unnest({kinds}::text[], {ids}::text[]))"


def _where(
    viewer: Viewer,
    request_type: RequestType,
    usable_in: str | None,
    conditions: Sequence[Condition],
    search: str | None,
) -> Where:
    """The rows the request asks for, of those the caller may see. UsableInProject needs a
    project the caller sees; the data volumes usable there are domain/data_volumes.py
    `usable_in`'s: they live in it or are shared with it or a scope above it."""
    query = Where(_TEXT, _DATES)
    if request_type == "Originated":
        if usable_in is not None:
            raise UnknownScopeError("project", usable_in, field="/usableInProjectId")
        projects = sorted(ref.id for ref in viewer.seen if ref.kind == "project")
        query.where.append(f"d.project_id = ANY({query.param(projects)}::text[])")
    else:
        if usable_in is None:
            raise UnknownScopeError("project", "", field="/usableInProjectId")
        project = ScopeRef("project", usable_in)
        lineage = viewer.lineages.get(project)
        if lineage is None or project not in viewer.seen:
            raise UnknownScopeError("project", usable_in, field="/usableInProjectId")
        held = _in(query, lineage, "'project'", "d.project_id")
        shared = _in(query, lineage, "s->>'scopeType'", "s->>'scopeId'")
        query.where.append(
            f"({held} OR EXISTS (SELECT 1 FROM jsonb_array_elements(d.shared_scopes) s"
            f" WHERE {shared}))"
        )
    for condition in conditions:
        query.condition(condition)
    if search:
        query.search(search, _SEARCHED)
    return query


async def page(
    reads: Reads,
    viewer: Viewer,
    request_type: RequestType,
    usable_in: str | None,
    conditions: Sequence[Condition],
    *,
    search: str | None,
    sort_by: SortField | None,
    descending: bool,
    offset: int,
    limit: int,
) -> tuple[list[Listed], bool]:
    """The page the request selects, by the field asked (by name when none), ties by id, so
    pages never overlap; and whether more follow."""
    query = _where(viewer, request_type, usable_in, conditions, search)
    field = sort_by or "name"
    direction = "DESC" if descending else "ASC"
    keys = [_MISSING.get(field), _SORT.get(field), "d.datavolume_id"]
    order = ", ".join(f"{key} {direction}" for key in keys if key is not None)
    rows = await _fetch(
        reads,
        f"SELECT {_columns()}, o.name AS project_name FROM {_FROM} WHERE {query.clause}"
        f" ORDER BY {order} OFFSET {query.param(offset)} LIMIT {query.param(limit + 1)}",
        query.params,
    )
    listed = [Listed(row_of(r), r["project_name"] or "") for r in rows[:limit]]
    return listed, len(rows) > limit


async def count(
    reads: Reads,
    viewer: Viewer,
    request_type: RequestType,
    usable_in: str | None,
    conditions: Sequence[Condition],
    *,
    search: str | None,
) -> int:
    query = _where(viewer, request_type, usable_in, conditions, search)
    rows = await _fetch(reads, f"SELECT count(*) FROM {_FROM} WHERE {query.clause}", query.params)
    return int(rows[0][0])


def _columns() -> str:
    return ", ".join(f"d.{column.strip()}" for column in COLUMNS.split(","))


async def _fetch(reads: Reads, sql: str, params: list[Any]) -> list[asyncpg.Record]:
    async with reads.connection() as conn:
        return await conn.fetch(sql, *params)
