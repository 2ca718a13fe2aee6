"""The submitter's reconciling policy over fakes of our ports: whatever message arrives, in any
order and any number of times, the backend ends up doing what the stream asks, once."""

from uuid import UUID

from domain import workloads
from domain.workload_plans import WorkloadPlan
from services import submitter
from services.errors import BackendRejectedError
from services.ports.event_store import Append
from services.ports.workload_backends import RunStatus, Submission
from tests.conftest import ACTOR
from tests.fakes import InMemoryStreams
from tests.workload_samples import requested_workload

ID = UUID("3f2b8c1d-9a4e-4f6b-8d2c-7e1a5b9c0d4f")


class RecordingBackend:
    name = "recording"

    def __init__(self, refuse: bool = False) -> None:
        self.calls: list[tuple[str, int]] = []
        self.refuse = refuse
        self.asked: list[int] = []  # the runs whose status it was asked
        self.seen: RunStatus | None = None  # what it answers

    async def submit(self, plan: WorkloadPlan) -> Submission:
        if self.refuse:
            raise BackendRejectedError(plan.job_name, "403 Forbidden")
        self.calls.append(("submit", plan.run))
        return Submission(backend=self.name)

    async def stop(self, plan: WorkloadPlan, *, suspend: bool = False) -> None:
        self.calls.append(("suspend" if suspend else "stop", plan.run))

    async def status(self, plan: WorkloadPlan) -> RunStatus | None:
        self.asked.append(plan.run)
        return self.seen


async def requested(store: InMemoryStreams) -> None:
    spec = {"distributedFramework": "TF", "numWorkers": 2, "image": "tf:2"}
    event = requested_workload(spec, name="tf", workload_id=ID)
    await store.append(Append(ID, [event], expected_version=0, metadata=ACTOR))


async def state(store: InMemoryStreams) -> workloads.Workload:
    found = workloads.fold((await store.load(ID)).events)
    assert found is not None
    return found


async def change(store: InMemoryStreams, decide: object) -> None:
    stream = await store.load(ID)
    events = decide(workloads.fold(stream.events), ID)  # type: ignore[operator]
    await store.append(Append(ID, events, expected_version=stream.version, metadata=ACTOR))


async def test_redeliveries_submit_once_and_record_once() -> None:
    store, backend = InMemoryStreams(), RecordingBackend()
    await requested(store)
    for _ in range(3):
        await submitter.reconcile(ID, store=store, backend=backend)
    assert backend.calls == [("submit", 1)]
    assert (await state(store)).actual == "Pending"
    assert (await store.load(ID)).version == 2


async def test_suspend_stops_and_resume_submits_the_next_run() -> None:
    store, backend = InMemoryStreams(), RecordingBackend()
    await requested(store)
    await submitter.reconcile(ID, store=store, backend=backend)
    await change(store, workloads.suspend)
    await submitter.reconcile(ID, store=store, backend=backend)
    await submitter.reconcile(ID, store=store, backend=backend)
    assert (await state(store)).actual == "Stopped"
    await change(store, workloads.resume)
    await submitter.reconcile(ID, store=store, backend=backend)
    # Suspended once (a backend that can keep the run's objects, suspended, does).
    assert backend.calls == [("submit", 1), ("suspend", 1), ("submit", 2)]
    now = await state(store)
    assert (now.run, now.actual) == (2, "Pending")
    # A late report from the first run changes nothing.
    await submitter.report(ID, 1, "failed", "killed", store=store)
    assert (await state(store)).actual == "Pending"


async def test_a_deleted_workload_is_stopped_for_good() -> None:
    store, backend = InMemoryStreams(), RecordingBackend()
    await requested(store)
    await submitter.reconcile(ID, store=store, backend=backend)
    await change(store, workloads.delete)
    await submitter.reconcile(ID, store=store, backend=backend)
    assert backend.calls == [("submit", 1), ("stop", 1)]


async def test_a_workload_suspended_before_it_was_submitted_never_starts() -> None:
    store, backend = InMemoryStreams(), RecordingBackend()
    await requested(store)
    await change(store, workloads.suspend)
    await submitter.reconcile(ID, store=store, backend=backend)
    assert ("submit", 1) not in backend.calls
    assert (await state(store)).actual == "Stopped"


async def test_a_refusal_for_good_fails_the_workload_with_the_reason() -> None:
    store = InMemoryStreams()
    await requested(store)
    await submitter.reconcile(ID, store=store, backend=RecordingBackend(refuse=True))
    failed = await state(store)
    assert (failed.actual, failed.reason) == ("Failed", "tf-3f2b8c1d: 403 Forbidden")


async def test_a_run_the_backend_took_is_recorded_as_the_backend_now_sees_it() -> None:
    """Asked to (the sweep), a run recorded as taken and unfinished is asked after: nothing
    said, nothing written; its end seen (a report that was lost, a process gone), that is
    recorded, once. A message's reconcile does not ask."""
    store, backend = InMemoryStreams(), RecordingBackend()
    await requested(store)
    await submitter.reconcile(ID, store=store, backend=backend, ask_backend=True)
    assert backend.asked == []  # just submitted: not asked
    await submitter.reconcile(ID, store=store, backend=backend)
    assert backend.asked == []
    await submitter.reconcile(ID, store=store, backend=backend, ask_backend=True)
    assert backend.asked == [1]
    assert (await store.load(ID)).version == 2
    backend.seen = RunStatus("running")
    await submitter.reconcile(ID, store=store, backend=backend, ask_backend=True)
    assert (await state(store)).actual == "Running"
    backend.seen = RunStatus("failed", "no process behind it after a submitter restart")
    for _ in range(2):
        await submitter.reconcile(ID, store=store, backend=backend, ask_backend=True)
    failed = await state(store)
    assert (failed.actual, failed.reason) == (
        "Failed",
        "no process behind it after a submitter restart",
    )
    assert (await store.load(ID)).version == 4
    assert backend.asked == [1, 1, 1]  # finished: not asked again
    assert backend.calls == [("submit", 1)]


async def test_a_run_taken_by_another_backend_is_not_asked_after() -> None:
    store, backend = InMemoryStreams(), RecordingBackend()
    await requested(store)
    await submitter.reconcile(ID, store=store, backend=backend)
    other = RecordingBackend()
    other.name = "other"
    other.seen = RunStatus("failed", "not mine")
    await submitter.reconcile(ID, store=store, backend=other, ask_backend=True)
    assert other.asked == []
    assert (await state(store)).actual == "Pending"
