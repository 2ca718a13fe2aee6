"""A workload in each of Run:ai's response shapes, and its history and events as Run:ai lists
them, built from its read-model row and its own event stream."""

from collections.abc import Mapping
from datetime import datetime
from typing import Final
from uuid import UUID, uuid5

from domain.events import (
    RecordedEvent,
    WorkloadDeleted,
    WorkloadEvent,
    WorkloadFailed,
    WorkloadPodsChanged,
    WorkloadPodsObserved,
    WorkloadRequested,
    WorkloadResumed,
    WorkloadRunning,
    WorkloadStopped,
    WorkloadSubmitted,
    WorkloadSucceeded,
    WorkloadSuspended,
)
from domain.workloads import WORKLOAD_EVENTS, Workload
from infra.http.workload_schemas import (
    Condition,
    DistributedWorkload,
    HistoryMeta,
    HistoryRecord,
    HistorySpec,
    InvolvedObject,
    PhaseUpdate,
    WorkloadEventWire,
)
from infra.http.workload_schemas import Workload as WorkloadWire
from projections.workload_catalogue import WorkloadRow
from services.history import WorkloadEntry

TENANT_ID: Final = 1
_EVENT_IDS: Final = UUID("7d2f1e0c-3b4a-4c5d-8e6f-9a0b1c2d3e4f")


def distributed_of(
    state: Workload, created_by: str, created_at: datetime, deleted_at: datetime | None
) -> DistributedWorkload:
    """The workload as Run:ai shows it, created when and by whom its first event says."""
    request = state.request
    snapshot = request.snapshot
    return DistributedWorkload(
        name=request.name,
        requested_name=request.requested_name,
        workload_id=request.workload_id,
        project_id=request.project_id,
        department_id=request.department_id,
        cluster_id=request.cluster_id,
        created_by=created_by,
        created_at=created_at,
        deleted_at=deleted_at,
        desired_phase=state.desired,
        actual_phase=state.actual,
        template_id=snapshot.template_id,
        template_version=snapshot.template_version,
        spec=snapshot.spec,
        master_spec_same_as_worker=snapshot.master_spec_same_as_worker,
        master_spec=snapshot.master,
    )


def workload_of(row: WorkloadRow, departments: Mapping[str, str]) -> WorkloadWire:
    state = row.workload
    request = state.request
    spec = request.snapshot.spec
    condition_time = row.phase_updated_at
    return WorkloadWire(
        type="distributed",
        name=request.name,
        id=request.workload_id,
        source="Control-plane",
        priority=None,
        priority_class_name=spec.priority_class or "",
        cluster_id=request.cluster_id,
        project_name=request.project_name,
        project_id=request.project_id,
        department_name=departments.get(request.department_id or "", ""),
        department_id=request.department_id or "",
        namespace=request.namespace,
        created_at=row.created_at,
        phase=state.actual,
        phase_message=state.reason,
        conditions=[
            Condition(
                type=state.actual,
                status="True",
                message=state.reason,
                last_transition_time=condition_time,
            )
        ],
        k8s_phase=state.actual,
        tenant_id=TENANT_ID,
        running_pods=_running_pods(state),
        phase_updated_at=row.phase_updated_at,
        k8s_phase_updated_at=row.phase_updated_at,
        updated_at=row.updated_at,
        deleted_at=row.deleted_at,
        completed_at=row.completed_at,
        category="Train",
        submitted_by=row.created_by,
        distributed_framework=spec.distributed_framework,
        images=sorted({i for i in (spec.image, _master_image(state)) if i}),
        preemptible=spec.preemptibility != "non-preemptible",
        command=spec.command,
        arguments=spec.args,
        additional_fields={
            "templateId": str(request.snapshot.template_id)
            if request.snapshot.template_id
            else None,
            "templateVersion": request.snapshot.template_version,
            "desiredPhase": state.desired,
            "run": state.run,
            "backend": state.backend,
        },
    )


def _master_image(state: Workload) -> str | None:
    master = state.request.snapshot.master
    return master.image if master else None


