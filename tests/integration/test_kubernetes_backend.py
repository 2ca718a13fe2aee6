"""The Kubernetes backend through kubernetes-asyncio, over HTTP, against an API server stand-in
(tests/kube_stand_in.py), for Trainer v2 (TrainingRuntime + TrainJob) and the Training
Operator v1: create, create again (409 counts as done), a kind whose CRD is missing (refused for
good), suspend and resume (v2), delete, and conditions watched to done and to failed."""

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import msgspec
import pytest
from kubernetes_asyncio import client

from domain import storage_classes
from domain.cluster_specs import StorageClassSpec
from domain.commands import CreateCluster
from domain.events import DataVolumeClaim, EventMetadata, PodObserved
from domain.org_units import OrgUnitNotFoundError
from domain.workload_plans import WorkloadPlan, plan_for
from domain.workloads import Outcome
from infra.backends.kubernetes import KubernetesBackend, outcome_of, train_job_outcome
from infra.backends.scheduling import Scheduling
from infra.backends.storage_class_listing import StorageClassListing
from infra.jetstream.data_volume_withdrawals import DataVolumeCopies
from infra.postgres.names import name_lookups
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.workers.submitter import storage_classes_to
from services.errors import BackendRejectedError
from services.org_units import create_cluster
from services.ports.workload_backends import RunStatus
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


@contextlib.asynccontextmanager
async def cluster(*installed: str) -> AsyncIterator[tuple[KubeStandIn, client.ApiClient]]:
    """A stand-in API server with these kinds installed, and a client of it."""
    async with (
        serving(KubeStandIn(set(installed))) as server,
        client.ApiClient(client.Configuration(host=server.url)) as api,
    ):
        yield server, api


@pytest.fixture
async def stand_in_api() -> AsyncIterator[tuple[KubeStandIn, client.ApiClient]]:
    async with cluster("pytorchjobs", "tfjobs") as found:
        yield found


@pytest.fixture
def stand_in(stand_in_api: tuple[KubeStandIn, client.ApiClient]) -> KubeStandIn:
    return stand_in_api[0]


@pytest.fixture
def api(stand_in_api: tuple[KubeStandIn, client.ApiClient]) -> client.ApiClient:
    return stand_in_api[1]


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


@pytest.fixture
async def trainer_cluster() -> AsyncIterator[tuple[KubeStandIn, client.ApiClient]]:
    async with cluster("trainingruntimes", "trainjobs") as found:
        yield found


@pytest.fixture
def trainer_stand_in(trainer_cluster: tuple[KubeStandIn, client.ApiClient]) -> KubeStandIn:
    return trainer_cluster[0]


@pytest.fixture
def trainer_api(trainer_cluster: tuple[KubeStandIn, client.ApiClient]) -> client.ApiClient:
    return trainer_cluster[1]


TRAINER = "trainer.kubeflow.org/v1alpha1"


async def test_a_train_job_is_made_with_its_runtime_suspended_resumed_and_deleted(
    trainer_stand_in: KubeStandIn, trainer_api: client.ApiClient
) -> None:
    stand_in = trainer_stand_in
    backend = KubernetesBackend(trainer_api, Recorder(), scheduling=Scheduling(queues="kueue"))
    first = plan()
    submitted = await backend.submit(first)
    runtime: Any
    job: Any
    runtime, job = submitted.manifests
    assert (runtime["kind"], job["kind"]) == ("TrainingRuntime", "TrainJob")
    runtime_key = (TRAINER, "trainingruntimes", "runai-team", runtime["metadata"]["name"])
    job_key = (TRAINER, "trainjobs", "runai-team", first.job_name)
    assert set(stand_in.objects) == {runtime_key, job_key}
    assert stand_in.objects[job_key]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team"
    # Again (a redelivery): both exist, the TrainJob is this run's already; nothing changes.
    await backend.submit(first)
    assert [r for r in stand_in.requests if r[0] == "PATCH"] == []
    # A second workload of the same template version shares the runtime.
    other = plan()
    await backend.submit(other)
    assert [k[1] for k in stand_in.objects].count("trainingruntimes") == 1
    # Suspend keeps the TrainJob, suspended; resume (run 2) lifts it under the new run's label.
    await backend.stop(first, suspend=True)
    assert stand_in.objects[job_key]["spec"]["suspend"] is True
    resumed = msgspec.structs.replace(first, run=2)
    await backend.submit(resumed)
    job_now = stand_in.objects[job_key]
    assert job_now["spec"]["suspend"] is False
    assert job_now["metadata"]["labels"]["trainplate.io/run"] == "2"
    assert job_now["spec"]["runtimePatches"] == job["spec"]["runtimePatches"]
    # Delete removes the TrainJob; the runtime stays for the version's other workloads.
    await backend.stop(resumed)
    await backend.stop(resumed)  # gone already: stopped all the same
    assert job_key not in stand_in.objects
    assert runtime_key in stand_in.objects
    await backend.stop(first, suspend=True)  # suspending what is gone: nothing to keep


