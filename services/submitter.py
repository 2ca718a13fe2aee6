"""The submitter's policy: bring a workload's backend in line with what its stream says now. It
reconciles rather than replays, so any of its events, in any order, any number of times, does it.
Also: infra/workers/submitter.py; why so, docs/decisions/0022-process-managers.md."""

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import NamedTuple, TypeVar
from uuid import UUID

from domain import workloads
from domain.events import EventMetadata, WorkloadEvent
from domain.workload_plans import WorkloadPlan, plan_for
from domain.workloads import FINISHED, InvalidWorkloadError, Outcome, Workload
from services.errors import BackendRejectedError, VersionConflictError
from services.event_ids import event_ids_for
from services.ports.event_store import Append, EventStore, OneAppend, Stream
from services.ports.workload_backends import WorkloadBackend
from services.workloads import load_workload

SUBMITTER = EventMetadata(actor_subject="submitter", actor_kind="system")
ATTEMPTS = 5  # appends retried on a concurrent change of the same workload

Decide = Callable[[Workload | None], list[WorkloadEvent]]
T = TypeVar("T")


class _Step(NamedTuple):
    """What the backend did for a workload, to record: the outcome's idempotency key, what it
    makes of the state it lands on, and for a submission its plan (the run is stopped when a
    stop was asked for while the submission was under way)."""

    key: str
    decide: Decide
    submitted: WorkloadPlan | None = None


async def reconcile(
    workload_id: UUID,
    *,
    store: EventStore,
    backend: WorkloadBackend,
    cluster: UUID | None = None,
    ask_backend: bool = False,
) -> None:
    """Submit or stop the workload's current run, as its stream asks; then record it. With a
    `cluster`, only a workload of that cluster: another's is its own submitter's. With
    `ask_backend`, a run it took and has not finished is recorded as it now sees it."""
    stream = await store.load(workload_id)
    step = await _act(workload_id, stream, backend, cluster, ask_backend)
    if step is None:
        return
    # The stream is still current, unless someone wrote meanwhile (then: read again).
    after = await _record(store, workload_id, step.key, step.decide, stream=stream)
    if (stop := _stop_after(step, after)) is not None:
        plan, suspend = stop
        await backend.stop(plan, suspend=suspend)


async def reconcile_many(
    workload_ids: Iterable[UUID],
    *,
    store: EventStore,
    backend: WorkloadBackend,
    cluster: UUID | None = None,
    ask_backend: bool = False,
) -> dict[UUID, Exception]:
    """`reconcile` for each workload: one read of all their streams, one append of all their
    outcomes (again for those another writer got to first); returns those not reconciled, with
    why. A store failure raises; what was recorded stays, and a redelivery finds it done."""
    ids = sorted(set(workload_ids))  # one order of appends for every submitter: no deadlock
    streams = await store.load_many(ids)
    acted = await _each(
        ids, lambda i: _act(i, streams.get(i, _EMPTY), backend, cluster, ask_backend)
    )
    failed = {i: r for i, r in acted.items() if isinstance(r, Exception)}
    steps = {i: r for i, r in acted.items() if isinstance(r, _Step)}
    after, lost = await _record_many(store, steps, streams)
    failed |= {i: VersionConflictError(i, expected=None, actual=None) for i in lost}
    stops = {}
    for workload_id, step in steps.items():
        if workload_id in after and (stop := _stop_after(step, after[workload_id])) is not None:
            stops[workload_id] = stop
    stopped = await _each(stops, lambda i: backend.stop(stops[i][0], suspend=stops[i][1]))
    return failed | {i: r for i, r in stopped.items() if isinstance(r, Exception)}


async def report(
    workload_id: UUID, run: int, outcome: Outcome, reason: str | None, *, store: EventStore
) -> None:
    """Record what the backend says became of run `run` (nothing if that changes nothing)."""
    step = _reported(workload_id, run, outcome, reason)
    await _record(store, workload_id, step.key, step.decide)


async def _act(
    workload_id: UUID,
    stream: Stream,
    backend: WorkloadBackend,
    cluster: UUID | None,
    ask_backend: bool = False,
) -> _Step | None:
    """Ask of the backend what the stream's current state asks; say what to record of it."""
    state = load_workload(stream.events)
    if state is None or (cluster is not None and state.request.cluster_id != cluster):
        return None
    run = state.run
    if _wants_submission(state):
        try:
            plan = plan_for(state.request, run)
            submission = await backend.submit(plan)
        except (BackendRejectedError, InvalidWorkloadError) as error:
            return _reported(workload_id, run, "failed", str(error))

        def submitted(current: Workload | None) -> list[WorkloadEvent]:
            return workloads.submitted(
                current, workload_id, run, submission.backend, submission.manifests
            )

        return _Step(f"run/{run}/submitted", submitted, plan)
    if _wants_stop(state):
        # Stopping what never started succeeds, so a run whose submission is not recorded yet
        # (another submitter is at it) is stopped too.
        await backend.stop(plan_for(state.request, run), suspend=state.desired == "Stopped")
        return _reported(workload_id, run, "stopped", None)
    if ask_backend and _in_flight(state, backend.name):
        seen = await backend.status(plan_for(state.request, run))
        if seen is not None:
            return _reported(workload_id, run, seen.outcome, seen.reason)
    return None


