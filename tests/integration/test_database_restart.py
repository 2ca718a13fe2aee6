"""A PostgreSQL crash and restart under load: appends are retried idempotently, the relay leads
again, and nothing is lost or duplicated, in the table or in JetStream. And a local run that
ends while the database is down has its outcome recorded once it is back."""

import asyncio
from pathlib import Path
from uuid import UUID, uuid4

import pytest

from domain import workloads
from domain.workload_plans import plan_for
from infra.backends.local import LocalBackend
from infra.bootstrap import connect_nats, create_pool
from infra.cli.embedded import EmbeddedNats, EmbeddedPostgres
from infra.errors import StoreUnavailableError
from infra.postgres.hashchain import verify_all
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import DatabaseSettings, RelaySettings, Settings
from infra.workers import relay as relay_worker
from infra.workers.submitter import reports_to
from services import submitter
from services.event_ids import event_ids_for
from services.ports.event_store import Append
from services.ports.workload_backends import RunStatus
from tests.conftest import ACTOR
from tests.integration.test_local_faults import (
    current,
    request,
    until_phase,
    until_status,
    waiting_for,
)
from tests.integration.test_relay import (
    _with_url,
    assert_exactly_once_in_order,
    wait_until_relayed,
)
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STREAMS, EVENTS_PER_STREAM = 200, 10


async def test_a_database_crash_loses_and_duplicates_nothing(server_dir: Path) -> None:
    with EmbeddedPostgres(server_dir / "pg") as pg, EmbeddedNats(server_dir / "nats") as broker:
        database = DatabaseSettings(url=pg.url, pool_max=4)
        pool = await create_pool(database, application_name="restart-test")
        async with pool.acquire() as conn:
            await apply_migrations(conn)
        settings = Settings(
            database=database,
            nats=_with_url(broker.url),
            relay=RelaySettings(poll_interval_s=0.05, name="restart"),
        )
        stop = asyncio.Event()
        relay = asyncio.create_task(relay_worker.run(settings, stop))
        store = PostgresStreams(pool, CODEC)
        retries = 0

        async def append(sid: UUID, version: int) -> None:
            nonlocal retries
            event = CounterOpened(name="s") if version == 0 else CounterIncremented(by=version)
            ids = event_ids_for(f"{sid}/{version}", sid, 1)  # the same ids on every retry
            while True:
                try:
                    await store.append(
                        Append(
                            sid, [event], expected_version=version, metadata=ACTOR, event_ids=ids
                        )
                    )
                    return
                except StoreUnavailableError:
                    retries += 1
                    await asyncio.sleep(0.05)

        async def writer(streams: list[UUID]) -> None:
            for version in range(EVENTS_PER_STREAM):
                for sid in streams:
                    await append(sid, version)

        streams = [uuid4() for _ in range(STREAMS)]
        writing = asyncio.gather(*(writer(streams[i::4]) for i in range(4)))
        try:
            # Crash once a fifth is written, while the writers are surely still at it (a
            # fixed delay would let a fast machine finish first).
            total = STREAMS * EVENTS_PER_STREAM
            while await pool.fetchval("SELECT count(*) FROM events") < total // 5:  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            pg.stop(mode="immediate")  # a crash: no checkpoint, connections cut
            await asyncio.sleep(0.5)
            pg.start()
            await writing
            await wait_until_relayed(pool, "restart")
        finally:
            stop.set()
            await relay

        assert retries > 0, "no append ever met the crash: the test proved nothing"
        assert await pool.fetchval("SELECT count(*) FROM events") == STREAMS * EVENTS_PER_STREAM
        async with pool.acquire() as conn:
            assert all(report.intact for report in await verify_all(conn))
        nc = await connect_nats(settings.nats, name="checker")
        try:
            held = await assert_exactly_once_in_order(pool, nc)
        finally:
            await nc.close()
        assert len(held) == STREAMS * EVENTS_PER_STREAM
        await pool.close()


async def test_a_local_run_that_ends_while_the_database_is_down_is_recorded_once_it_is_back(
    server_dir: Path, replica_work_dir: Path
) -> None:
    with EmbeddedPostgres(server_dir / "pg") as pg:
        pool = await create_pool(DatabaseSettings(url=pg.url, pool_max=2), application_name="run")
        async with pool.acquire() as conn:
            await apply_migrations(conn)
        store = PostgresStreams(pool, DOMAIN_CODEC)
        backend = LocalBackend(replica_work_dir, reports_to(store), stop_grace_s=5)
        go = replica_work_dir / "go"
        workload_id = await request(store, waiting_for(go), workers=1)
        try:
            await submitter.reconcile(workload_id, store=store, backend=backend)
            await until_phase(store, workload_id, {"Running"})
            plan = plan_for((await current(store, workload_id)).request)
            pg.stop(mode="immediate")
            go.touch()  # it succeeds, and its report fails
            assert await until_status(backend, plan) == RunStatus("succeeded")
            pg.start()
            state = await until_phase(store, workload_id, workloads.FINISHED)
        finally:
            go.touch()
            await backend.close()
            await pool.close()
    assert state.actual == "Completed"