async def test_a_cluster_without_the_trainer_refuses_for_good(api: client.ApiClient) -> None:
    with pytest.raises(BackendRejectedError) as caught:
        await KubernetesBackend(api, Recorder()).submit(plan())
    assert "404" in caught.value.reason


async def test_train_job_conditions_become_the_runs_outcomes(
    trainer_stand_in: KubeStandIn, trainer_api: client.ApiClient
) -> None:
    stand_in = trainer_stand_in
    reports = Recorder()
    backend = KubernetesBackend(trainer_api, reports)
    good, bad = plan("PyTorch"), plan("MPI")
    await backend.submit(good)
    await backend.submit(bad)
    stop = asyncio.Event()
    watching = asyncio.create_task(backend.watch(stop))
    try:
        await until(lambda: len(stand_in._watchers) >= 1)
        created = {"type": "Created", "status": "True", "reason": "JobSetCreated"}
        active = [{"name": "node", "active": 3, "ready": 3, "succeeded": 0, "failed": 0}]
        status = {"conditions": [created], "jobsStatus": active}
        stand_in.set_status("trainjobs", "runai-team", good.job_name, status)
        await until(lambda: (good.workload_id, 1, "running", None) in reports)
        complete = {"type": "Complete", "status": "True", "reason": "JobSetCompleted"}
        done = [{"name": "node", "active": 0, "ready": 0, "succeeded": 3, "failed": 0}]
        stand_in.set_status(
            "trainjobs", "runai-team", good.job_name,
            {"conditions": [created, complete], "jobsStatus": done},
        )  # fmt: skip
        await until(lambda: (good.workload_id, 1, "succeeded", None) in reports)
        message = "TrainJob exceeded its active deadline"
        failed = {
            "type": "Failed",
            "status": "True",
            "reason": "DeadlineExceeded",
            "message": message,
        }
        stand_in.set_status("trainjobs", "runai-team", bad.job_name, {"conditions": [failed]})
        await until(lambda: any(r[0] == bad.workload_id and r[2] == "failed" for r in reports))
    finally:
        stop.set()
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
    (failure,) = [r for r in reports if r[0] == bad.workload_id]
    assert failure[3] == message


def test_train_job_status_is_read_the_robust_way() -> None:
    assert train_job_outcome({}) is None
    assert train_job_outcome({"conditions": [{"type": "Created", "status": "True"}]}) is None
    pending = [{"name": "node", "active": 0, "ready": 0}]
    assert train_job_outcome({"jobsStatus": pending}) is None
    suspended = {
        "conditions": [{"type": "Suspended", "status": "True"}],
        "jobsStatus": [{"name": "node", "active": 2}],  # pods still going away
    }
    assert train_job_outcome(suspended) is None
    failed_after_complete_false = {
        "conditions": [
            {"type": "Complete", "status": "False"},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"},
        ]
    }
    assert train_job_outcome(failed_after_complete_false) == ("failed", "BackoffLimitExceeded")


