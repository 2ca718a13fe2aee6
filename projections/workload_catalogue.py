"""Read model of workloads: one row per workload (deleted ones kept, with `deleted_at`), its
phases folded by the domain's own `evolve`, so the read side never disagrees with the write side
about what an event means."""

from datetime import datetime
from typing import Any, Final
from uuid import UUID

import asyncpg
import msgspec

from domain import workloads
from domain.events import (
    RecordedEvent,
    WorkloadDeleted,
    WorkloadPodsChanged,
    WorkloadPodsObserved,
    WorkloadRequested,
    WorkloadSubmitted,
)
from domain.workloads import WORKLOAD_EVENTS, Workload
from projections import workload_pods
from projections.executor import Executor

NAME: Final = "workload_catalogue"

_encode = msgspec.json.Encoder().encode
_decode_request = msgspec.json.Decoder(WorkloadRequested).decode
_decode_manifests = msgspec.json.Decoder(list[dict[str, Any]]).decode


class WorkloadRow(msgspec.Struct, frozen=True, kw_only=True):
    workload: Workload
    created_at: datetime
    created_by: str
    updated_at: datetime
    phase_updated_at: datetime
    completed_at: datetime | None
    deleted_at: datetime | None


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice (each row carries its stream version)."""
    event = recorded.event
    if not isinstance(event, WORKLOAD_EVENTS):
        return
    at, version = recorded.recorded_at, recorded.version
    if isinstance(event, WorkloadRequested):
        await conn.execute(
            "INSERT INTO workload_catalogue (workload_id, name, project_id, department_id,"
            " cluster_id, template_id, framework, request, desired_phase, actual_phase, run,"
            " submitted_run, created_at, created_by, updated_at, phase_updated_at, version)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, 'Running', 'Creating', 1, 0,"
            " $9, $10, $9, $9, $11) ON CONFLICT (workload_id) DO NOTHING",
            event.workload_id, event.name, event.project_id, event.department_id,
            event.cluster_id, event.snapshot.template_id,
            event.snapshot.spec.distributed_framework, _encode(event).decode(), at,
            recorded.metadata.actor_subject, version,
        )  # fmt: skip
        return
    row = await get_workload(conn, recorded.stream_id)
    if row is None or row.workload.version >= version:
        return  # applied already
    before = row.workload
    after = workloads.evolve(before, event)
    made = None  # what the backend made of the run, when this event says it took it
    if isinstance(event, WorkloadSubmitted) and after.submitted_run > before.submitted_run:
        made = _encode(event.manifests).decode()
    await conn.execute(
        "UPDATE workload_catalogue SET desired_phase = $2, actual_phase = $3,"
        " manifests = COALESCE($11::jsonb, manifests),"
        " phase_message = $4, run = $5, submitted_run = $6, backend = $7, updated_at = $8,"
        " phase_updated_at = CASE WHEN actual_phase = $3 THEN phase_updated_at ELSE $8 END,"
        " completed_at = CASE WHEN $3 IN ('Completed', 'Failed') AND completed_at IS NULL"
        "   THEN $8 ELSE completed_at END,"
        " deleted_at = CASE WHEN $9 AND deleted_at IS NULL THEN $8 ELSE deleted_at END,"
        " version = $10 WHERE workload_id = $1 AND version < $10",
        recorded.stream_id, after.desired, after.actual, after.reason, after.run,
        after.submitted_run, after.backend, at, after.deleted, version, made,
    )  # fmt: skip
    if isinstance(event, WorkloadPodsChanged) and event.run == after.run:
        await workload_pods.change(conn, before.request, event, at)
    elif isinstance(event, WorkloadPodsObserved) and event.run == after.run:
        await workload_pods.replace(conn, before.request, event, at)
    elif isinstance(event, WorkloadDeleted):
        await workload_pods.deleted(conn, event.workload_id, at)


COLUMNS: Final = """request::text AS request, desired_phase, actual_phase, phase_message, run,
    submitted_run, backend, created_at, created_by, updated_at, phase_updated_at, completed_at,
    deleted_at, version"""


def row_of(record: asyncpg.Record) -> WorkloadRow:
    request = _decode_request(record["request"])
    workload = Workload(
        id=request.workload_id,
        request=request,
        desired=record["desired_phase"],
        actual=record["actual_phase"],
        reason=record["phase_message"],
        run=record["run"],
        submitted_run=record["submitted_run"],
        backend=record["backend"],
        deleted=record["deleted_at"] is not None,
        version=record["version"],
    )
    return WorkloadRow(
        workload=workload,
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        phase_updated_at=record["phase_updated_at"],
        completed_at=record["completed_at"],
        deleted_at=record["deleted_at"],
    )


async def get_workload(conn: Executor, workload_id: UUID) -> WorkloadRow | None:
    row = await conn.fetchrow(
        f"SELECT {COLUMNS} FROM workload_catalogue WHERE workload_id = $1", workload_id
    )
    return None if row is None else row_of(row)


class Made(msgspec.Struct, frozen=True, kw_only=True):
    """What the backend made of the workload's latest submitted run (`run` 0: none yet)."""

    run: int
    backend: str | None
    manifests: list[dict[str, Any]]


async def made_of(conn: Executor, workload_id: UUID) -> Made | None:
    row = await conn.fetchrow(
        "SELECT submitted_run, backend, manifests::text AS manifests FROM workload_catalogue"
        " WHERE workload_id = $1",
        workload_id,
    )
    if row is None:
        return None
    return Made(
        run=row["submitted_run"],
        backend=row["backend"],
        manifests=_decode_manifests(row["manifests"]),
    )


async def unsettled(conn: Executor) -> list[UUID]:
    """Workloads whose backend may not yet match what their users asked: a run not submitted
    yet, or a stop not confirmed yet."""
    rows = await conn.fetch(
        "SELECT workload_id FROM workload_catalogue"
        " WHERE actual_phase NOT IN ('Completed', 'Failed')"
        " AND ((desired_phase = 'Running' AND submitted_run < run)"
        "      OR (desired_phase <> 'Running' AND actual_phase <> 'Stopped'))"
        " ORDER BY created_at"
    )
    return [row["workload_id"] for row in rows]


async def phase_counts(conn: Executor) -> dict[str, int]:
    """How many workloads not deleted are in each phase (a count of the whole table: asked
    once per metrics scrape, not per request)."""
    rows = await conn.fetch(
        "SELECT actual_phase, count(*) AS n FROM workload_catalogue"
        " WHERE deleted_at IS NULL GROUP BY actual_phase"
    )
    return {row["actual_phase"]: int(row["n"]) for row in rows}


async def in_flight(conn: Executor, backend: str) -> list[UUID]:
    """Workloads whose current run `backend` took and that are pending or running: what it may
    have finished or lost without a report that arrived."""
    rows = await conn.fetch(
        "SELECT workload_id FROM workload_catalogue"
        " WHERE desired_phase = 'Running' AND submitted_run = run"
        " AND actual_phase IN ('Pending', 'Running') AND backend = $1 ORDER BY created_at",
        backend,
    )
    return [row["workload_id"] for row in rows]
