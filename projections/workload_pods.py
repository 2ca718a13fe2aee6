"""Read model of the pods of each workload's current run, one row each as its backend last
reported it, kept by projections/workload_catalogue.py in the same transaction; lists decided in
SQL. How reports apply: docs/decisions/0024-read-models.md. Also: infra/http/workload_pods.py."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final
from uuid import UUID

import msgspec

from domain.events import (
    PodObserved,
    WorkloadPodsChanged,
    WorkloadPodsObserved,
    WorkloadRequested,
)
from domain.template_specs import ReplicaSpec
from projections.executor import Executor
from projections.list_sql import Where
from projections.template_queries import Condition

_encode = msgspec.json.Encoder().encode
_decode_pod = msgspec.json.Decoder(PodObserved).decode
_decode_object = msgspec.json.Decoder(dict[str, Any]).decode
# filterBy fields (Run:ai's PodsFilter) and sortBy fields (PodsSort) as columns; a revision and
# a node pool are not kept (there are neither here), so they read as empty: cast, as ORDER BY
# takes a bare constant for a column's position and refuses any other.
COLUMNS: Final = {
    "clusterId": "cluster_id::text",
    "workloadId": "workload_id::text",
    "revisionId": "''::text",
    "nodeName": "coalesce(node_name, '')",
    "currentNodepool": "''::text",
    "createdAt": "created_at",
    "completedAt": "completed_at",
    "deletedAt": "deleted_at",
}
DATES: Final = frozenset({"createdAt", "completedAt", "deletedAt"})


class PodRow(msgspec.Struct, frozen=True, kw_only=True):
    workload_id: UUID
    project_id: str
    cluster_id: UUID
    workload_name: str
    project_name: str
    priority_class: str
    pod: PodObserved
    requested: dict[str, Any]
    updated_at: datetime
    deleted_at: datetime | None


# A report's pods in one statement, whatever their number (docs/decisions/0024-read-models.md):
# $1..$8 what every row shares, $9..$15 each pod's columns; the change also drops the pods gone
# ($16) and updates those it names that are there already.
_PODS: Final = """
SELECT $1::uuid, p.name, $2::int, $3::text, $4::uuid, p.node_name, p.phase, p.created_at,
       p.completed_at, $5::timestamptz, $6::text, $7::text, $8::text, p.pod::jsonb,
       p.requested::jsonb
  FROM unnest($9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::timestamptz[],
              $14::text[], $15::text[])
       AS p(name, node_name, phase, created_at, completed_at, pod, requested)
"""
_COLUMNS: Final = """workload_pods (workload_id, name, run, project_id, cluster_id, node_name,
    phase, created_at, completed_at, updated_at, workload_name, project_name, priority_class,
    pod, requested)"""
_INSERT: Final = f"INSERT INTO {_COLUMNS} {_PODS}"
_CHANGE: Final = f"""
WITH gone AS (DELETE FROM workload_pods WHERE workload_id = $1 AND name = ANY($16::text[]))
INSERT INTO {_COLUMNS} {_PODS}
ON CONFLICT (workload_id, name) DO UPDATE
   SET run = excluded.run, node_name = excluded.node_name, phase = excluded.phase,
       created_at = excluded.created_at, completed_at = excluded.completed_at,
       updated_at = excluded.updated_at, pod = excluded.pod, requested = excluded.requested
"""


async def replace(
    conn: Executor, request: WorkloadRequested, event: WorkloadPodsObserved, at: datetime
) -> None:
    """A whole set reported (`workload.pods_observed.v1`): it replaces the workload's pods."""
    await conn.execute("DELETE FROM workload_pods WHERE workload_id = $1", event.workload_id)
    if event.pods:
        await conn.execute(_INSERT, *_rows(request, event.workload_id, event.run, event.pods, at))


async def change(
    conn: Executor, request: WorkloadRequested, event: WorkloadPodsChanged, at: datetime
) -> None:
    """Changes reported (`workload.pods_changed.v1`): the pods gone go, the others are written
    as they now are."""
    rows = _rows(request, event.workload_id, event.run, event.pods, at)
    await conn.execute(_CHANGE, *rows, list(event.gone))


def _rows(
    request: WorkloadRequested,
    workload_id: UUID,
    run: int,
    pods: Sequence[PodObserved],
    at: datetime,
) -> tuple[object, ...]:
    """The arguments of `_PODS` for these pods."""
    snapshot = request.snapshot
    # Each role's requested resources, encoded once for all its replicas.
    worker = _encode(requested(snapshot.spec)).decode()
    master = worker if snapshot.master is None else _encode(requested(snapshot.master)).decode()
    return (
        workload_id, run, request.project_id, request.cluster_id, at, request.name,
        request.project_name, snapshot.spec.priority_class or "",
        [pod.name for pod in pods], [pod.node_name for pod in pods], [pod.phase for pod in pods],
        [pod.created_at for pod in pods], [pod.completed_at for pod in pods],
        [_encode(pod).decode() for pod in pods],
        [worker if pod.role == "worker" else master for pod in pods],
    )  # fmt: skip