class PodRecorder(list[tuple[UUID, int | None, list[str]]]):
    """Where the backend's pod reports go: the workload, the run, the pods' names and phases."""

    async def __call__(
        self, workload_id: UUID, run: int | None, pods: Sequence[PodObserved]
    ) -> None:
        self.append((workload_id, run, [f"{p.name}:{p.phase}" for p in pods]))


async def test_the_pods_of_a_workload_are_watched_and_reported_as_a_set() -> None:
    async with cluster("trainingruntimes", "trainjobs", "pods") as (stand_in, api):
        pods = PodRecorder()
        backend = KubernetesBackend(api, Recorder(), pods=pods)
        job = plan()
        await backend.submit(job)
        stop = asyncio.Event()
        watching = asyncio.create_task(backend.watch(stop))
        try:
            await until(lambda: len(stand_in._watchers) >= 2)

            def pod(index: int, phase: str) -> dict[str, Any]:
                return {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{job.job_name}-node-0-{index}",
                        "namespace": "runai-team",
                        "uid": str(UUID(int=index + 1)),
                        "creationTimestamp": "2026-12-01T09:00:00Z",
                        "labels": {
                            "trainplate.io/workload-id": str(job.workload_id),
                            "jobset.sigs.k8s.io/replicatedjob-name": "node",
                        },
                    },
                    "spec": {"containers": [{"name": "node", "image": "img"}]},
                    "status": {"phase": phase},
                }

            stand_in.put_pod(pod(0, "Pending"))
            stand_in.put_pod(pod(1, "Running"))
            stand_in.put_pod(pod(0, "Running"))
            names = [f"{job.job_name}-node-0-{i}:Running" for i in (0, 1)]
            await until(lambda: bool(pods) and sorted(pods[-1][2]) == names)
            stand_in.remove_pod("runai-team", f"{job.job_name}-node-0-0")
            await until(lambda: pods[-1][2] == [names[1]])
        finally:
            stop.set()
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
    assert {(workload, run) for workload, run, _ in pods} == {(job.workload_id, None)}


def shared_volume_plan(volume_id: UUID) -> WorkloadPlan:
    """A workload of runai-team mounting a data volume of runai-data."""
    spec = {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "img", "command": "run",
            "storage": {"dataVolume": [{"id": str(volume_id), "mountPath": "/data"}]}}  # fmt: skip
    event = requested_workload(spec)
    claim = DataVolumeClaim(data_volume_id=volume_id, namespace="runai-data", claim_name="corpus")
    snapshot = msgspec.structs.replace(event.snapshot, data_volume_claims=(claim,))
    return plan_for(msgspec.structs.replace(event, snapshot=snapshot))


def origin(modes: list[str], phase: str = "Bound") -> tuple[dict[str, Any], dict[str, Any]]:
    """The data volume's PVC in its project's namespace, and the NFS PV it is bound to."""
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "corpus", "namespace": "runai-data"},
           "spec": {"accessModes": modes, "volumeName": "pv-corpus", "storageClassName": "nfs",
                    "resources": {"requests": {"storage": "1Ti"}}},
           "status": {"phase": phase}}  # fmt: skip
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-corpus"},
          "spec": {"accessModes": modes, "capacity": {"storage": "1Ti"},
                   "nfs": {"server": "nas.example.com", "path": "/exports/corpus"},
                   "mountOptions": ["nfsvers=4.1"], "storageClassName": "nfs",
                   "persistentVolumeReclaimPolicy": "Delete",
                   "claimRef": {"namespace": "runai-data", "name": "corpus"}}}  # fmt: skip
    return pvc, pv


