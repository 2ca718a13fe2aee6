"""The submitter against real PostgreSQL and a real JetStream: requested workloads reach it
through the relay, several submitters share one durable consumer, a killed one loses and doubles
nothing (and the runs it left are reconciled by the next), and a submission that keeps failing
is retried, then dead-lettered and recorded."""

import asyncio
import contextlib
import signal
import subprocess
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from uuid import UUID, uuid4

import asyncpg
import msgspec
import pytest
from nats.js import JetStreamContext

from domain import workloads
from domain.events import EventMetadata
from domain.workload_plans import WorkloadPlan, plan_for
from infra.backends.dry_run import DryRunBackend
from infra.backends.local import LocalBackend
from infra.bootstrap import connect_nats
from infra.cli.embedded import EmbeddedNats
from infra.jetstream.outbox_relay import Relay
from infra.jetstream.work_queue import DEAD_LETTER_STREAM, Submitter, ensure_consumer
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import NatsSettings, RelaySettings, SubmitterSettings
from infra.workers.submitter import reports_to
from services import submitter
from services.errors import BackendRejectedError
from services.ports.event_store import Append, OneAppend, Stream
from services.ports.workload_backends import Submission
from services.workloads import load_workload
from tests.api.support import project_all
from tests.conftest import ACTOR
from tests.integration.test_local_faults import current as local_state
from tests.integration.test_local_faults import request as local_request
from tests.integration.test_local_faults import until_phase, until_status, waiting_for
from tests.processes import serve
from tests.workload_samples import requested_workload

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SPEC = {
    "distributedFramework": "PyTorch",
    "numWorkers": 2,
    "image": "python:3.12",
    "command": "python -c pass",
}


async def request(pool: asyncpg.Pool, count: int) -> list[UUID]:
    store = PostgresStreams(pool, DOMAIN_CODEC)
    ids = []
    for i in range(count):
        event = requested_workload(SPEC, name=f"w{i}")
        await store.append(Append(event.workload_id, [event], expected_version=0, metadata=ACTOR))
        ids.append(event.workload_id)
    return ids


async def outcomes(pool: asyncpg.Pool, tag: str) -> Counter[UUID]:
    rows = await pool.fetch("SELECT stream_id FROM events WHERE type = $1", tag)
    return Counter(row["stream_id"] for row in rows)


async def wait_for(pool: asyncpg.Pool, tag: str, count: int, within_s: float) -> Counter[UUID]:
    deadline = time.monotonic() + within_s
    while True:
        found = await outcomes(pool, tag)
        if len(found) >= count or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.1)


@contextlib.asynccontextmanager
async def relaying(pool: asyncpg.Pool, url: str) -> AsyncIterator[JetStreamContext]:
    nats = NatsSettings(url=url)
    nc = await connect_nats(nats, name="relay")
    stop = asyncio.Event()
    relay = Relay(pool, nc, nats, RelaySettings(name=f"relay-{uuid4()}"))
    task = asyncio.create_task(relay.run(stop))
    try:
        yield nc.jetstream()
    finally:
        stop.set()
        await task
        await nc.close()


def batches(pool: asyncpg.Pool, store: PostgresStreams) -> PostgresStreams:
    """Where a submitter appends a batch's outcomes: on the pool, one statement each."""
    return PostgresStreams(pool, DOMAIN_CODEC, notifier=store.notifier)


class CountingBackend(DryRunBackend):
    """The dry run, counting what it was asked to submit."""

    def __init__(self) -> None:
        super().__init__()
        self.submitted: Counter[str] = Counter()

    async def submit(self, plan: WorkloadPlan) -> Submission:
        self.submitted[plan.job_name] += 1
        return await super().submit(plan)


