"""The submitter's batch over fakes of our ports: each workload of a batch is reconciled once
however many of its messages came, the backend is asked once per workload, every outcome is
recorded once (one read and one write for the batch), and a workload another writer got to
first is read again and recorded, never dropped."""

from collections import Counter
from collections.abc import Sequence
from uuid import UUID

from domain import workloads
from domain.events import Event, EventMetadata, WorkloadFailed, WorkloadSubmitted
from domain.workload_plans import WorkloadPlan
from services import submitter
from services.errors import BackendRejectedError, VersionConflictError
from services.ports.event_store import Append, OneAppend, Stream
from services.ports.workload_backends import RunStatus, Submission
from tests.conftest import ACTOR
from tests.fakes import InMemoryBatchAppender, InMemoryStreams
from tests.workload_samples import requested_workload

SPEC = {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "pytorch:2"}
FRESH, AGAIN, SUSPENDED, REFUSED, BROKEN, DELETED, CONTENDED = (UUID(int=i) for i in range(1, 8))
UNKNOWN = UUID(int=99)  # no stream at all


class RecordingBackend:
    """Records what it is asked; refuses for good, or fails for now, the workloads it is told."""

    name = "recording"

    def __init__(
        self, *, refuse: frozenset[UUID] = frozenset(), fail: frozenset[UUID] = frozenset()
    ) -> None:
        self.calls: list[tuple[str, UUID, int]] = []
        self.refuse = refuse
        self.fail = fail

    async def submit(self, plan: WorkloadPlan) -> Submission:
        self.calls.append(("submit", plan.workload_id, plan.run))
        if plan.workload_id in self.refuse:
            raise BackendRejectedError(plan.job_name, "403 Forbidden")
        if plan.workload_id in self.fail:
            raise RuntimeError("the cluster is unreachable")
        return Submission(backend=self.name)

    async def stop(self, plan: WorkloadPlan, *, suspend: bool = False) -> None:
        self.calls.append(("suspend" if suspend else "stop", plan.workload_id, plan.run))

    async def status(self, plan: WorkloadPlan) -> RunStatus | None:
        return None


class CountingAppender(InMemoryBatchAppender):
    """The fan-out's fake store, counting its reads and writes."""

    def __init__(self, store: InMemoryStreams) -> None:
        super().__init__(store)
        self.reads: list[int] = []  # streams asked for, per load_many
        self.writes: list[int] = []  # appends, per append_each

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        self.reads.append(len(stream_ids))
        return await super().load_many(stream_ids, remembered=remembered)

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        self.writes.append(len(appends))
        return await super().append_each(appends, metadata=metadata)


async def requested(store: InMemoryStreams, *workload_ids: UUID) -> None:
    for workload_id in workload_ids:
        event = requested_workload(SPEC, name=f"w{workload_id.int}", workload_id=workload_id)
        await store.append(Append(workload_id, [event], expected_version=0, metadata=ACTOR))


async def change(store: InMemoryStreams, workload_id: UUID, decide: object) -> None:
    stream = await store.load(workload_id)
    events = decide(workloads.fold(stream.events), workload_id)  # type: ignore[operator]
    await store.append(Append(workload_id, events, expected_version=stream.version, metadata=ACTOR))


async def types(store: InMemoryStreams, workload_id: UUID) -> list[str]:
    return [type(e).__name__ for e in (await store.load(workload_id)).events]


async def state(store: InMemoryStreams, workload_id: UUID) -> workloads.Workload:
    found = workloads.fold((await store.load(workload_id)).events)
    assert found is not None
    return found


async def test_a_mixed_batch_records_each_outcome_once_in_one_read_and_one_write() -> None:
    store = InMemoryStreams()
    await requested(store, FRESH, AGAIN, SUSPENDED, REFUSED, DELETED)
    await submitter.reconcile(AGAIN, store=store, backend=RecordingBackend())  # delivered before
    await submitter.reconcile(DELETED, store=store, backend=RecordingBackend())
    await change(store, DELETED, workloads.delete)
    await change(store, SUSPENDED, workloads.suspend)  # before it was ever submitted
    appender, backend = CountingAppender(store), RecordingBackend(refuse=frozenset({REFUSED}))
    # Two messages of one workload in the batch (requested, then deleted) are one workload.
    batch = [FRESH, AGAIN, SUSPENDED, REFUSED, DELETED, DELETED, UNKNOWN, FRESH]

    failed = await submitter.reconcile_many(batch, store=appender, backend=backend)

    assert failed == {}
    assert appender.reads == [6]
    assert appender.writes == [4]
    assert Counter(backend.calls) == Counter(
        {("submit", FRESH, 1): 1, ("submit", REFUSED, 1): 1, ("suspend", SUSPENDED, 1): 1,
         ("stop", DELETED, 1): 1}
    )  # fmt: skip
    assert await types(store, FRESH) == ["WorkloadRequested", "WorkloadSubmitted"]
    assert await types(store, AGAIN) == ["WorkloadRequested", "WorkloadSubmitted"]
    assert (await state(store, SUSPENDED)).actual == "Stopped"
    assert (await state(store, DELETED)).actual == "Stopped"
    refused = await state(store, REFUSED)
    assert (refused.actual, refused.reason) == ("Failed", f"w{REFUSED.int}-00000000: 403 Forbidden")
    assert {m.actor_subject for m in store.metadata[-4:]} == {"submitter"}

    # A redelivery of the whole batch finds everything done: no call, no write.
    calls = len(backend.calls)
    assert await submitter.reconcile_many(batch, store=appender, backend=backend) == {}
    assert len(backend.calls) == calls
    assert appender.writes == [4]