async def test_a_data_volume_shared_from_another_namespace_is_mounted_read_only_from_a_copy(
    trainer_stand_in: KubeStandIn, trainer_api: client.ApiClient
) -> None:
    stand_in = trainer_stand_in
    volume_id = uuid4()
    pvc, pv = origin(["ReadWriteMany"])
    stand_in.put_core("persistentvolumeclaims", pvc)
    stand_in.put_core("persistentvolumes", pv)
    backend = KubernetesBackend(trainer_api, Recorder())
    first = shared_volume_plan(volume_id)
    submitted = await backend.submit(first)
    copy_pv: Any
    copy_pvc: Any
    runtime: Any
    copy_pv, copy_pvc, runtime, _ = submitted.manifests
    made_pv = stand_in.objects[("v1", "persistentvolumes", "", copy_pv["metadata"]["name"])]
    made_pvc = stand_in.objects[("v1", "persistentvolumeclaims", "runai-team", f"dv-{volume_id}")]
    # The same storage, read-only (in the source itself: a pod of the namespace that names the
    # claim as its own still mounts it read-only), kept when the copy goes, bound ahead to the
    # copy's claim.
    assert made_pv["spec"]["nfs"] == {**pv["spec"]["nfs"], "readOnly": True}
    assert made_pv["spec"]["mountOptions"] == ["nfsvers=4.1"]
    assert made_pv["spec"]["accessModes"] == ["ReadOnlyMany"]
    assert made_pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert made_pv["spec"]["claimRef"] == {"namespace": "runai-team", "name": f"dv-{volume_id}"}
    assert made_pvc["spec"]["volumeName"] == made_pv["metadata"]["name"]
    assert made_pvc["spec"]["storageClassName"] == ""  # nothing provisions an empty volume
    assert made_pvc["spec"]["resources"] == {"requests": {"storage": "1Ti"}}
    assert (made_pv, made_pvc) == (copy_pv, copy_pvc)
    # Both are what the Kubernetes API takes: nothing unknown, nothing lost on a round trip.
    for body, model in ((made_pv, "V1PersistentVolume"), (made_pvc, "V1PersistentVolumeClaim")):
        parsed = trainer_api._ApiClient__deserialize(body, model)  # type: ignore[attr-defined]
        assert trainer_api.sanitize_for_serialization(parsed) == body
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    spec = pod["template"]["spec"]
    claim = {"claimName": f"dv-{volume_id}", "readOnly": True}
    assert {"name": "dv-0", "persistentVolumeClaim": claim} in spec["volumes"]
    (container,) = spec["containers"]
    assert {"name": "dv-0", "mountPath": "/data", "readOnly": True} in container["volumeMounts"]
    # A second workload of the namespace shares the copy (409 counts as made).
    await backend.submit(shared_volume_plan(volume_id))
    assert [k[1] for k in stand_in.objects].count("persistentvolumes") == 2  # origin + copy
    assert stand_in.objects[("v1", "persistentvolumes", "", "pv-corpus")] == pv  # untouched


@pytest.mark.parametrize(
    ("modes", "phase", "missing", "said"),
    [
        (["ReadWriteOnce"], "Bound", False, "one node at a time"),
        (["ReadWriteMany"], "Pending", False, "not bound"),
        (["ReadWriteMany"], "Bound", True, "404"),
        (["ReadWriteMany"], "Bound", False, "hostPath volume, which cannot be made read-only"),
    ],
)
async def test_a_data_volume_that_cannot_be_shared_refuses_the_workload_saying_why(
    trainer_stand_in: KubeStandIn,
    trainer_api: client.ApiClient,
    modes: list[str],
    phase: str,
    missing: bool,
    said: str,
) -> None:
    pvc, pv = origin(modes, phase)
    if said.startswith("hostPath"):
        pv["spec"]["hostPath"] = {"path": "/srv/corpus"}
        del pv["spec"]["nfs"]
    if not missing:
        trainer_stand_in.put_core("persistentvolumeclaims", pvc)
        trainer_stand_in.put_core("persistentvolumes", pv)
    with pytest.raises(BackendRejectedError) as caught:
        await KubernetesBackend(trainer_api, Recorder()).submit(shared_volume_plan(uuid4()))
    assert caught.value.reason.startswith("storage.dataVolume: ")
    assert said in caught.value.reason
    assert not [k for k in trainer_stand_in.objects if k[1] in ("trainjobs", "trainingruntimes")]


