"""Every manifest the Kubernetes backend renders, for all five frameworks and each master mode,
validates against the upstream Kubeflow CRD schema with unknown fields as errors, and keeps the
operators' webhook rules that no schema can express."""

import re
from typing import Any

import pytest

from domain.events import WorkloadRequested
from domain.workload_plans import plan_for
from domain.workloads import InvalidWorkloadError
from infra.backends.kubeflow_jobs import KINDS, to_kubeflow_job
from infra.serialization import DOMAIN_CODEC
from tests.crd_schemas import require_crds, validator
from tests.workload_samples import WORKLOAD, requested

DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
require_crds()


CASES = [
    (framework, mode)
    for framework in ("PyTorch", "TF", "XGBoost", "JAX", "MPI")
    for mode in ("same", "separate", "workers-only")
    if not (framework in ("MPI", "XGBoost") and mode == "workers-only")
    and not (framework == "JAX" and mode == "separate")
]


@pytest.mark.parametrize(("framework", "mode"), CASES)
def test_the_manifest_validates_against_the_crd_and_the_webhook_rules(
    framework: str, mode: str
) -> None:
    manifest = to_kubeflow_job(plan_for(requested(framework, mode)))
    kind = manifest["kind"]
    errors = sorted(validator(kind).iter_errors(manifest), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    check_webhook_rules(manifest, framework)


def check_webhook_rules(manifest: dict[str, Any], framework: str) -> None:
    """The training operators' admission rules (kubeflow/trainer v1.9 webhooks; mpi-operator
    controller validation) that the CRD schema cannot express."""
    _, _, field, container = KINDS[framework]
    name = manifest["metadata"]["name"]
    assert DNS_1035.match(name)
    assert len(name) <= 63
    replicas = manifest["spec"][field]
    allowed = {
        "PyTorch": {"Master", "Worker"},
        "XGBoost": {"Master", "Worker"},
        "TF": {"PS", "Worker", "Chief", "Master", "Evaluator"},
        "JAX": {"Worker"},
        "MPI": {"Launcher", "Worker"},
    }[framework]
    assert set(replicas) <= allowed
    for role, replica in replicas.items():
        pod_name = f"{name}-{role.lower()}-{replica['replicas'] - 1}"
        assert len(pod_name) <= 63
        assert DNS_1035.match(pod_name)
        containers = replica["template"]["spec"]["containers"]
        assert containers
        assert all(c.get("image") for c in containers)
        assert any(c["name"] == container for c in containers)
        assert replica["restartPolicy"] in ("Always", "OnFailure", "Never", "ExitCode")
    policy = manifest["spec"]["runPolicy"]
    assert policy["cleanPodPolicy"] in ("All", "Running", "None")
    if framework == "PyTorch":
        assert replicas.get("Master", {"replicas": 1})["replicas"] == 1
        assert replicas["Worker"]["replicas"] >= 1
    if framework == "XGBoost":
        assert replicas["Master"]["replicas"] == 1
    if framework == "TF":
        assert sum(replicas.get(r, {"replicas": 0})["replicas"] for r in ("Chief", "Master")) <= 1
    if framework == "MPI":
        assert replicas["Launcher"]["replicas"] == 1
        assert manifest["spec"]["launcherCreationPolicy"] in ("AtStartup", "WaitForWorkersReady")


def test_the_rendering_carries_run_ai_scheduling_and_the_template_values() -> None:
    manifest = to_kubeflow_job(plan_for(requested("PyTorch", "separate")))
    assert manifest["metadata"] == {
        "name": "nightly-3f2b8c1d",
        "namespace": "runai-team",
        "labels": {
            "runai/queue": "team",
            "trainplate.io/workload-id": str(WORKLOAD),
            "trainplate.io/run": "1",
        },
    }
    master = manifest["spec"]["pytorchReplicaSpecs"]["Master"]
    worker = manifest["spec"]["pytorchReplicaSpecs"]["Worker"]
    assert (master["replicas"], worker["replicas"]) == (1, 3)
    pod = worker["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["python", "-m", "train"]
    assert container["args"] == ["--epochs", "3", "--lr", "0.1"]
    assert [e["name"] for e in container["env"]] == ["MODE", "TOKEN", "CFG", "POD"]
    assert container["resources"] == {
        "requests": {"cpu": "500m", "memory": "1G"},
        "limits": {"cpu": "2000m", "memory": "4G", "nvidia.com/gpu": 1, "hugepages-2Mi": "1Gi"},
    }
    assert pod["schedulerName"] == "runai-scheduler"
    assert pod["priorityClassName"] == "high"
    assert pod["terminationGracePeriodSeconds"] == 45
    assert worker["template"]["metadata"]["labels"]["kai.scheduler/preemptibility"] == (
        "non-preemptible"
    )
    assert {v["name"] for v in pod["volumes"]} == {f"vol-{i}" for i in range(7)} | {"dshm"}
    assert manifest["spec"]["runPolicy"] == {
        "cleanPodPolicy": "Running",
        "backoffLimit": 3,
        "ttlSecondsAfterFinished": 600,
        "schedulingPolicy": {"minAvailable": 4, "queue": "team", "priorityClass": "high"},
    }
    # The separate master keeps its own container.
    (launcher,) = master["template"]["spec"]["containers"]
    assert launcher["image"] == "registry.example.com/launch:1.0"
    assert launcher["command"] == ["sleep", "10"]


def test_a_jax_master_unlike_its_workers_cannot_run() -> None:
    with pytest.raises(InvalidWorkloadError) as caught:
        plan_for(requested("JAX", "separate"))
    assert caught.value.field == "/masterSpecSameAsWorker"


def test_a_jax_master_that_is_the_workers_copy_is_one_more_worker() -> None:
    manifest = to_kubeflow_job(plan_for(requested("JAX", "same")))
    assert list(manifest["spec"]["jaxReplicaSpecs"]) == ["Worker"]
    assert manifest["spec"]["jaxReplicaSpecs"]["Worker"]["replicas"] == 4


def test_a_typo_fails_the_strict_schema() -> None:
    manifest = to_kubeflow_job(plan_for(requested("PyTorch", "same")))
    manifest["spec"]["runPolicy"]["backoffLimt"] = 3
    manifest["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = "two"
    messages = {e.message for e in validator("PyTorchJob").iter_errors(manifest)}
    assert any("backoffLimt" in m for m in messages)
    assert any("'two' is not of type 'integer'" in m for m in messages)


def test_the_stored_request_alone_renders_the_same_job_again() -> None:
    """Re-submitting a snapshot reproduces the workload: the event, decoded from its stored
    bytes, plans and renders exactly what the original did."""
    event = requested("MPI", "separate")
    stored = DOMAIN_CODEC.decode(DOMAIN_CODEC.encode(event).data)
    assert isinstance(stored, WorkloadRequested)
    first = to_kubeflow_job(plan_for(event))
    assert to_kubeflow_job(plan_for(stored)) == first
    pod = first["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "credential-1"}]
