"""The pods of workloads in Run:ai's shapes (`/api/v1/workloads/{id}/pods`, `/api/v1/workloads/pods`
and `/count`; docs/api/workloads.md): each workload's current run, as its backend last reported
it. Read from projections/workload_pods.py."""

from typing import Annotated, Final, Literal

from litestar import get
from litestar.di import NamedDependency
from litestar.params import QueryParameter

from infra.http.adapters import Adapters
from infra.http.callers import Caller, seen_scopes
from infra.http.lists import Count, FilterBy, Search, conditions_of
from infra.http.openapi_document import NOT_NEGATIVE
from infra.http.pod_actions import page_of_pods, pods_of
from infra.http.workload_schemas import PodList
from infra.http.workloads import BASE, ONE
from projections.list_grammar import Grammar
from projections.queries import workload_reads as queries
from projections.workload_catalogue import WorkloadRow
from projections.workload_pods import COLUMNS, DATES, Query
from services.errors import InvalidRequestError

SortField = Literal[
    "clusterId",
    "workloadId",
    "revisionId",
    "nodeName",
    "currentNodepool",
    "createdAt",
    "completedAt",
    "deletedAt",
]
_GRAMMAR: Final = Grammar(tuple(COLUMNS), dates=DATES)
PAGE = Annotated[int, QueryParameter(ge=1, le=500)]


@get(f"{BASE}/{{workload_id:uuid}}/pods", dependencies=ONE, tags=["Pods"])
async def pods_of_workload(
    row: NamedDependency[WorkloadRow],
    adapters: NamedDependency[Adapters],
    deleted: Annotated[bool | None, QueryParameter()] = None,
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: PAGE = 50,
    search: Search = None,
) -> PodList:
    return await pods_of(
        row, adapters, deleted=bool(deleted), offset=offset, limit=limit, search=search
    )


@get(f"{BASE}/pods", tags=["Pods"])
async def list_pods(
    request: Caller,
    adapters: NamedDependency[Adapters],
    deleted: Annotated[bool | None, QueryParameter()] = None,
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: PAGE = 50,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    sort_by: Annotated[SortField | None, QueryParameter(name="sortBy")] = None,
    filter_by: FilterBy = None,
    verbosity: Annotated[Literal["brief", "full"], QueryParameter()] = "brief",
    completed: Annotated[str, QueryParameter()] = "all",
    search: Search = None,
) -> PodList:
    query = await _query(request, deleted, filter_by, completed, search)
    descending = sort_order == "desc"
    return await page_of_pods(
        adapters, query, sort_by, descending, offset, limit, full=verbosity == "full"
    )


@get(f"{BASE}/pods/count", tags=["Pods"])
async def count_pods(
    request: Caller,
    adapters: NamedDependency[Adapters],
    deleted: Annotated[bool | None, QueryParameter()] = None,
    filter_by: FilterBy = None,
    search: Search = None,
) -> Count:
    query = await _query(request, deleted, filter_by, "all", search)
    return Count(count=await queries.pods_count(adapters.reads, query))


async def _query(
    request: Caller,
    deleted: bool | None,
    filter_by: list[str] | None,
    completed: str,
    search: str | None,
) -> Query:
    if completed not in ("all", "", "true", "false"):
        raise InvalidRequestError("/completed", "use true, false or all")
    conditions = conditions_of(_GRAMMAR, filter_by)
    seen = await seen_scopes(request)
    return Query(
        project_ids=[ref.id for ref in seen if ref.kind == "project"],
        deleted=bool(deleted),
        conditions=conditions,
        completed=None if completed in ("all", "") else completed == "true",
        search=search,
    )


POD_ROUTES: Final = (pods_of_workload, list_pods, count_pods)