async def test_withdrawing_a_data_volume_deletes_its_copies_in_every_namespace_and_only_them(
    trainer_stand_in: KubeStandIn, trainer_api: client.ApiClient
) -> None:
    stand_in = trainer_stand_in
    pvc, pv = origin(["ReadWriteMany"])
    stand_in.put_core("persistentvolumeclaims", pvc)
    stand_in.put_core("persistentvolumes", pv)
    backend = KubernetesBackend(trainer_api, Recorder())
    assert isinstance(backend, DataVolumeCopies)  # so its submitter withdraws copies
    withdrawn, kept = uuid4(), uuid4()
    await backend.submit(shared_volume_plan(withdrawn))  # into runai-team
    other = msgspec.structs.replace(shared_volume_plan(withdrawn), namespace="runai-vision")
    await backend.submit(other)
    await backend.submit(shared_volume_plan(kept))

    def copies(volume: UUID) -> list[tuple[str, str, str]]:
        return sorted(
            (plural, namespace, name)
            for (_, plural, namespace, name), body in stand_in.objects.items()
            if plural.startswith("persistentvolume")
            and (body["metadata"].get("labels") or {}).get("trainplate.io/data-volume-id")
            == str(volume)
        )

    assert len(copies(withdrawn)) == 4  # a PVC and a PV in each of two namespaces
    assert [c[1] for c in copies(withdrawn) if c[0] == "persistentvolumeclaims"] == [
        "runai-team",
        "runai-vision",
    ]
    await backend.withdraw_data_volume(withdrawn)
    assert copies(withdrawn) == []
    assert len(copies(kept)) == 2  # another data volume's copy stays
    # The origin, of the data volume's own project, is not the service's to delete.
    assert stand_in.objects[("v1", "persistentvolumeclaims", "runai-data", "corpus")] == pvc
    assert stand_in.objects[("v1", "persistentvolumes", "", "pv-corpus")] == pv
    await backend.withdraw_data_volume(withdrawn)  # again: nothing left, nothing refused
    assert copies(withdrawn) == []


async def test_a_runs_status_is_its_job_as_the_api_server_has_it_now(
    stand_in: KubeStandIn, api: client.ApiClient
) -> None:
    """What the sweep asks of a run recorded unfinished: its job read as the watch reads it,
    and failed once the job is gone (a report that never came, a job deleted by hand)."""
    backend = KubernetesBackend(api, Recorder(), kubeflow_api="v1")
    job = plan()
    await backend.submit(job)
    assert await backend.status(job) is None  # nothing decided yet
    done = {"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded"}
    stand_in.set_conditions("pytorchjobs", "runai-team", job.job_name, [done])
    assert await backend.status(job) == RunStatus("succeeded")
    stand_in.objects.clear()
    assert await backend.status(job) == RunStatus(
        "failed", f"its job runai-team/{job.job_name} is gone"
    )


STORAGE = "storage.k8s.io/v1"
NO_PROVISIONER = "kubernetes.io/no-provisioner"


def storage_class(name: str, **given: Any) -> dict[str, Any]:
    return {"apiVersion": STORAGE, "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": NO_PROVISIONER, **given}  # fmt: skip


class ClassRecorder(list[dict[str, StorageClassSpec]]):
    """Where the backend reports the cluster's storage classes; `refusal` raised once if set."""

    refusal: Exception | None = None

    async def __call__(self, classes: Mapping[str, StorageClassSpec]) -> None:
        if self.refusal is not None:
            refusal, self.refusal = self.refusal, None
            raise refusal
        self.append(dict(classes))


