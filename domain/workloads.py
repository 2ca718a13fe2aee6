"""Distributed workloads, a stream each: what a user wants (`desired`) apart from what the
backend reports (`actual`), and each start a numbered `run`, so a late report of an earlier run
cannot move the current one. Also: services/workloads.py, infra/http/workloads.py."""

from collections.abc import Iterable
from typing import Final, Literal, assert_never
from uuid import UUID

import msgspec

from domain import name_rules
from domain.errors import DomainError, InvalidHistoryError
from domain.events import (
    Event,
    PodObserved,
    WorkloadDeleted,
    WorkloadEvent,
    WorkloadFailed,
    WorkloadPodsChanged,
    WorkloadPodsObserved,
    WorkloadRequested,
    WorkloadResumed,
    WorkloadRunning,
    WorkloadSnapshot,
    WorkloadStopped,
    WorkloadSubmitted,
    WorkloadSucceeded,
    WorkloadSuspended,
)

DesiredPhase = Literal["Running", "Stopped", "Deleted"]
Phase = Literal[
    "Creating", "Pending", "Running", "Completed", "Failed", "Stopping", "Stopped", "Resuming",
    "Deleting",
]  # fmt: skip
Outcome = Literal["running", "succeeded", "failed", "stopped"]
FINISHED: Final = frozenset({"Completed", "Failed"})

WORKLOAD_EVENTS: Final = (
    WorkloadRequested, WorkloadSubmitted, WorkloadRunning, WorkloadSucceeded, WorkloadFailed,
    WorkloadSuspended, WorkloadResumed, WorkloadStopped, WorkloadDeleted, WorkloadPodsObserved,
    WorkloadPodsChanged,
)  # fmt: skip


