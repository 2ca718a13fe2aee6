"""A page of the workload read model in Run:ai's list grammar, decided in SQL (seen projects,
deleted or live, `filterBy`, `search` by name, newest first), so a list costs a page. Fields read
as the list shows them (infra/http/workload_views.py): a department's live name; missing, ''."""

from collections.abc import Sequence
from typing import Final

from projections.executor import Executor
from projections.list_grammar import Condition
from projections.list_sql import Where
from projections.workload_catalogue import COLUMNS, WorkloadRow, row_of

_TEXT: Final = {
    "type": "'distributed'",
    "name": "w.name",
    "clusterId": "w.cluster_id::text",
    "projectId": "w.project_id",
    "projectName": "(w.request->>'projectName')",
    "departmentId": "coalesce(w.department_id, '')",
    "departmentName": "coalesce(d.name, '')",
    "submittedBy": "w.created_by",
    "phase": "w.actual_phase",
    "distributedFramework": "coalesce(w.framework, '')",
    "category": "'Train'",
    "priorityClassName": "coalesce(w.request->'snapshot'->'spec'->>'priorityClass', '')",
    "templateId": "coalesce(w.template_id::text, '')",
}
_DATES: Final = {
    "createdAt": "w.created_at",
    "deletedAt": "w.deleted_at",
    "completedAt": "w.completed_at",
    "phaseUpdatedAt": "w.phase_updated_at",
}
_FROM: Final = (
    "workload_catalogue w LEFT JOIN org_units d ON d.kind = 'department' AND d.id = w.department_id"
)
# Newest first; ties (one transaction's requests) by id, as an index on both serves it.
_ORDER: Final = "created_at DESC, workload_id"


def _query(
    project_ids: Sequence[str],
    *,
    deleted: bool,
    conditions: Sequence[Condition],
    search: str | None,
) -> Where:
    query = Where(_TEXT, _DATES)
    query.where.append(f"w.project_id = ANY({query.param(list(project_ids))}::text[])")
    query.where.append(f"(w.deleted_at IS NOT NULL) = {query.param(deleted)}")
    for condition in conditions:
        query.condition(condition)
    if search:
        query.search(search, ("w.name",))
    return query


async def page(
    conn: Executor,
    project_ids: Sequence[str],
    conditions: Sequence[Condition],
    *,
    deleted: bool,
    search: str | None,
    offset: int,
    limit: int,
) -> tuple[list[WorkloadRow], bool]:
    """The page of the projects' workloads that the query selects, and whether more follow."""
    query = _query(project_ids, deleted=deleted, conditions=conditions, search=search)
    # The page is chosen on narrow rows; only its rows are then read whole.
    rows = await conn.fetch(
        f"SELECT {COLUMNS} FROM workload_catalogue JOIN ("
        f" SELECT w.workload_id FROM {_FROM} WHERE {query.clause}"
        f" ORDER BY w.created_at DESC, w.workload_id"
        f" OFFSET {query.param(offset)} LIMIT {query.param(limit + 1)}"
        f") AS chosen USING (workload_id) ORDER BY {_ORDER}",
        *query.params,
    )
    return [row_of(row) for row in rows[:limit]], len(rows) > limit


async def count(
    conn: Executor,
    project_ids: Sequence[str],
    conditions: Sequence[Condition],
    *,
    deleted: bool,
    search: str | None,
) -> int:
    """How many of the projects' workloads the query selects."""
    query = _query(project_ids, deleted=deleted, conditions=conditions, search=search)
    row = await conn.fetchrow(f"SELECT count(*) FROM {_FROM} WHERE {query.clause}", *query.params)
    assert row is not None  # an aggregate always answers
    return int(row[0])
