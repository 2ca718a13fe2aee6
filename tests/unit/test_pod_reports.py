"""Pod reports (services/pod_reports.py) against the in-memory store: a watcher that keeps
what it folded reads only the events appended since, records what a watcher reading whole
streams records, and meets another writer's events, a race included; a report too large for
one event is written as several."""

from collections.abc import Mapping
from datetime import UTC, datetime
from uuid import UUID, uuid4

from domain import workloads
from domain.events import (
    ContainerObserved,
    Event,
    EventMetadata,
    PodObserved,
    WorkloadPodsChanged,
    WorkloadPodsObserved,
)
from infra.serialization import DOMAIN_CODEC
from services import pod_reports
from services.ports.event_store import Append
from tests.fakes import InMemoryStreams
from tests.workload_samples import requested_workload

AT = datetime(2026, 1, 1, tzinfo=UTC)
SETUP = EventMetadata(actor_subject="setup", actor_kind="system")


def pod(index: int, phase: str) -> PodObserved:
    return PodObserved(
        name=f"job-worker-{index}",
        uid=UUID(int=index + 1),
        role="worker",
        phase=phase,  # type: ignore[arg-type]  # one of PodPhase's, as the samples are
        created_at=AT,
        phase_changed_at=AT,
    )


class Watched(InMemoryStreams):
    """The store, noting what each read after a version asked; `meanwhile`, when set, is
    appended by another writer right after the next such read."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []
        self.meanwhile: tuple[UUID, Event] | None = None

    async def load_after(self, versions: Mapping[UUID, int]) -> dict[UUID, tuple[Event, ...]]:
        self.asked.extend(versions.values())
        found = await super().load_after(versions)
        if self.meanwhile is not None:
            (stream_id, event), self.meanwhile = self.meanwhile, None
            stream = await self.load(stream_id)
            await self.append(
                Append(stream_id, [event], expected_version=stream.version, metadata=SETUP)
            )
        return found


async def a_workload(store: InMemoryStreams) -> UUID:
    requested = requested_workload({"distributedFramework": "PyTorch", "numWorkers": 3})
    await store.append(
        Append(requested.workload_id, [requested], expected_version=0, metadata=SETUP)
    )
    return requested.workload_id


def pods_of(event: Event) -> tuple[tuple[PodObserved, ...], tuple[str, ...]]:
    assert isinstance(event, WorkloadPodsChanged)
    return event.pods, event.gone


def starting(replicas: int) -> list[list[PodObserved]]:
    """The sets a run of `replicas` is seen as: each replica starts, then each ends."""
    pods = [pod(i, "Pending") for i in range(replicas)]
    sets = []
    for phase in ("Running", "Succeeded"):
        for i in range(replicas):
            pods[i] = pod(i, phase)
            sets.append(list(pods))
    return sets


async def test_a_kept_workload_is_read_from_where_it_was_left_and_records_the_same() -> None:
    whole, watched = InMemoryStreams(), Watched()
    kept = pod_reports.Observed()
    first, second = await a_workload(whole), await a_workload(watched)
    for pods in starting(4):
        await pod_reports.observed(first, None, pods, store=whole)
        await pod_reports.observed(second, None, pods, store=watched, kept=kept)
        await pod_reports.observed(second, None, pods, store=watched, kept=kept)  # no change
    recorded = [pods_of(e) for e in (await watched.load(second)).events[1:]]
    assert recorded == [pods_of(e) for e in (await whole.load(first)).events[1:]]
    assert len(recorded) == 8
    # Read whole once; then each time from its own last event, never from the start.
    assert watched.asked == [0, *(v for v in range(2, 9) for _ in range(2)), 9]


async def test_another_writers_event_is_read_before_deciding() -> None:
    store = Watched()
    kept = pod_reports.Observed()
    workload_id = await a_workload(store)
    running = [pod(0, "Running")]
    await pod_reports.observed(workload_id, None, running, store=store, kept=kept)
    # Another watcher records the same change, then this one is told of it too.
    other = WorkloadPodsObserved(workload_id=workload_id, run=1, pods=(pod(0, "Succeeded"),))
    await store.append(Append(workload_id, [other], expected_version=2, metadata=SETUP))
    await pod_reports.observed(workload_id, None, [pod(0, "Succeeded")], store=store, kept=kept)
    assert (await store.load(workload_id)).version == 3  # nothing left to say


async def test_a_race_lost_to_another_watcher_writes_the_change_once() -> None:
    store = Watched()
    kept = pod_reports.Observed()
    workload_id = await a_workload(store)
    await pod_reports.observed(workload_id, None, [pod(0, "Running")], store=store, kept=kept)
    done = (pod(0, "Succeeded"),)
    store.meanwhile = (workload_id, WorkloadPodsObserved(workload_id=workload_id, run=1, pods=done))
    await pod_reports.observed(workload_id, None, list(done), store=store, kept=kept)
    stream = await store.load(workload_id)
    assert stream.version == 3
    assert stream.events[-1] == WorkloadPodsObserved(workload_id=workload_id, run=1, pods=done)
    assert store.asked[-2:] == [2, 2]  # read again from where it was, after the conflict


async def test_a_stream_of_another_kind_records_nothing() -> None:
    store = Watched()
    stream_id = uuid4()
    await store.append(
        Append(stream_id, [requested_workload({})], expected_version=0, metadata=SETUP)
    )
    other = uuid4()
    await pod_reports.observed(other, None, [pod(0, "Running")], store=store)
    assert (await store.load(other)).version == 0


def replica(index: int) -> PodObserved:
    """A replica as a cluster reports one (about 370 bytes of JSON)."""
    return PodObserved(
        name=f"ddp-run-3f2b8c1d-worker-{index}",
        uid=UUID(int=index + 1),
        role="worker",
        phase="Running",
        node_name=f"gpu-node-{index % 500}",
        ip=f"10.{index // 65536}.{index // 256 % 256}.{index % 256}",
        created_at=AT,
        phase_changed_at=AT,
        containers=(ContainerObserved(name="pytorch", image="nvcr.io/nvidia/pytorch:24.05-py3"),),
    )


def parts_of(events: tuple[Event, ...]) -> list[WorkloadPodsChanged]:
    """The events of one report: numbered 1..n in order, each under the store's limit."""
    found = [event for event in events if isinstance(event, WorkloadPodsChanged)]
    assert len(found) == len(events)
    for number, event in enumerate(found, start=1):
        assert (event.part, event.parts) == (number, len(found))
        assert len(DOMAIN_CODEC.encode(event).data.encode()) <= InMemoryStreams().max_event_bytes
    return found


async def test_a_report_of_19000_replicas_is_written_as_events_under_the_limit() -> None:
    store = InMemoryStreams()
    workload_id = await a_workload(store)
    pods = [replica(i) for i in range(19_000)]
    await pod_reports.observed(workload_id, None, pods, store=store)

    written = parts_of((await store.load(workload_id)).events[1:])
    assert len(written) > 1
    assert sorted(p.name for event in written for p in event.pods) == sorted(p.name for p in pods)
    state = workloads.fold((await store.load(workload_id)).events)
    assert state is not None
    assert {p.name: p for p in state.pods} == {p.name: p for p in pods}

    # All of them gone at once: the names are split as well, and none is left.
    before = (await store.load(workload_id)).version
    await pod_reports.observed(workload_id, None, [], store=store)
    gone = parts_of((await store.load(workload_id)).events[before:])
    assert sorted(name for event in gone for name in event.gone) == sorted(p.name for p in pods)


def test_a_change_that_fits_one_event_stays_one() -> None:
    change = WorkloadPodsChanged(workload_id=uuid4(), run=1, pods=(replica(0),), gone=("x",))
    assert pod_reports.in_parts([change], 512 * 1024) == [change]
