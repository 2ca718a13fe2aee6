"""The submitter's policy: bring a workload's backend in line with what its stream says now.

It reconciles rather than replays: whichever workload event arrives (requested, suspended,
resumed, deleted, in any order, any number of times), the handler loads the stream and does what
the current state asks: submit the current run, or stop it. Backends are idempotent by job name
and outcome events carry deterministic ids, so redeliveries and racing submitters write each
outcome once.

Submitter, layer by layer: services/submitter.py what it decides, infra/workers/submitter.py its
process.
"""

from collections.abc import Callable
from uuid import UUID

from domain import workloads
from domain.events import EventMetadata, WorkloadEvent
from domain.workload_plans import plan_for
from domain.workloads import FINISHED, InvalidWorkloadError, Outcome, Workload
from services.errors import BackendRejectedError, VersionConflictError
from services.event_ids import event_ids_for
from services.ports import EventStore, Stream, WorkloadBackend
from services.workloads import load_workload

SUBMITTER = EventMetadata(actor_subject="submitter", actor_kind="system")
ATTEMPTS = 5  # appends retried on a concurrent change of the same workload


async def reconcile(workload_id: UUID, *, store: EventStore, backend: WorkloadBackend) -> None:
    """Submit or stop the workload's current run, as its stream asks; then record it."""
    stream = await store.load(workload_id)
    state = load_workload(stream.events)
    if state is None:
        return
    plan_run = state.run
    if _wants_submission(state):
        try:
            plan = plan_for(state.request, plan_run)
            submission = await backend.submit(plan)
        except (BackendRejectedError, InvalidWorkloadError) as error:
            await report(workload_id, plan_run, "failed", str(error), store=store)
            return
        after = await _record(
            store,
            workload_id,
            f"run/{plan_run}/submitted",
            lambda current: workloads.submitted(
                current, workload_id, plan_run, submission.backend, submission.manifests
            ),
            stream=stream,  # still current, unless someone wrote meanwhile (then: read again)
        )
        # A stop asked for while this submission was under way was handled before the run
        # existed: stop it now.
        if after is not None and after.desired != "Running" and after.run == plan_run:
            await backend.stop(plan, suspend=after.desired == "Stopped")
    elif _wants_stop(state):
        # Stopping what never started succeeds, so a run whose submission is not recorded yet
        # (another submitter is at it) is stopped too.
        await backend.stop(plan_for(state.request, plan_run), suspend=state.desired == "Stopped")
        await report(workload_id, plan_run, "stopped", None, store=store)


async def report(
    workload_id: UUID, run: int, outcome: Outcome, reason: str | None, *, store: EventStore
) -> None:
    """Record what the backend says became of run `run` (nothing if that changes nothing)."""
    await _record(
        store,
        workload_id,
        f"run/{run}/{outcome}",
        lambda current: workloads.reported(current, workload_id, run, outcome, reason),
    )


def _wants_submission(state: Workload) -> bool:
    return (
        state.desired == "Running"
        and state.submitted_run < state.run
        and state.actual not in FINISHED
    )


def _wants_stop(state: Workload) -> bool:
    return state.desired in ("Stopped", "Deleted") and state.actual not in (FINISHED | {"Stopped"})


async def _record(
    store: EventStore,
    workload_id: UUID,
    key: str,
    decide: Callable[[Workload | None], list[WorkloadEvent]],
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
                workload_id,
                events,
                expected_version=stream.version,
                metadata=SUBMITTER,
                event_ids=event_ids_for(f"workload/{key}", workload_id, len(events)),
            )
        except VersionConflictError:
            stream = None  # someone else wrote; decide again on what is there now
            continue
        if result.replayed:  # written before, by another submitter: what followed is unknown
            return load_workload((await store.load(workload_id)).events)
        return workloads.fold((*stream.events, *events))
    raise VersionConflictError(workload_id, expected=None, actual=None)
