"""Submissions per second: `workload.requested` on JetStream to `workload.submitted` committed
(dry-run backend), next to the raw JetStream consume-and-ack rate of the same messages. Method:
docs/decisions/0011-benchmark-methods.md."""

import argparse
import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from uuid import UUID, uuid4

import asyncpg
import msgspec
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig
from nats.js.errors import NotFoundError

from bench.harness import Figure, nats, postgres, report
from domain import workloads
from domain.events import (
    EventMetadata,
    WorkloadRequested,
    WorkloadSnapshot,
    WorkloadSubmitted,
)
from domain.template_specs import DistributedTemplateSpec
from infra.backends.dry_run import DryRunBackend
from infra.bootstrap import connect_nats, create_pool, freeze_start_up
from infra.followers import global_log
from infra.jetstream.outbox_relay import Relay, ensure_stream
from infra.jetstream.work_queue import Submitter, ensure_consumer, filter_subjects
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import DatabaseSettings, NatsSettings, RelaySettings, SubmitterSettings
from services.ports.event_store import Append, OneAppend

ACTOR = EventMetadata(actor_subject="bench", actor_kind="system")
FETCH_BATCH = 256  # messages per fetch on both sides (so workloads per batch of the submitter)
SPEC = msgspec.convert(
    {"distributedFramework": "PyTorch", "numWorkers": 4, "image": "nvcr.io/nvidia/pytorch:24.05",
     "command": "torchrun train.py", "compute": {"gpuDevicesRequest": 8, "cpuCoreRequest": 16}},
    DistributedTemplateSpec,
)  # fmt: skip


async def request(store: PostgresStreams, count: int) -> None:
    async def one(index: int) -> None:
        workload_id = uuid4()
        event = WorkloadRequested(
            workload_id=workload_id, name=f"w{index}", requested_name=f"w{index}",
            cluster_id=uuid4(), project_id="1", project_name="team", namespace="runai-team",
            job_name=workloads.job_name(f"w{index}", workload_id),
            snapshot=WorkloadSnapshot(spec=SPEC),
        )  # fmt: skip
        await store.append(Append(workload_id, [event], expected_version=0, metadata=ACTOR))

    for start in range(0, count, 64):
        await asyncio.gather(*(one(i) for i in range(start, min(count, start + 64))))


async def relay_all(relay: Relay, pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        cursor = await global_log.load_checkpoint(conn, relay.checkpoint_name)
        while True:
            cursor, read = await relay.relay_once(conn, cursor)
            if not read:
                return


async def raw_rate(js: JetStreamContext, nats: NatsSettings, count: int) -> float:
    durable = f"raw-{uuid4().hex[:8]}"
    await js.add_consumer(
        nats.stream,
        ConsumerConfig(
            durable_name=durable,
            ack_policy=AckPolicy.EXPLICIT,
            filter_subjects=filter_subjects(nats),
        ),
    )
    subscription = await js.pull_subscribe_bind(durable=durable, stream=nats.stream)
    start, done = time.perf_counter(), 0
    while done < count:
        with contextlib.suppress(TimeoutError):
            for message in await subscription.fetch(FETCH_BATCH, timeout=1.0):
                await message.ack()
                done += 1
    elapsed = time.perf_counter() - start
    await subscription.unsubscribe()
    return count / elapsed


class CountingBatches(PostgresStreams):
    """The submitter's batch appender, telling the benchmark when the last submission is
    committed (polling the table would compete with the submitter for the two cores)."""

    def __init__(self, pool: asyncpg.Pool, store: PostgresStreams, count: int) -> None:
        super().__init__(pool, DOMAIN_CODEC, notifier=store.notifier)
        self._left = count
        self.done = asyncio.Event()

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        taken = await super().append_each(appends, metadata=metadata)
        self._left -= sum(
            1 for a in appends if a.stream_id in taken and isinstance(a.event, WorkloadSubmitted)
        )
        if self._left <= 0:
            self.done.set()
        return taken


async def our_rate(
    js: JetStreamContext,
    pool: asyncpg.Pool,
    store: PostgresStreams,
    nats: NatsSettings,
    count: int,
    submitters: int,
) -> float:
    settings = SubmitterSettings(
        backend="dry-run", consumer=f"sub-{uuid4().hex[:8]}", fetch_batch=FETCH_BATCH
    )
    await ensure_consumer(js, nats, settings)
    counting = CountingBatches(pool, store, count)
    freeze_start_up()  # as the submitter process does before it starts
    stop = asyncio.Event()
    start = time.perf_counter()
    tasks = [
        asyncio.create_task(
            Submitter(js, store, DryRunBackend(), nats, settings, batches=counting).run(stop)
        )
        for _ in range(submitters)
    ]
    await counting.done.wait()
    elapsed = time.perf_counter() - start
    stop.set()
    await asyncio.gather(*tasks)
    return count / elapsed


async def main(rounds: int, count: int, submitters: int) -> None:
    with postgres() as pg_url, nats() as nats_url:
        pool = await create_pool(
            DatabaseSettings(url=pg_url, pool_max=20), application_name="bench", session_free=True
        )
        async with pool.acquire() as conn:
            await apply_migrations(conn)
            await conn.execute("TRUNCATE events, consumer_checkpoints")
        settings = NatsSettings(url=nats_url)
        nc = await connect_nats(settings, name="bench-submit")
        js = nc.jetstream()
        store = PostgresStreams(pool, DOMAIN_CODEC)
        relay = Relay(pool, nc, settings, RelaySettings())
        # With the Trainer v2 rendering (the default); what stands short: decision 0040.
        figure = Figure(f"{count:,} workloads, {submitters} submitter(s)", target=0.5)
        for round_ in range(rounds):
            with contextlib.suppress(NotFoundError):
                await js.delete_stream(settings.stream)
            await ensure_stream(js, settings)
            await request(store, count)
            await relay_all(relay, pool)
            sides: list[tuple[list[float], Callable[[], Awaitable[float]]]] = [
                (figure.ours, lambda: our_rate(js, pool, store, settings, count, submitters)),
                (figure.baseline, lambda: raw_rate(js, settings, count)),
            ]
            for results, run in sides if round_ % 2 == 0 else sides[::-1]:  # alternate the order
                results.append(await run())
        await nc.close()
        await pool.close()
    report(
        "Submitter: workload.requested -> workload.submitted (dry run)",
        "raw consume+ack",
        [figure],
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workloads", type=int, default=2_000)
    parser.add_argument("--submitters", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.workloads, args.submitters))
