"""Which workloads a list or a count selects (`GET /api/v1/workloads`, `/count`): of the projects
the caller sees, deleted or live, meeting `filterBy` and `search`, newest first; decided in SQL
(projections/workload_list.py). Which fields: docs/decisions/0029-what-a-request-reads.md."""

from typing import Final

from infra.http.callers import Caller, seen_scopes
from infra.http.lists import conditions_of
from infra.http.workload_schemas import Workload
from infra.http.workload_views import workload_of
from projections.list_grammar import Grammar
from projections.queries import Reads
from projections.queries import workload_reads as queries

_DATES: Final = ("createdAt", "deletedAt", "completedAt", "phaseUpdatedAt")
GRAMMAR: Final = Grammar(
    (
        "type", "name", "clusterId", "projectId", "projectName", "departmentId", "departmentName",
        "submittedBy", "phase", "distributedFramework", "category", "priorityClassName",
        "templateId", *_DATES,
    ),
    dates=_DATES,
)  # fmt: skip


async def _projects(request: Caller) -> list[str]:
    return [ref.id for ref in await seen_scopes(request) if ref.kind == "project"]


async def page(
    reads: Reads,
    request: Caller,
    *,
    deleted: bool,
    filter_by: list[str] | None,
    search: str | None,
    offset: int,
    limit: int,
) -> tuple[list[Workload], bool]:
    """The page of the workloads the caller may see that the query selects, as the list shows
    them, and whether more follow."""
    conditions = conditions_of(GRAMMAR, filter_by)
    rows, departments, more = await queries.page(
        reads,
        await _projects(request),
        conditions,
        deleted=deleted,
        search=search,
        offset=offset,
        limit=limit,
    )
    return [workload_of(row, departments) for row in rows], more


async def count(
    reads: Reads,
    request: Caller,
    *,
    deleted: bool,
    filter_by: list[str] | None,
    search: str | None,
) -> int:
    """How many workloads the list would show for the same query."""
    conditions = conditions_of(GRAMMAR, filter_by)
    return await queries.count(
        reads, await _projects(request), conditions, deleted=deleted, search=search
    )