async def test_two_submitters_share_one_queue_and_submit_each_workload_once(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    ids = await request(clean_pool, 80)
    settings = SubmitterSettings(backend="dry-run", fetch_batch=4)
    nats = NatsSettings(url=broker.url)
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    backends = [CountingBackend(), CountingBackend()]
    stop = asyncio.Event()
    async with relaying(clean_pool, broker.url) as js:
        workers = [
            asyncio.create_task(
                Submitter(
                    js, store, backend, nats, settings, batches=batches(clean_pool, store)
                ).run(stop)
            )
            for backend in backends
        ]
        submitted = await wait_for(clean_pool, "workload.submitted.v1", len(ids), 60)
        stop.set()
        await asyncio.gather(*workers)
    assert set(submitted) == set(ids)
    assert set(submitted.values()) == {1}  # one outcome event each
    assert all(sum(b.submitted.values()) > 0 for b in backends), "both took work"
    assert sum(sum(b.submitted.values()) for b in backends) == len(ids)
    # The dry run recorded what it rendered.
    kinds = await clean_pool.fetchval(
        "SELECT jsonb_path_query_array(data::jsonb->'manifests', '$[*].kind')::text FROM events"
        " WHERE type = 'workload.submitted.v1' LIMIT 1"
    )
    assert kinds == '["TrainingRuntime", "TrainJob"]'  # Trainer v2, the default


def start_submitter(postgres_url: str, nats_url: str) -> "subprocess.Popen[bytes]":
    return serve(
        "submitter",
        postgres_url,
        nats_url,
        SUBMITTER__BACKEND="dry-run",
        SUBMITTER__ACK_WAIT_S="2",
        SUBMITTER__FETCH_BATCH="8",
    )


async def test_each_clusters_submitter_submits_its_own_clusters_workloads(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    """Two clusters, two submitters, each on a durable consumer of its own: every workload is
    submitted once, by its cluster's submitter."""
    east, west = UUID(int=1), UUID(int=2)  # the samples are of cluster 1
    ids = await request(clean_pool, 10)
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    for i in range(10):
        event = requested_workload(SPEC, name=f"west{i}")
        event = msgspec.structs.replace(event, cluster_id=west)
        await store.append(Append(event.workload_id, [event], expected_version=0, metadata=ACTOR))
        ids.append(event.workload_id)
    nats = NatsSettings(url=broker.url)
    backends = {east: CountingBackend(), west: CountingBackend()}
    stop = asyncio.Event()
    async with relaying(clean_pool, broker.url) as js:
        workers = [
            asyncio.create_task(
                Submitter(
                    js,
                    store,
                    backend,
                    nats,
                    SubmitterSettings(backend="dry-run", fetch_batch=4, cluster_id=cluster),
                    batches=batches(clean_pool, store),
                ).run(stop)
            )
            for cluster, backend in backends.items()
        ]
        submitted = await wait_for(clean_pool, "workload.submitted.v1", len(ids), 60)
        stop.set()
        await asyncio.gather(*workers)
    assert set(submitted) == set(ids)
    assert set(submitted.values()) == {1}
    assert all(
        name.startswith("w") and not name.startswith("west") for name in backends[east].submitted
    )
    assert len(backends[east].submitted) == 10
    assert all(name.startswith("west") for name in backends[west].submitted)
    assert len(backends[west].submitted) == 10


async def test_a_killed_submitter_loses_nothing_and_submits_nothing_twice(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats, postgres_url: str
) -> None:
    # Enough that each kill lands while the submitter works: it submits a few hundred a second.
    ids = await request(clean_pool, 2000)
    async with relaying(clean_pool, broker.url):
        left: list[int] = []  # workloads not yet submitted at each kill
        for round_ in range(4):
            process = start_submitter(postgres_url, broker.url)
            try:
                if round_ < 3:  # kill it while it works, three times
                    before = len(await outcomes(clean_pool, "workload.submitted.v1"))
                    await wait_for(clean_pool, "workload.submitted.v1", before + 30, 60)
                    process.send_signal(signal.SIGKILL)
                    left.append(len(ids) - len(await outcomes(clean_pool, "workload.submitted.v1")))
                else:
                    await wait_for(clean_pool, "workload.submitted.v1", len(ids), 90)
            finally:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)
    submitted = await outcomes(clean_pool, "workload.submitted.v1")
    assert len(left) == 3
    assert min(left) > 0, f"a kill came after every workload was submitted: {left} left"
    assert set(submitted) == set(ids), f"{len(ids) - len(submitted)} workloads never submitted"
    assert set(submitted.values()) == {1}


class BrokenBackend(DryRunBackend):
    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    async def submit(self, plan: WorkloadPlan) -> Submission:
        self.attempts += 1
        raise RuntimeError("the cluster is unreachable")


async def test_a_submission_that_keeps_failing_is_retried_then_dead_lettered_and_failed(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    (workload_id,) = await request(clean_pool, 1)
    settings = SubmitterSettings(backend="dry-run", max_deliver=3, backoff_s="0.2,0.2")
    nats = NatsSettings(url=broker.url)
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    backend = BrokenBackend()
    stop = asyncio.Event()
    async with relaying(clean_pool, broker.url) as js:
        worker = Submitter(js, store, backend, nats, settings, batches=batches(clean_pool, store))
        task = asyncio.create_task(worker.run(stop))
        failed = await wait_for(clean_pool, "workload.failed.v1", 1, 30)
        stop.set()
        await task
        dead = await js.stream_info(DEAD_LETTER_STREAM)
    assert failed == Counter({workload_id: 1})
    assert backend.attempts == 3
    reason = await clean_pool.fetchval(
        "SELECT data->>'reason' FROM events WHERE type = 'workload.failed.v1'"
    )
    assert reason == "could not submit after 3 attempts: the cluster is unreachable"
    assert dead.state.messages == 1


async def test_the_sweep_submits_what_no_message_asked_for(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    """Requests whose messages never reached the queue (no relay ran) are found in the read
    model and submitted once; a second sweep finds nothing left to do."""
    ids = await request(clean_pool, 5)
    await project_all(clean_pool)
    nats = NatsSettings(url=broker.url)
    nc = await connect_nats(nats, name="sweeper")
    try:
        store = PostgresStreams(clean_pool, DOMAIN_CODEC)
        backend = CountingBackend()
        settings = SubmitterSettings(backend="dry-run")
        worker = Submitter(
            nc.jetstream(),
            store,
            backend,
            nats,
            settings,
            batches=batches(clean_pool, store),
            pool=clean_pool,
        )
        assert await worker.sweep() == 5
        await project_all(clean_pool)
        assert await worker.sweep() == 0
    finally:
        await nc.close()
    assert set((await outcomes(clean_pool, "workload.submitted.v1")).values()) == {1}
    assert sum(backend.submitted.values()) == len(ids)


class ChoosyBackend(CountingBackend):
    """The dry run, refusing for good the jobs it is told to, and counting what it stops."""

    def __init__(self, refuse: set[str]) -> None:
        super().__init__()
        self.refuse = refuse
        self.stopped: Counter[str] = Counter()

    async def submit(self, plan: WorkloadPlan) -> Submission:
        if plan.job_name in self.refuse:
            raise BackendRejectedError(plan.job_name, "403 Forbidden")
        return await super().submit(plan)

    async def stop(self, plan: WorkloadPlan, *, suspend: bool = False) -> None:
        self.stopped[plan.job_name] += 1


class CountingBatches(PostgresStreams):
    """The real batch appender, counting its reads and writes."""

    def __init__(self, pool: asyncpg.Pool, store: PostgresStreams) -> None:
        super().__init__(pool, DOMAIN_CODEC, notifier=store.notifier)
        self.reads: list[int] = []
        self.writes: list[int] = []

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


async def settled(js: JetStreamContext, nats: NatsSettings, consumer: str, pending: int) -> None:
    """Until the consumer has `pending` messages to deliver and none awaiting an ack."""
    deadline = time.monotonic() + 30
    while True:
        info = await js.consumer_info(nats.stream, consumer)
        if (info.num_pending, info.num_ack_pending) == (pending, 0):
            return
        assert time.monotonic() < deadline, f"consumer stuck at {info}"
        await asyncio.sleep(0.05)


async def test_a_batch_of_every_kind_of_message_records_each_outcome_once(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    """One fetch brings two new requests, a workload deleted after it was submitted (its
    request and its deletion), one submitted by an earlier delivery and one the backend
    refuses: one read and one write settle them all, each outcome is recorded once, every
    message is acknowledged, and a redelivery of them all changes nothing."""
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    ids = fresh, other, deleted, done, refused = await request(clean_pool, 5)
    for workload_id in (deleted, done):  # an earlier delivery submitted these
        await submitter.reconcile(workload_id, store=store, backend=DryRunBackend())
    stream = await store.load(deleted)
    deletion = workloads.delete(load_workload(stream.events), deleted)
    await store.append(Append(deleted, deletion, expected_version=stream.version, metadata=ACTOR))
    job = {i: workloads.job_name(f"w{n}", i) for n, i in enumerate(ids)}
    backend = ChoosyBackend(refuse={job[refused]})
    recorder = CountingBatches(clean_pool, store)
    settings = SubmitterSettings(backend="dry-run", fetch_batch=16)
    nats = NatsSettings(url=broker.url)
    async with relaying(clean_pool, broker.url) as js:
        await ensure_consumer(js, nats, settings)
        await settled(js, nats, settings.consumer, pending=6)  # queued before it starts
        stop = asyncio.Event()
        worker = Submitter(js, store, backend, nats, settings, batches=recorder)
        task = asyncio.create_task(worker.run(stop))
        await settled(js, nats, settings.consumer, pending=0)
        stop.set()
        await task
    assert recorder.reads == [5]  # five workloads, six messages: one read
    assert recorder.writes == [4]  # two submitted, one stopped, one failed: one statement
    assert await outcomes(clean_pool, "workload.submitted.v1") == Counter(
        {fresh: 1, other: 1, deleted: 1, done: 1}
    )
    assert await outcomes(clean_pool, "workload.stopped.v1") == Counter({deleted: 1})
    assert await outcomes(clean_pool, "workload.failed.v1") == Counter({refused: 1})
    assert backend.submitted == Counter({job[fresh]: 1, job[other]: 1})
    assert backend.stopped == Counter({job[deleted]: 1})

    # Every message delivered again (a submitter killed before its acks): nothing to do.
    events = await clean_pool.fetchval("SELECT count(*) FROM events")
    again = await submitter.reconcile_many(ids, store=recorder, backend=backend)
    assert again == {}
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == events
    assert backend.submitted == Counter({job[fresh]: 1, job[other]: 1})
    assert backend.stopped == Counter({job[deleted]: 1})


async def test_a_run_whose_submitter_was_killed_is_failed_once_nothing_runs_behind_it(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats, postgres_url: str, replica_work_dir: Path
) -> None:
    """A submitter killed with -9 while its local run goes on: the next one's sweep leaves the
    run Running while its replicas live on, and fails it, saying why, once they are gone."""
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    go = replica_work_dir / "go"
    workload_id = await local_request(store, waiting_for(go), workers=1)
    await project_all(clean_pool)  # what its start-up sweep submits from
    process = serve(
        "submitter",
        postgres_url,
        broker.url,
        SUBMITTER__BACKEND="local",
        SUBMITTER__WORK_DIR=str(replica_work_dir),
    )
    try:
        await until_phase(store, workload_id, {"Running"}, within_s=60)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    nats = NatsSettings(url=broker.url)
    nc = await connect_nats(nats, name="next-submitter")
    backend = LocalBackend(replica_work_dir, reports_to(store), stop_grace_s=5)
    try:
        worker = Submitter(
            nc.jetstream(),
            store,
            backend,
            nats,
            SubmitterSettings(),
            batches=batches(clean_pool, store),
            pool=clean_pool,
        )
        await project_all(clean_pool)
        await worker.sweep()
        assert (await local_state(store, workload_id)).actual == "Running"  # it runs on
        go.touch()  # its replicas end, and no one sees how
        plan = plan_for((await local_state(store, workload_id)).request)
        assert (await until_status(backend, plan)).outcome == "failed"
        await worker.sweep()
    finally:
        go.touch()
        await backend.close()
        await nc.close()
    state = await local_state(store, workload_id)
    assert (state.actual, state.reason) == (
        "Failed",
        "no process behind it after a submitter restart (its end was not seen)",
    )
