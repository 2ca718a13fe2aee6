"""The Kubernetes backend through kubernetes-asyncio, over HTTP, against an API server stand-in
(tests/kube_stand_in.py): create, create again (409 counts as done), a kind whose CRD is missing
(refused for good), delete, and job conditions watched to Succeeded and to Failed."""

import asyncio
import time
from collections.abc import AsyncIterator
from uuid import UUID

import pytest
from kubernetes_asyncio import client

from domain.workload_plans import WorkloadPlan, plan_for
from domain.workloads import Outcome
from infra.backends.kubernetes import KubernetesBackend, outcome_of
from infra.backends.scheduling import Scheduling
from services.errors import BackendRejectedError
from tests.kube_stand_in import KubeStandIn, serving
from tests.workload_samples import requested_workload

pytestmark = [pytest.mark.integration]

Report = tuple[UUID, int, Outcome, str | None]


def plan(framework: str = "PyTorch") -> WorkloadPlan:
    spec = {"distributedFramework": framework, "numWorkers": 2, "image": "img", "command": "run"}
    return plan_for(requested_workload(spec))


class Recorder(list[Report]):
    """Where the backend's reports go."""

    async def __call__(
        self, workload_id: UUID, run: int, outcome: Outcome, reason: str | None = None
    ) -> None:
        self.append((workload_id, run, outcome, reason))


@pytest.fixture
async def stand_in() -> AsyncIterator[KubeStandIn]:
    async with serving(KubeStandIn({"pytorchjobs", "tfjobs"})) as server:
        yield server


@pytest.fixture
async def api(stand_in: KubeStandIn) -> AsyncIterator[client.ApiClient]:
    configuration = client.Configuration(host=stand_in.url)
    async with client.ApiClient(configuration) as api:
        yield api


async def test_create_then_create_again_then_delete(
    stand_in: KubeStandIn, api: client.ApiClient
) -> None:
    reports = Recorder()
    backend = KubernetesBackend(
        api, reports, kubeflow_api="v1", scheduling=Scheduling(queues="kai")
    )
    job = plan()
    submitted = await backend.submit(job)
    assert submitted.backend == "kubernetes"
    assert await backend.submit(job) == submitted  # 409 AlreadyExists: submitted before
    key = ("kubeflow.org/v1", "pytorchjobs", "runai-team", job.job_name)
    assert list(stand_in.objects) == [key]
    created = stand_in.objects[key]
    assert created["kind"] == "PyTorchJob"
    pod = created["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert pod["schedulerName"] == "kai-scheduler"
    assert (
        stand_in.requests[:2]
        == [
            ("POST", "/apis/kubeflow.org/v1/namespaces/runai-team/pytorchjobs"),
        ]
        * 2
    )
    await backend.stop(job)
    await backend.stop(job)  # gone already: stopped all the same
    assert stand_in.objects == {}
    assert reports == []


async def test_a_kind_without_its_crd_is_refused_for_good(api: client.ApiClient) -> None:
    with pytest.raises(BackendRejectedError) as caught:
        await KubernetesBackend(api, Recorder(), kubeflow_api="v1").submit(plan("JAX"))
    assert "404" in caught.value.reason


async def test_watched_conditions_become_the_runs_outcomes(
    stand_in: KubeStandIn, api: client.ApiClient
) -> None:
    reports = Recorder()
    backend = KubernetesBackend(api, reports, kubeflow_api="v1")
    good, bad = plan("PyTorch"), plan("TF")
    await backend.submit(good)
    await backend.submit(bad)
    stop = asyncio.Event()
    watching = asyncio.create_task(backend.watch(stop))
    try:
        created = {"type": "Created", "status": "True", "reason": "PyTorchJobCreated"}
        running = {"type": "Running", "status": "True", "reason": "PyTorchJobRunning"}
        await until(lambda: len(stand_in._watchers) >= 2)
        stand_in.set_conditions("pytorchjobs", "runai-team", good.job_name, [created, running])
        await until(lambda: (good.workload_id, 1, "running", None) in reports)
        done = {"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded"}
        stand_in.set_conditions(
            "pytorchjobs", "runai-team", good.job_name,
            [created, {**running, "status": "False"}, done],
        )  # fmt: skip
        await until(lambda: (good.workload_id, 1, "succeeded", None) in reports)
        message = "TFJob runai-team/x has failed because 1 Worker replica(s) failed."
        failed = {"type": "Failed", "status": "True", "reason": "TFJobFailed", "message": message}
        stand_in.set_conditions("tfjobs", "runai-team", bad.job_name, [created, failed])
        await until(lambda: any(r[0] == bad.workload_id and r[2] == "failed" for r in reports))
    finally:
        stop.set()
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
    (failure,) = [r for r in reports if r[0] == bad.workload_id]
    assert failure[3] == failed["message"]


def test_conditions_are_read_the_robust_way() -> None:
    assert outcome_of([]) is None
    assert outcome_of([{"type": "Created", "status": "True"}]) is None
    assert outcome_of([{"type": "Running", "status": "True"}]) == ("running", None)
    restarting_then_failed = [
        {"type": "Running", "status": "False"},
        {"type": "Failed", "status": "True", "reason": "PyTorchJobFailed"},
    ]
    assert outcome_of(restarting_then_failed) == ("failed", "PyTorchJobFailed")


async def until(condition: object, within_s: float = 10) -> None:
    deadline = time.monotonic() + within_s
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.05)