async def test_a_failure_for_now_fails_its_workload_only() -> None:
    store = InMemoryStreams()
    await requested(store, FRESH, BROKEN)
    backend = RecordingBackend(fail=frozenset({BROKEN}))

    failed = await submitter.reconcile_many(
        [FRESH, BROKEN], store=InMemoryBatchAppender(store), backend=backend
    )

    assert list(failed) == [BROKEN]
    assert isinstance(failed[BROKEN], RuntimeError)
    assert await types(store, FRESH) == ["WorkloadRequested", "WorkloadSubmitted"]
    assert await types(store, BROKEN) == ["WorkloadRequested"]  # for a redelivery to retry


async def test_a_workload_written_meanwhile_is_read_again_recorded_and_suspended() -> None:
    """A user suspends a workload while its submission is under way: its append loses the
    race, it is read again, the submission is recorded after the suspension (the others were
    written in the first statement) and the run it started is suspended. The backend is asked
    to submit once."""
    store = InMemoryStreams()
    await requested(store, FRESH, SUSPENDED)
    appender, backend = CountingAppender(store), RecordingBackend()

    async def suspend_meanwhile() -> None:
        appender.before_append = None
        await change(store, SUSPENDED, workloads.suspend)

    appender.before_append = suspend_meanwhile
    failed = await submitter.reconcile_many([FRESH, SUSPENDED], store=appender, backend=backend)

    assert failed == {}
    assert appender.reads == [2, 1]
    assert appender.writes == [2, 1]
    assert appender.appended == [FRESH, SUSPENDED]
    assert await types(store, SUSPENDED) == [
        "WorkloadRequested", "WorkloadSuspended", "WorkloadSubmitted",
    ]  # fmt: skip
    assert backend.calls == [
        ("submit", FRESH, 1),
        ("submit", SUSPENDED, 1),
        ("suspend", SUSPENDED, 1),
    ]


async def test_an_outcome_another_submitter_recorded_meanwhile_is_a_replay() -> None:
    store = InMemoryStreams()
    await requested(store, FRESH)
    appender = CountingAppender(store)

    async def recorded_by_another() -> None:
        appender.before_append = None
        await submitter.reconcile(FRESH, store=store, backend=RecordingBackend())

    appender.before_append = recorded_by_another
    failed = await submitter.reconcile_many([FRESH], store=appender, backend=RecordingBackend())

    assert failed == {}
    assert appender.writes == [1]
    assert appender.appended == []
    assert await types(store, FRESH) == ["WorkloadRequested", "WorkloadSubmitted"]


async def test_a_workload_that_stays_contended_fails_for_a_redelivery() -> None:
    store = InMemoryStreams()
    await requested(store, FRESH, CONTENDED)
    appender = CountingAppender(store)

    async def write_again() -> None:  # a report of a run long gone: it moves only the version
        stream = await store.load(CONTENDED)
        stale: list[Event] = [WorkloadFailed(workload_id=CONTENDED, run=0, reason="late")]
        await store.append(
            Append(CONTENDED, stale, expected_version=stream.version, metadata=ACTOR)
        )

    appender.before_append = write_again
    failed = await submitter.reconcile_many(
        [FRESH, CONTENDED], store=appender, backend=RecordingBackend()
    )

    assert list(failed) == [CONTENDED]
    assert isinstance(failed[CONTENDED], VersionConflictError)
    assert len(appender.writes) == submitter.ATTEMPTS
    assert not any(isinstance(e, WorkloadSubmitted) for e in (await store.load(CONTENDED)).events)
    assert await types(store, FRESH) == ["WorkloadRequested", "WorkloadSubmitted"]


async def test_a_submitter_of_one_cluster_leaves_the_others_workloads_to_theirs() -> None:
    store = InMemoryStreams()
    await requested(store, FRESH)  # of cluster UUID(int=1), as every sample is
    appender, backend = CountingAppender(store), RecordingBackend()
    elsewhere = UUID(int=2)
    assert (
        await submitter.reconcile_many([FRESH], store=appender, backend=backend, cluster=elsewhere)
        == {}
    )
    await submitter.reconcile(FRESH, store=store, backend=backend, cluster=elsewhere)
    assert backend.calls == []
    assert await types(store, FRESH) == ["WorkloadRequested"]
    await submitter.reconcile_many([FRESH], store=appender, backend=backend, cluster=UUID(int=1))
    assert backend.calls == [("submit", FRESH, 1)]
