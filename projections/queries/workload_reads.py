"""Workloads from their catalogue, with the names of their departments, and their pods."""

from collections.abc import Iterable, Sequence
from uuid import UUID

from projections import org_units, workload_catalogue, workload_list, workload_pods
from projections.queries import Reads
from projections.template_queries import Condition
from projections.workload_catalogue import Made, WorkloadRow
from projections.workload_pods import PodRow
from projections.workload_pods import Query as PodQuery

DepartmentNames = dict[str, str]


def _department_ids(rows: Iterable[WorkloadRow]) -> set[str]:
    return {d for r in rows if (d := r.workload.request.department_id) is not None}


async def one(reads: Reads, workload_id: UUID) -> WorkloadRow | None:
    async with reads.connection() as conn:
        return await workload_catalogue.get_workload(conn, workload_id)


async def department_names(reads: Reads, rows: Iterable[WorkloadRow]) -> DepartmentNames:
    """The names of the rows' departments by id: one query for a whole page of workloads."""
    async with reads.connection() as conn:
        return await org_units.names_of(conn, "department", _department_ids(rows))


async def page(
    reads: Reads,
    project_ids: Sequence[str],
    conditions: Sequence[Condition],
    *,
    deleted: bool,
    search: str | None,
    offset: int,
    limit: int,
) -> tuple[list[WorkloadRow], DepartmentNames, bool]:
    """The page of the projects' workloads the query selects, the names of their departments,
    and whether more follow."""
    async with reads.connection() as conn:
        rows, more = await workload_list.page(
            conn, project_ids, conditions, deleted=deleted, search=search, offset=offset,
            limit=limit,
        )  # fmt: skip
        names = await org_units.names_of(conn, "department", _department_ids(rows))
    return rows, names, more


async def count(
    reads: Reads,
    project_ids: Sequence[str],
    conditions: Sequence[Condition],
    *,
    deleted: bool,
    search: str | None,
) -> int:
    async with reads.connection() as conn:
        return await workload_list.count(
            conn, project_ids, conditions, deleted=deleted, search=search
        )


async def made(reads: Reads, workload_id: UUID) -> Made | None:
    """What the backend made of the workload's latest submitted run."""
    async with reads.connection() as conn:
        return await workload_catalogue.made_of(conn, workload_id)


async def pods_page(
    reads: Reads,
    query: PodQuery,
    *,
    sort_by: str | None,
    descending: bool,
    offset: int,
    limit: int,
) -> tuple[list[PodRow], bool]:
    async with reads.connection() as conn:
        return await workload_pods.page(
            conn, query, sort_by=sort_by, descending=descending, offset=offset, limit=limit
        )


async def pods_count(reads: Reads, query: PodQuery) -> int:
    async with reads.connection() as conn:
        return await workload_pods.count(conn, query)