async def test_the_cluster_s_storage_classes_are_listed_and_reported_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with cluster("storageclasses") as (stand_in, api):
        default = {"storageclass.kubernetes.io/is-default-class": "true"}
        standard = storage_class(
            "standard", provisioner="ebs.csi.aws.com", allowVolumeExpansion=True
        )
        standard["metadata"]["annotations"] = default
        stand_in.put_cluster_object(STORAGE, "storageclasses", standard)
        stand_in.put_cluster_object(STORAGE, "storageclasses", storage_class("nfs"))
        reported = ClassRecorder()
        listing = StorageClassListing(api, reported, period_s=60)
        await listing.once()
        assert reported == [
            {
                "standard": StorageClassSpec(
                    provisioner="ebs.csi.aws.com", allow_volume_expansion=True, is_default=True
                ),
                "nfs": StorageClassSpec(provisioner=NO_PROVISIONER, is_default=False),
            }
        ]
        stand_in.remove_cluster_object(STORAGE, "storageclasses", "nfs")
        stand_in.failing.add("storageclasses")
        await listing.once()  # the API server fails: logged, nothing reported, no raise
        assert "reporting the cluster's storage classes: 500" in caplog.text
        stand_in.failing.clear()
        reported.refusal = OrgUnitNotFoundError("cluster", "c")
        await listing.once()  # the report is refused: logged likewise
        warned = [r.getMessage() for r in caplog.records if r.name.endswith("class_listing")]
        assert len(warned) == 2
        assert warned[1].endswith(str(reported.refusal or OrgUnitNotFoundError("cluster", "c")))
        await listing.once()
        assert len(reported) == 2
        assert list(reported[-1]) == ["standard"]
        assert ("GET", "/apis/storage.k8s.io/v1/storageclasses", {"timeoutSeconds": "30"}) in (
            stand_in.calls
        )


async def test_the_watch_lists_storage_classes_at_start_and_then_each_period() -> None:
    async with cluster("storageclasses") as (stand_in, api):
        stand_in.put_cluster_object(STORAGE, "storageclasses", storage_class("standard"))
        reported = ClassRecorder()
        backend = KubernetesBackend(api, Recorder(), storage_classes=reported,
                                    storage_class_period_s=0.05)  # fmt: skip
        stop = asyncio.Event()
        watching = asyncio.create_task(backend.watch(stop))
        try:
            await until(lambda: len(reported) >= 1)
            stand_in.put_cluster_object(STORAGE, "storageclasses", storage_class("fast"))
            await until(lambda: "fast" in reported[-1])
        finally:
            stop.set()
            await asyncio.wait_for(watching, timeout=5)  # it ends on stop, having never failed
        assert reported[0] == {
            "standard": StorageClassSpec(provisioner=NO_PROVISIONER, is_default=False)
        }


async def test_a_submitter_of_a_cluster_registers_its_classes_and_removes_those_gone(
    clean_pool: asyncpg.Pool,
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    cluster_id = uuid4()
    system = EventMetadata(actor_subject="setup", actor_kind="system")
    await create_cluster(CreateCluster(cluster_id=cluster_id, name="east", metadata=system),
                         streams=store)  # fmt: skip
    reports = storage_classes_to(cluster_id, store, name_lookups(clean_pool).holders)
    assert reports is not None
    assert storage_classes_to(None, store, name_lookups(clean_pool).holders) is None
    async with cluster("storageclasses") as (stand_in, api):
        for name in ("standard", "fast"):
            stand_in.put_cluster_object(STORAGE, "storageclasses", storage_class(name))
        listing = StorageClassListing(api, reports, period_s=60)
        await listing.once()
        await listing.once()  # unchanged: nothing more is written
        stand_in.remove_cluster_object(STORAGE, "storageclasses", "fast")
        await listing.once()
    fast = (await store.load(storage_classes.stream_of(cluster_id, "fast"))).events
    standard = (await store.load(storage_classes.stream_of(cluster_id, "standard"))).events
    assert [type(e).__name__ for e in fast] == ["StorageClassRegistered", "StorageClassRemoved"]
    assert [type(e).__name__ for e in standard] == ["StorageClassRegistered"]
