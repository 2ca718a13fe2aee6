"""The local backend, for real: a PyTorch template of one master and two workers whose command is a
torch.distributed gloo all-reduce forms its process group from the operator's variables alone and
succeeds, its replicas reported as pods; with one failing worker, its siblings are stopped and the
run fails, naming it; a failure within the backoff limit restarts every replica."""

import asyncio
import importlib.util
import shutil
import time
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest

from domain import workloads
from domain.events import PodObserved, WorkloadPodsChanged
from domain.workloads import Workload
from infra.backends.local import LocalBackend
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.workers.submitter import pods_to, reports_to
from services import submitter
from services.ports.event_store import Append
from tests.conftest import ACTOR
from tests.workload_samples import requested_workload

if importlib.util.find_spec("torch") is None:  # `make test` installs it
    pytest.skip("the job runs torch: install the `torch` extra", allow_module_level=True)
pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCRIPT = Path(__file__).parents[1] / "data" / "jobs" / "ddp_allreduce.py"


def reachable_script(work_dir: Path) -> Path:
    """The job's code where its replicas' user can read it, as a user puts it: a checkout in a
    private folder (a fresh clone under mktemp) is not."""
    copy = work_dir / SCRIPT.name
    shutil.copyfile(SCRIPT, copy)
    copy.chmod(0o644)
    return copy


async def request(
    pool: asyncpg.Pool,
    script: Path,
    *,
    fail_rank: int | None = None,
    fail_once: Path | None = None,
    backoff_limit: int = 0,
) -> UUID:
    variables = [{"name": "FAIL_RANK", "value": str(fail_rank)}] if fail_rank is not None else []
    if fail_once is not None:
        variables.append({"name": "FAIL_ONCE", "value": str(fail_once)})
    spec = {
        "distributedFramework": "PyTorch",
        "numWorkers": 2,
        "image": "pytorch/pytorch:2.13.0",  # not used locally: this machine's python runs
        "command": f"python {script}",
        "environmentVariables": variables,
        "backoffLimit": backoff_limit,
        "terminationGracePeriodSeconds": 5,
    }
    event = requested_workload(spec, name="ddp", master=spec)
    store = PostgresStreams(pool, DOMAIN_CODEC)
    await store.append(Append(event.workload_id, [event], expected_version=0, metadata=ACTOR))
    return event.workload_id


async def finished(store: PostgresStreams, workload_id: UUID, within_s: float) -> Workload:
    deadline = time.monotonic() + within_s
    while True:
        state = workloads.fold((await store.load(workload_id)).events)
        assert state is not None
        if state.actual in workloads.FINISHED or time.monotonic() > deadline:
            return state
        await asyncio.sleep(0.2)


async def test_a_pytorch_master_and_two_workers_all_reduce_over_gloo(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    backend = LocalBackend(replica_work_dir, reports_to(store), stop_grace_s=5, pods=pods_to(store))
    workload_id = await request(clean_pool, reachable_script(replica_work_dir))
    await submitter.reconcile(workload_id, store=store, backend=backend)
    await submitter.reconcile(workload_id, store=store, backend=backend)  # a redelivery
    state = await finished(store, workload_id, 120)
    run_dir = replica_work_dir / state.request.job_name / "run-1"
    logs = {path.stem: path.read_text() for path in run_dir.glob("*.log")}
    assert state.actual == "Completed", logs
    assert sorted(logs) == ["master-0", "worker-0", "worker-1"]  # started once, not twice
    for rank, replica in enumerate(["master-0", "worker-0", "worker-1"]):
        assert f"rank={rank} world=3 sum=6.0" in logs[replica]
    events = (await store.load(workload_id)).events
    facts = [type(e).__name__ for e in events if not isinstance(e, WorkloadPodsChanged)]
    # The replicas as pods: each Running, then each Succeeded, named as the operator names them
    # (each set as the changes reported so far make it).
    reported: list[tuple[PodObserved, ...]] = []
    for event in events:
        if isinstance(event, WorkloadPodsChanged):
            reported.append(workloads.changed(reported[-1] if reported else (), event))
    job = state.request.job_name
    assert [p.name for p in reported[0]] == [
        f"{job}-{r}" for r in ("master-0", "worker-0", "worker-1")
    ]
    assert {p.phase for p in reported[0]} == {"Running"}
    assert {(p.phase, p.restarts) for p in reported[-1]} == {("Succeeded", 0)}
    assert [p.role for p in reported[-1]] == ["master", "worker", "worker"]
    assert state.pods == reported[-1]
    # Once each; the supervisor may report Running before the submission is recorded.
    assert sorted(facts) == [
        "WorkloadRequested", "WorkloadRunning", "WorkloadSubmitted", "WorkloadSucceeded",
    ]  # fmt: skip
    assert facts[0] == "WorkloadRequested"
    assert facts[-1] == "WorkloadSucceeded"


async def test_a_failing_worker_stops_its_siblings_and_fails_the_run_naming_it(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    backend = LocalBackend(replica_work_dir, reports_to(store), stop_grace_s=5)
    workload_id = await request(clean_pool, reachable_script(replica_work_dir), fail_rank=2)
    started = time.monotonic()
    await submitter.reconcile(workload_id, store=store, backend=backend)
    state = await finished(store, workload_id, 120)
    assert (state.actual, state.reason) == ("Failed", "worker-1 exited with code 3")
    # The master and the other worker were blocked in the all-reduce: they were stopped, not
    # left to gloo's 30-minute timeout.
    assert time.monotonic() - started < 60
    await backend.close()


async def test_a_failure_within_the_backoff_limit_restarts_every_replica(
    clean_pool: asyncpg.Pool, replica_work_dir: Path
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    backend = LocalBackend(replica_work_dir, reports_to(store), pods=pods_to(store))
    scratch = replica_work_dir / "scratch"  # where the replicas' user may write
    scratch.mkdir(mode=0o1777)
    scratch.chmod(0o1777)
    marker = scratch / "failed-once"
    workload_id = await request(
        clean_pool,
        reachable_script(replica_work_dir),
        fail_rank=1,
        fail_once=marker,
        backoff_limit=1,
    )
    await submitter.reconcile(workload_id, store=store, backend=backend)
    state = await finished(store, workload_id, 120)
    worker = (replica_work_dir / state.request.job_name / "run-1" / "worker-0.log").read_text()
    assert state.actual == "Completed", worker
    assert marker.exists()
    assert "rank=1 failing on purpose" in worker
    assert "rank=1 world=3 sum=6.0" in worker
    assert {(p.phase, p.restarts) for p in state.pods} == {("Succeeded", 1)}  # all restarted once
