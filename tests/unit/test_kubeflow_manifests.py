"""Every manifest the Kubernetes backend renders, for all five frameworks and each master mode,
validates against the upstream Kubeflow CRD schema with unknown fields as errors, and keeps the
operators' webhook rules that no schema can express."""

import copy
import os
import re
from functools import cache
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import yaml
from jsonschema import Draft7Validator

from domain.events import WorkloadRequested
from domain.workload_plans import plan_for
from domain.workloads import InvalidWorkloadError
from infra.backends.kubeflow_jobs import KINDS, to_kubeflow_job
from infra.serialization import DOMAIN_CODEC
from tests.workload_samples import requested_workload

CRDS = Path(__file__).parents[3] / "shared" / "crds"
FILES = {
    "PyTorchJob": "kubeflow.org_pytorchjobs.v1.yaml",
    "TFJob": "kubeflow.org_tfjobs.v1.yaml",
    "XGBoostJob": "kubeflow.org_xgboostjobs.v1.yaml",
    "JAXJob": "kubeflow.org_jaxjobs.v1.yaml",
    "MPIJob": "kubeflow.org_mpijobs.v2beta1.yaml",
}
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
WORKLOAD = UUID("3f2b8c1d-9a4e-4f6b-8d2c-7e1a5b9c0d4f")

if not CRDS.is_dir():  # CI always has them; a checkout elsewhere may not
    if os.environ.get("CI"):
        raise RuntimeError(f"the Kubeflow CRDs are missing at {CRDS}")
    pytest.skip(f"the Kubeflow CRDs are not at {CRDS}", allow_module_level=True)


def strict(schema: Any) -> Any:
    """As the API server's strict field validation: an object with declared properties and no
    `x-kubernetes-preserve-unknown-fields` takes no other field."""
    if isinstance(schema, dict):
        if (
            schema.get("type") == "object"
            and "properties" in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
            and "additionalProperties" not in schema
        ):
            schema["additionalProperties"] = False
        for value in schema.values():
            strict(value)
    elif isinstance(schema, list):
        for value in schema:
            strict(value)
    return schema


@cache
def validator(kind: str) -> Draft7Validator:
    with (CRDS / FILES[kind]).open() as f:
        crd = yaml.load(f, Loader=yaml.CSafeLoader)
    (version,) = [v for v in crd["spec"]["versions"] if v.get("served")]
    schema = strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
    schema["properties"]["metadata"] = {"type": "object"}
    return Draft7Validator(schema)


RICH = {
    "image": "registry.example.com/train:1.0",
    "imagePullPolicy": "Always",
    "command": "python -m train",
    "args": "--epochs 3 --lr '0.1'",
    "workingDir": "/workspace",
    "environmentVariables": [
        {"name": "MODE", "value": "fast"},
        {"name": "TOKEN", "secret": {"name": "credential-1", "key": "token"}},
        {"name": "CFG", "configMap": {"name": "settings", "key": "cfg"}},
        {"name": "POD", "podFieldRef": {"path": "metadata.name"}},
        {"name": "GONE", "value": "x", "exclude": True},
    ],
    "compute": {
        "cpuCoreRequest": 0.5,
        "cpuCoreLimit": 2,
        "cpuMemoryRequest": "1G",
        "cpuMemoryLimit": "4G",
        "gpuDevicesRequest": 1,
        "largeShmRequest": True,
        "extendedResources": [{"resource": "hugepages-2Mi", "quantity": "1Gi"}],
    },
    "tolerations": [
        {"name": "gpu", "operator": "Exists", "key": "nvidia.com/gpu", "effect": "NoSchedule"},
        {
            "name": "zone",
            "operator": "Equal",
            "key": "zone",
            "value": "a",
            "effect": "NoExecute",
            "seconds": 30,
        },
    ],
    "nodeAffinityRequired": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100"]}]}
        ]
    },
    "nodePools": ["default"],
    "podAffinity": {"type": "Preferred", "key": "kubernetes.io/hostname"},
    "security": {
        "uidGidSource": "custom",
        "runAsUid": 1000,
        "runAsGid": 1000,
        "supplementalGroups": "5,6",
        "capabilities": ["SYS_PTRACE"],
        "allowPrivilegeEscalation": False,
        "runAsNonRoot": True,
        "seccompProfileType": "RuntimeDefault",
    },
    "ports": [{"name": "tb", "container": 6006, "serviceType": "ClusterIP"}],
    "labels": [{"name": "team", "value": "vision"}],
    "annotations": [{"name": "note", "value": "nightly"}],
    "storage": {
        "pvc": [
            {
                "name": "data",
                "existingPvc": True,
                "claimName": "datasets",
                "path": "/data",
                "readOnly": True,
            },
            {
                "name": "scratch",
                "path": "/scratch",
                "ephemeral": True,
                "claimInfo": {"size": "10Gi", "storageClass": "fast", "volumeMode": "Filesystem"},
            },
        ],
        "nfs": [{"name": "n", "server": "nfs.local", "path": "/exports", "mountPath": "/nfs"}],
        "hostPath": [{"name": "h", "path": "/mnt/cache", "mountPath": "/cache", "readOnly": True}],
        "configMapVolume": [
            {"name": "c", "configMap": "settings", "mountPath": "/etc/cfg", "defaultMode": "0644"}
        ],
        "secretVolume": [{"name": "s", "secret": "credential-2", "mountPath": "/etc/secret"}],
        "emptyDirVolume": [
            {"name": "e", "path": "/tmp/work", "medium": "Memory", "sizeLimit": "1Gi"}
        ],
    },
    "preemptibility": "non-preemptible",
    "priorityClass": "high",
    "backoffLimit": 3,
    "terminationGracePeriodSeconds": 45,
    "autoDeletionTimeAfterCompletionSeconds": 600,
    "cleanPodPolicy": "Running",
}


def requested(framework: str, mode: str) -> WorkloadRequested:
    mpi = {"slotsPerWorker": 2, "sshAuthMountPath": "/home/mpi/.ssh"} if framework == "MPI" else {}
    masters: dict[str, dict[str, Any]] = {
        "same": {"image": RICH["image"]},
        "separate": {
            "image": "registry.example.com/launch:1.0",
            "command": "sleep 10",
            "compute": {"cpuCoreRequest": 0.25},
        },
    }
    return requested_workload(
        {**RICH, "distributedFramework": framework, "numWorkers": 3, **mpi},
        name="nightly",
        workload_id=WORKLOAD,
        same_as_worker=mode == "same",
        master=masters.get(mode),
        image_pull_secrets=("credential-1",),
    )


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
