"""Which workloads a list or a count selects (`GET /api/v1/workloads` and `/count`): those of
the projects the caller sees, deleted or live, that meet Run:ai's `filterBy` over the fields the
list shows (and `templateId`, ours) and its free-text `search` (a workload's name). Newest first.
The fields only a cluster's metrics would give (`allocatedGPU`, `idleGpus`, pending and running
times, `nodepool`, ...) are not fields here."""

from typing import Final

from infra.http.callers import Caller, seen_scopes
from infra.http.lists import conditions_of
from infra.http.workload_schemas import Workload
from infra.http.workload_views import department_names, workload_of
from projections import workload_catalogue
from projections.executor import Executor
from projections.list_grammar import (
    Grammar,
    Value,
    matches,
    searched,
)

_DATES: Final = ("createdAt", "deletedAt", "completedAt", "phaseUpdatedAt")
_GRAMMAR: Final = Grammar(
    (
        "type", "name", "clusterId", "projectId", "projectName", "departmentId", "departmentName",
        "submittedBy", "phase", "distributedFramework", "category", "priorityClassName",
        "templateId", *_DATES,
    ),
    dates=_DATES,
)  # fmt: skip


async def chosen(
    conn: Executor,
    request: Caller,
    *,
    deleted: bool,
    filter_by: list[str] | None,
    search: str | None,
) -> list[Workload]:
    """The workloads the caller may see that the query selects, as the list shows them."""
    conditions = conditions_of(_GRAMMAR, filter_by)
    seen = await seen_scopes(request)
    projects = [ref.id for ref in seen if ref.kind == "project"]
    rows = await workload_catalogue.list_workloads(conn, project_ids=projects, deleted=deleted)
    departments = await department_names(conn, rows)
    shown = [workload_of(row, departments) for row in rows]
    return [w for w in shown if matches(conditions, _fields(w)) and searched(search, (w.name,))]


def _fields(workload: Workload) -> dict[str, Value]:
    template = workload.additional_fields.get("templateId")
    return {
        "type": workload.type,
        "name": workload.name,
        "clusterId": str(workload.cluster_id),
        "projectId": workload.project_id,
        "projectName": workload.project_name,
        "departmentId": workload.department_id,
        "departmentName": workload.department_name,
        "submittedBy": workload.submitted_by,
        "phase": workload.phase,
        "distributedFramework": workload.distributed_framework,
        "category": workload.category,
        "priorityClassName": workload.priority_class_name,
        "templateId": template if isinstance(template, str) else None,
        "createdAt": workload.created_at,
        "deletedAt": workload.deleted_at,
        "completedAt": workload.completed_at,
        "phaseUpdatedAt": workload.phase_updated_at,
    }