async def deleted(conn: Executor, workload_id: UUID, at: datetime) -> None:
    await conn.execute(
        "UPDATE workload_pods SET deleted_at = $2, updated_at = $2"
        " WHERE workload_id = $1 AND deleted_at IS NULL",
        workload_id, at,
    )  # fmt: skip


def requested(spec: ReplicaSpec) -> dict[str, Any]:
    """A replica's requested resources in Run:ai's shape (PodRequestResources)."""
    compute = spec.compute
    if compute is None:
        return {}
    found: dict[str, Any] = {}
    if compute.gpu_request_type is not None:
        found["gpuRequestType"] = compute.gpu_request_type
    gpu = compute.gpu_portion_request
    if gpu is None and compute.gpu_devices_request is not None:
        gpu = float(compute.gpu_devices_request)
    pairs = (
        ("gpu", gpu, compute.gpu_portion_limit),
        ("gpuMemory", compute.gpu_memory_request, compute.gpu_memory_limit),
        ("cpu", compute.cpu_core_request, compute.cpu_core_limit),
        ("cpuMemory", compute.cpu_memory_request, compute.cpu_memory_limit),
    )
    for name, request, limit in pairs:
        if request is not None or limit is not None:
            found[name] = {"request": request, "limit": limit}
    extended = [
        {"resource": e.resource, "quantity": e.quantity}
        for e in compute.extended_resources or ()
        if not e.exclude and e.quantity is not None
    ]
    if extended:
        found["extendedResources"] = extended
    return found


class Query(msgspec.Struct, frozen=True, kw_only=True):
    """What a pod list asks: `project_ids` None is every project."""

    project_ids: list[str] | None
    deleted: bool = False
    workload_id: UUID | None = None
    conditions: Sequence[Condition] = ()
    completed: bool | None = None
    search: str | None = None


_TEXT: Final = {field: column for field, column in COLUMNS.items() if field not in DATES}
_DATES: Final = {field: column for field, column in COLUMNS.items() if field in DATES}


def _where(query: Query) -> tuple[str, list[Any]]:
    """The list grammar's conditions (projections/list_sql.py), a missing time differing from
    every time, with the pods' own: the projects, deleted or not, one workload, completed."""
    where = Where(_TEXT, _DATES, missing_time_differs=True)
    projects, deleted = where.param(query.project_ids), where.param(query.deleted)
    where.where += [
        f"({projects}::text[] IS NULL OR project_id = ANY({projects}))",
        f"(deleted_at IS NOT NULL) = {deleted}",
    ]
    if query.workload_id is not None:
        where.where.append(f"workload_id = {where.param(query.workload_id)}")
    for condition in query.conditions:
        where.condition(condition)
    if query.completed is not None:
        where.where.append(f"(phase IN ('Succeeded', 'Failed')) = {where.param(query.completed)}")
    if query.search:
        where.search(query.search, ("name", "workload_name"))
    return where.clause, where.params


async def page(
    conn: Executor,
    query: Query,
    *,
    sort_by: str | None,
    descending: bool,
    offset: int,
    limit: int,
) -> tuple[list[PodRow], bool]:
    """The pods the query selects, on the page asked, and whether more follow."""
    where, params = _where(query)
    direction = "DESC" if descending else "ASC"
    order = f"{COLUMNS[sort_by or 'createdAt']} {direction}, workload_id, name"
    rows = await conn.fetch(
        "SELECT workload_id, project_id, cluster_id, workload_name, project_name,"
        " priority_class, pod::text AS pod, requested::text AS requested, updated_at,"
        f" deleted_at FROM workload_pods WHERE {where} ORDER BY {order}"
        f" OFFSET {offset:d} LIMIT {limit + 1:d}",
        *params,
    )
    found = [
        PodRow(
            workload_id=row["workload_id"],
            project_id=row["project_id"],
            cluster_id=row["cluster_id"],
            workload_name=row["workload_name"],
            project_name=row["project_name"],
            priority_class=row["priority_class"],
            pod=_decode_pod(row["pod"]),
            requested=_decode_object(row["requested"]),
            updated_at=row["updated_at"],
            deleted_at=row["deleted_at"],
        )
        for row in rows[:limit]
    ]
    return found, len(rows) > limit


async def count(conn: Executor, query: Query) -> int:
    where, params = _where(query)
    row = await conn.fetchrow(f"SELECT count(*) FROM workload_pods WHERE {where}", *params)
    assert row is not None  # an aggregate always answers
    return int(row[0])