def _running_pods(state: Workload) -> int:
    if state.actual != "Running":
        return 0
    spec = state.request.snapshot.spec
    return (spec.num_workers or 0) + (1 if state.request.snapshot.master else 0)


_REASONS: Final[dict[type, tuple[str, str]]] = {
    WorkloadRequested: ("Requested", "Normal"),
    WorkloadSubmitted: ("Submitted", "Normal"),
    WorkloadRunning: ("Running", "Normal"),
    WorkloadSucceeded: ("Completed", "Normal"),
    WorkloadFailed: ("Failed", "Warning"),
    WorkloadSuspended: ("Suspended", "Normal"),
    WorkloadResumed: ("Resumed", "Normal"),
    WorkloadStopped: ("Stopped", "Normal"),
    WorkloadDeleted: ("Deleted", "Normal"),
    WorkloadPodsObserved: ("PodsChanged", "Normal"),
    WorkloadPodsChanged: ("PodsChanged", "Normal"),
}


def _message(event: WorkloadEvent, by: str) -> str:
    match event:
        case WorkloadRequested():
            snapshot = event.snapshot
            source = (
                f"template {snapshot.template_id} version {snapshot.template_version}"
                if snapshot.template_id
                else "its own spec"
            )
            return f"{by} submitted the workload from {source}"
        case WorkloadSubmitted():
            return f"run {event.run} submitted to the {event.backend} backend"
        case WorkloadFailed():
            return f"run {event.run} failed: {event.reason}"
        case WorkloadRunning() | WorkloadSucceeded() | WorkloadStopped():
            return f"run {event.run} {_REASONS[type(event)][0].lower()}"
        case WorkloadResumed():
            return f"{by} resumed the workload: run {event.run}"
        case WorkloadSuspended() | WorkloadDeleted():
            return f"{by} {_REASONS[type(event)][0].lower()} the workload"
        case WorkloadPodsObserved():
            phases = ", ".join(f"{pod.name} {pod.phase}" for pod in event.pods)
            return f"run {event.run} pods: {phases or 'none'}"
        case WorkloadPodsChanged():
            moves = [f"{pod.name} {pod.phase}" for pod in event.pods]
            moves += [f"{name} gone" for name in event.gone]
            return f"run {event.run} pods: {', '.join(moves)}"
        case _:
            return _REASONS[type(event)][0]


def events_of(row: WorkloadRow, recorded: list[RecordedEvent]) -> list[WorkloadEventWire]:
    request = row.workload.request
    involved = InvolvedObject(
        uid=request.workload_id,
        kind="DistributedWorkload",
        name=request.name,
        namespace=request.namespace,
    )
    found = []
    for entry in recorded:
        event = entry.event
        if not isinstance(event, WORKLOAD_EVENTS):
            continue
        reason, kind = _REASONS[type(event)]
        found.append(
            WorkloadEventWire(
                created_at=entry.recorded_at,
                id=uuid5(_EVENT_IDS, str(entry.event_id)),
                type="Warning" if kind == "Warning" else "Normal",
                cluster_id=request.cluster_id,
                message=_message(event, entry.metadata.actor_subject),
                reason=reason,
                source="trainplate",
                involved_object=involved,
            )
        )
    return found


def history_of(row: WorkloadRow, entries: list[WorkloadEntry]) -> list[HistoryRecord]:
    """Each event, followed by a phase update wherever it moved the phase."""
    records = []
    wires = events_of(row, [entry.recorded for entry in entries])
    for wire, entry in zip(wires, entries, strict=True):
        at, moved = entry.recorded.recorded_at, entry.moved
        records.append(
            HistoryRecord(
                meta=HistoryMeta(creation_timestamp=at, type="Event"),
                spec=HistorySpec(event=wire),
            )
        )
        if moved is not None:
            update = PhaseUpdate(phase=moved.actual, phase_message=moved.reason or "")
            records.append(
                HistoryRecord(
                    meta=HistoryMeta(creation_timestamp=at, type="PhaseUpdate"),
                    spec=HistorySpec(phase_update=update),
                )
            )
    return records