def _stop_after(step: _Step, after: Workload | None) -> tuple[WorkloadPlan, bool] | None:
    """The run to stop once its submission is recorded, and whether it is suspended (to resume
    later) rather than stopped for good: a stop asked for while the submission was under way
    was handled before the run existed."""
    plan = step.submitted
    if plan is None or after is None or after.desired == "Running" or after.run != plan.run:
        return None
    return plan, after.desired == "Stopped"


def _outcome_id(workload_id: UUID, key: str) -> UUID:
    """The id of the one event an outcome records: a redelivery's is the same, and writes
    nothing."""
    (event_id,) = event_ids_for(f"workload/{key}", workload_id, 1)
    return event_id


def _reported(workload_id: UUID, run: int, outcome: Outcome, reason: str | None) -> _Step:
    def decide(current: Workload | None) -> list[WorkloadEvent]:
        return workloads.reported(current, workload_id, run, outcome, reason)

    return _Step(f"run/{run}/{outcome}", decide)


def _wants_submission(state: Workload) -> bool:
    return (
        state.desired == "Running"
        and state.submitted_run < state.run
        and state.actual not in FINISHED
    )


def _in_flight(state: Workload, backend: str) -> bool:
    """Its current run was taken by this backend, and is believed pending or running."""
    return (
        state.desired == "Running"
        and state.submitted_run == state.run
        and state.actual in ("Pending", "Running")
        and state.backend == backend
    )


def _wants_stop(state: Workload) -> bool:
    return state.desired in ("Stopped", "Deleted") and state.actual not in (FINISHED | {"Stopped"})


async def _record(
    store: EventStore,
    workload_id: UUID,
    key: str,
    decide: Decide,
    *,
    stream: Stream | None = None,
) -> Workload | None:
    """Append what `decide` makes of the current state, with ids derived from `key`; return
    the workload as it stands afterwards."""
    for _ in range(ATTEMPTS):
        if stream is None:
            stream = await store.load(workload_id)
        events = decide(load_workload(stream.events))
        if not events:
            return load_workload(stream.events)
        try:
            result = await store.append(
                Append(
                    workload_id,
                    events,
                    expected_version=stream.version,
                    metadata=SUBMITTER,
                    event_ids=event_ids_for(f"workload/{key}", workload_id, len(events)),
                )
            )
        except VersionConflictError:
            stream = None  # someone else wrote; decide again on what is there now
            continue
        if result.replayed:  # written before, by another submitter: what followed is unknown
            return load_workload((await store.load(workload_id)).events)
        return workloads.fold((*stream.events, *events))
    raise VersionConflictError(workload_id, expected=None, actual=None)


async def _record_many(
    store: EventStore, steps: Mapping[UUID, _Step], streams: Mapping[UUID, Stream]
) -> tuple[dict[UUID, Workload | None], list[UUID]]:
    """`_record` for many workloads in one statement; an outcome another writer (or an earlier
    delivery) got to first is read again and decided anew. Returns each workload as it now
    stands, and those still contended after ATTEMPTS reads."""
    after: dict[UUID, Workload | None] = {}
    pending = list(steps)
    for _ in range(ATTEMPTS):
        appends, folded = [], {}
        for workload_id in pending:
            stream = streams.get(workload_id, _EMPTY)
            state = load_workload(stream.events)
            events = steps[workload_id].decide(state)
            if not events:
                after[workload_id] = state
                continue
            (event,) = events  # an outcome is one event (workloads.submitted, .reported)
            appends.append(
                OneAppend(
                    stream_id=workload_id,
                    event=event,
                    expected_version=stream.version,
                    event_id=_outcome_id(workload_id, steps[workload_id].key),
                )
            )
            folded[workload_id] = (*stream.events, event)
        if not appends:
            return after, []
        taken = await store.append_each(appends, metadata=SUBMITTER)
        for workload_id in taken:
            after[workload_id] = workloads.fold(folded[workload_id])
        pending = [a.stream_id for a in appends if a.stream_id not in taken]
        if not pending:
            return after, []
        streams = await store.load_many(pending)
    return after, pending


async def _each(
    ids: Iterable[UUID], call: Callable[[UUID], Awaitable[T]]
) -> dict[UUID, T | Exception]:
    """`call` for each id, side by side (backends do I/O): one id's failure is its result and
    stops none of the others."""
    ids = list(ids)
    results = await asyncio.gather(*map(call, ids), return_exceptions=True)
    each: dict[UUID, T | Exception] = {}
    for workload_id, result in zip(ids, results, strict=True):
        if isinstance(result, BaseException) and not isinstance(result, Exception):
            raise result  # a cancellation, an interrupt: not the workload's
        each[workload_id] = result
    return each


_EMPTY = Stream(0, ())