class Workload(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    request: WorkloadRequested
    desired: DesiredPhase = "Running"
    actual: Phase = "Creating"
    reason: str | None = None
    run: int = 1
    submitted_run: int = 0
    backend: str | None = None
    deleted: bool = False
    pods: tuple[PodObserved, ...] = ()  # the current run's, as last observed
    version: int = 0

    @property
    def snapshot(self) -> WorkloadSnapshot:
        return self.request.snapshot


class WorkloadNotFoundError(DomainError):
    slug = "workload-not-found"

    def __init__(self, workload_id: UUID) -> None:
        super().__init__(f"workload {workload_id} does not exist")
        self.workload_id = workload_id


class InvalidWorkloadError(DomainError):
    """A submission that cannot become a workload; `field` points into the request body."""

    slug = "invalid-workload"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class WorkloadNotSavableError(DomainError):
    """The workload's specs cannot be a template in the scope asked: `workload_field` points
    into the workload (`/spec/...`), not into the request."""

    slug = "workload-not-savable"

    def __init__(self, workload_id: UUID, workload_field: str, reason: str) -> None:
        super().__init__(f"workload {workload_id} cannot be a template: {workload_field}: {reason}")
        self.workload_id = workload_id
        self.workload_field = workload_field
        self.reason = reason


class WorkloadStateError(DomainError):
    """The action does not fit the workload's phase (resume a running one, suspend a deleted
    one)."""

    slug = "workload-state"

    def __init__(self, workload_id: UUID, action: str, phase: str) -> None:
        super().__init__(f"cannot {action} workload {workload_id}: it is {phase}")
        self.workload_id = workload_id
        self.action = action
        self.phase = phase


def job_name(name: str, workload_id: UUID) -> str:
    """The backend's name for the workload: unique per workload even when a deleted workload's
    name is reused, and stable across redeliveries."""
    return f"{name}-{workload_id.hex[:8]}"


def check_name(name: str) -> None:
    name_rules.check(name, "/name", name_rules.WORKLOAD, refused=InvalidWorkloadError)


def evolve(state: Workload | None, event: WorkloadEvent) -> Workload:
    if isinstance(event, WorkloadRequested):
        return Workload(id=event.workload_id, request=event)
    if state is None:
        raise InvalidHistoryError(f"{event_name(event)} before workload.requested")
    current_run = getattr(event, "run", state.run) == state.run
    match event:
        case WorkloadSubmitted():
            actual: Phase = "Pending" if state.actual in ("Creating", "Resuming") else state.actual
            return msgspec.structs.replace(
                state, actual=actual, submitted_run=event.run, backend=event.backend
            )
        case WorkloadRunning():
            return _moved(state, current_run, "Running")
        case WorkloadSucceeded():
            return _moved(state, current_run, "Completed")
        case WorkloadFailed():
            return _moved(state, current_run, "Failed", event.reason)
        case WorkloadStopped():
            return _moved(state, current_run, "Stopped")
        case WorkloadSuspended():
            return msgspec.structs.replace(state, desired="Stopped", actual="Stopping")
        case WorkloadResumed():
            return msgspec.structs.replace(
                state, desired="Running", actual="Resuming", run=event.run, reason=None
            )
        case WorkloadDeleted():
            actual = state.actual if state.actual in FINISHED | {"Stopped"} else "Deleting"
            return msgspec.structs.replace(state, desired="Deleted", actual=actual, deleted=True)
        case WorkloadPodsObserved():
            return msgspec.structs.replace(state, pods=event.pods) if current_run else state
        case WorkloadPodsChanged():
            if not current_run:
                return state
            return msgspec.structs.replace(state, pods=changed(state.pods, event))
        case _:
            assert_never(event)


def _moved(
    state: Workload, current_run: bool, actual: Phase, reason: str | None = None
) -> Workload:
    if not current_run or state.actual in FINISHED:
        return state
    return msgspec.structs.replace(state, actual=actual, reason=reason)


def event_name(event: Event) -> str:
    return type(event).__name__


def fold(events: Iterable[Event]) -> Workload | None:
    return fold_on(None, events)


def fold_on(state: Workload | None, events: Iterable[Event]) -> Workload | None:
    """The workload once the events that follow `state` (a fold of the stream's first events)
    are applied: a fold resumed, where the stream's start need not be read again."""
    count = 0 if state is None else state.version
    for event in events:
        if not isinstance(event, WORKLOAD_EVENTS):
            raise InvalidHistoryError(f"{event_name(event)} in a workload stream")
        state = evolve(state, event)
        count += 1
    return None if state is None else msgspec.structs.replace(state, version=count)


def live(state: Workload | None, workload_id: UUID) -> Workload:
    if state is None or state.deleted:
        raise WorkloadNotFoundError(workload_id)
    return state


def request(state: Workload | None, event: WorkloadRequested) -> list[WorkloadEvent]:
    """Record the request. The service resolved the snapshot; this checks what it names."""
    if state is not None:
        raise WorkloadStateError(event.workload_id, "request", "requested already")
    check_name(event.name)
    if event.snapshot.spec.distributed_framework is None:
        raise InvalidWorkloadError("/spec/distributedFramework", "the framework is not set")
    return [event]


def suspend(state: Workload | None, workload_id: UUID) -> list[WorkloadEvent]:
    current = live(state, workload_id)
    if current.desired == "Stopped":
        return []
    if current.actual in FINISHED:
        raise WorkloadStateError(workload_id, "suspend", current.actual)
    return [WorkloadSuspended(workload_id=workload_id)]


def resume(state: Workload | None, workload_id: UUID) -> list[WorkloadEvent]:
    current = live(state, workload_id)
    if current.desired == "Running":
        return []
    return [WorkloadResumed(workload_id=workload_id, run=current.run + 1)]


def delete(state: Workload | None, workload_id: UUID) -> list[WorkloadEvent]:
    live(state, workload_id)
    return [WorkloadDeleted(workload_id=workload_id)]


def submitted(
    state: Workload | None,
    workload_id: UUID,
    run: int,
    backend: str,
    manifests: tuple[dict[str, object], ...] = (),
) -> list[WorkloadEvent]:
    """The backend took run `run`; nothing when that is known already or the run is stale."""
    current = _known(state, workload_id)
    if run != current.run or current.submitted_run >= run:
        return []
    return [
        WorkloadSubmitted(workload_id=workload_id, run=run, backend=backend, manifests=manifests)
    ]


def reported(
    state: Workload | None, workload_id: UUID, run: int, outcome: Outcome, reason: str | None
) -> list[WorkloadEvent]:
    """What the backend says of run `run`; nothing when it changes nothing."""
    current = _known(state, workload_id)
    if run != current.run or current.actual in FINISHED:
        return []
    match outcome:
        case "running":
            if current.actual == "Running" or current.desired != "Running":
                return []
            return [WorkloadRunning(workload_id=workload_id, run=run)]
        case "succeeded":
            return [WorkloadSucceeded(workload_id=workload_id, run=run)]
        case "failed":
            return [WorkloadFailed(workload_id=workload_id, run=run, reason=reason or "failed")]
        case "stopped":
            if current.actual == "Stopped":
                return []
            return [WorkloadStopped(workload_id=workload_id, run=run)]
        case _:
            assert_never(outcome)


def pods_observed(
    state: Workload | None, workload_id: UUID, run: int | None, pods: tuple[PodObserved, ...]
) -> list[WorkloadEvent]:
    """The backend sees run `run`'s replicas so (None: the current run's); nothing when that is
    what is known already, or of an earlier run."""
    current = _known(state, workload_id)
    run = current.run if run is None else run
    if run != current.run:
        return []
    seen = {pod.name: pod for pod in pods}  # a name reported twice: the last
    before = {pod.name: pod for pod in current.pods}
    new = tuple(pod for name, pod in sorted(seen.items()) if before.get(name) != pod)
    gone = tuple(sorted(name for name in before if name not in seen))
    if not new and not gone:
        return []
    return [WorkloadPodsChanged(workload_id=workload_id, run=run, pods=new, gone=gone)]


def changed(pods: tuple[PodObserved, ...], event: WorkloadPodsChanged) -> tuple[PodObserved, ...]:
    """A run's pods once `event` is applied to them, in name order."""
    gone = frozenset(event.gone)  # (a tuple's `in` made a report of N names gone N squared)
    kept = {pod.name: pod for pod in pods if pod.name not in gone}
    kept.update((pod.name, pod) for pod in event.pods)
    return tuple(pod for _, pod in sorted(kept.items()))


def _known(state: Workload | None, workload_id: UUID) -> Workload:
    if state is None:
        raise WorkloadNotFoundError(workload_id)
    return state
