"""The local backend when things go wrong: a run larger than the machine takes is refused for
good and one that does not fit beside the others for now, starting nothing; a replica that
cannot start leaves nothing started and nothing recorded as submitted; and a run whose outcome
could not be recorded is recorded by the next submitter, from what the run left behind."""

import asyncio
import time
from collections.abc import Set
from pathlib import Path
from typing import Any
from uuid import UUID

import asyncpg
import pytest

from domain import workloads
from domain.events import WorkloadSubmitted
from domain.workload_plans import WorkloadPlan, plan_for
from domain.workloads import Outcome, Workload
from infra.backends.local import LocalBackend
from infra.backends.local_capacity import LocalBackendBusyError
from infra.errors import StoreUnavailableError
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.workers.submitter import reports_to
from services import submitter
from services.ports.event_store import Append
from services.ports.workload_backends import RunStatus
from tests.conftest import ACTOR
from tests.workload_samples import requested_workload

pytestmark = pytest.mark.integration


def waiting_for(go: Path) -> str:
    """A replica's command that runs until `go` exists, then succeeds."""
    return f"sh -c 'while [ ! -e {go} ]; do sleep 0.05; done'"


async def request(store: PostgresStreams, command: str, *, workers: int, **spec: Any) -> UUID:
    """A PyTorch workload of a master and `workers` workers, each running `command`."""
    event = requested_workload(
        {"distributedFramework": "PyTorch", "numWorkers": workers, "image": "python:3.12",
         "command": command, "terminationGracePeriodSeconds": 5, **spec},
        name="local",
    )  # fmt: skip
    await store.append(Append(event.workload_id, [event], expected_version=0, metadata=ACTOR))
    return event.workload_id


async def current(store: PostgresStreams, workload_id: UUID) -> Workload:
    found = workloads.fold((await store.load(workload_id)).events)
    assert found is not None
    return found


async def until_phase(
    store: PostgresStreams, workload_id: UUID, phases: Set[str], within_s: float = 30
) -> Workload:
    deadline = time.monotonic() + within_s
    while (state := await current(store, workload_id)).actual not in phases:
        assert time.monotonic() < deadline, f"still {state.actual}: {state.reason}"
        await asyncio.sleep(0.05)
    return state


async def until_status(
    backend: LocalBackend, plan: WorkloadPlan, within_s: float = 30
) -> RunStatus:
    """What the backend says of the run, once that is more than "running"."""
    deadline = time.monotonic() + within_s
    while (seen := await backend.status(plan)) in (None, RunStatus("running")):
        assert time.monotonic() < deadline, f"the run is still {seen}"
        await asyncio.sleep(0.05)
    assert seen is not None
    return seen


def running(token: str) -> list[int]:
    """The processes whose command line holds `token`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if token.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:  # gone meanwhile
            continue
    return found


async def test_a_run_larger_than_the_backend_runs_at_once_fails_and_starts_nothing(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    backend = LocalBackend(replica_work_dir, reports_to(store), max_processes=2)
    workload_id = await request(store, "sh -c 'exit 0'", workers=2)  # a master and two workers
    await submitter.reconcile(workload_id, store=store, backend=backend)
    state = await current(store, workload_id)
    job = state.request.job_name
    assert (state.actual, state.reason) == (
        "Failed",
        f"{job}: 3 processes: more than the local backend runs at once (2, "
        "TRAINPLATE_SUBMITTER__LOCAL_MAX_PROCESSES)",
    )
    assert not (replica_work_dir / job).exists()  # not a folder, not a process


async def test_a_run_that_does_not_fit_beside_the_others_starts_once_they_end(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    backend = LocalBackend(replica_work_dir, reports_to(store), max_processes=4)
    go = replica_work_dir / "go"
    first = await request(store, waiting_for(go), workers=2)
    second = await request(store, "sh -c 'exit 0'", workers=1)
    try:
        assert await submitter.reconcile_many([first], store=store, backend=backend) == {}
        await until_phase(store, first, {"Running"})
        # The queue's first delivery: refused for now, nothing started or recorded.
        failed = await submitter.reconcile_many([second], store=store, backend=backend)
        assert isinstance(failed[second], LocalBackendBusyError)
        assert "2 processes do not fit beside the 3 under way" in str(failed[second])
        assert (await current(store, second)).actual == "Creating"
        go.touch()
        assert (await until_phase(store, first, workloads.FINISHED)).actual == "Completed"
        # Its next delivery, once the first run ended.
        assert await submitter.reconcile_many([second], store=store, backend=backend) == {}
        assert (await until_phase(store, second, workloads.FINISHED)).actual == "Completed"
    finally:
        go.touch()
        await backend.close()


async def test_a_replica_that_cannot_start_leaves_nothing_started_nor_submitted(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    """The master starts, then the worker's log cannot be opened (a folder is in its way): the
    master is stopped, the workload fails saying why, and a redelivery starts nothing."""
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    backend = LocalBackend(replica_work_dir, reports_to(store), stop_grace_s=5)
    token = f"3600.{time.time_ns() % 1_000_000}"  # this test's sleep, among every process
    workload_id = await request(store, f"sleep {token}", workers=1)
    run_dir = replica_work_dir / (await current(store, workload_id)).request.job_name / "run-1"
    (run_dir / "worker-0.log").mkdir(parents=True)
    try:
        for _ in range(2):  # its delivery, and the queue's next
            await submitter.reconcile_many([workload_id], store=store, backend=backend)
        state = await current(store, workload_id)
        assert state.actual == "Failed", state
        assert state.reason is not None
        assert "could not start" in state.reason
        assert "worker-0.log" in state.reason
        events = (await store.load(workload_id)).events
        assert not any(isinstance(e, WorkloadSubmitted) for e in events)
        assert running(token) == []  # the master was stopped, not left behind
    finally:
        await backend.close()


class Unrecorded:
    """Reports that cannot be recorded (the database is away), counted."""

    def __init__(self) -> None:
        self.tried: list[Outcome] = []

    async def __call__(
        self, workload_id: UUID, run: int, outcome: Outcome, reason: str | None = None
    ) -> None:
        self.tried.append(outcome)
        raise StoreUnavailableError("append")


async def test_an_outcome_that_could_not_be_recorded_is_recorded_by_the_next_submitter(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    reports = Unrecorded()
    backend = LocalBackend(replica_work_dir, reports, stop_grace_s=5)
    workload_id = await request(store, "sh -c 'exit 0'", workers=1)
    await submitter.reconcile(workload_id, store=store, backend=backend)
    plan = plan_for((await current(store, workload_id)).request)
    assert await until_status(backend, plan) == RunStatus("succeeded")
    await backend.close()  # the submitter goes away before it could record it
    assert reports.tried[:2] == ["running", "succeeded"]
    assert (await current(store, workload_id)).actual == "Pending"

    after = LocalBackend(replica_work_dir, reports_to(store))  # the next submitter's sweep
    for _ in range(2):
        found = await submitter.reconcile_many(
            [workload_id], store=store, backend=after, ask_backend=True
        )
        assert found == {}
    assert (await current(store, workload_id)).actual == "Completed"
    events = [type(e).__name__ for e in (await store.load(workload_id)).events]
    assert events.count("WorkloadSucceeded") == 1
