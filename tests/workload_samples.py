"""A requested workload as the tests need one: a spec (Run:ai's wire shape), a name, a master."""

from typing import Any, Final
from uuid import UUID, uuid4

import msgspec

from domain import workloads
from domain.events import WorkloadRequested, WorkloadSnapshot
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec


def requested_workload(
    spec: dict[str, Any],
    *,
    name: str = "job",
    workload_id: UUID | None = None,
    same_as_worker: bool = True,
    master: dict[str, Any] | None = None,
    image_pull_secrets: tuple[str, ...] = (),
) -> WorkloadRequested:
    workload_id = workload_id or uuid4()
    snapshot = WorkloadSnapshot(
        spec=msgspec.convert(spec, DistributedTemplateSpec),
        master_spec_same_as_worker=same_as_worker,
        master=None if master is None else msgspec.convert(master, MasterTemplateSpec),
        image_pull_secrets=image_pull_secrets,
    )
    return WorkloadRequested(
        workload_id=workload_id,
        name=name,
        requested_name=name,
        cluster_id=UUID(int=1),
        project_id="1",
        project_name="team",
        namespace="runai-team",
        job_name=workloads.job_name(name, workload_id),
        snapshot=snapshot,
    )


WORKLOAD: Final = UUID("3f2b8c1d-9a4e-4f6b-8d2c-7e1a5b9c0d4f")
# A spec that reaches every part of a replica's rendering.
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


def requested(framework: str, mode: str, **changes: Any) -> WorkloadRequested:
    """A rich workload of `framework` with its master "same" as the workers, "separate" or
    none ("workers-only"); `changes` laid over the spec."""
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
        {**RICH, "distributedFramework": framework, "numWorkers": 3, **mpi, **changes},
        name="nightly",
        workload_id=WORKLOAD,
        same_as_worker=mode == "same",
        master=masters.get(mode),
        image_pull_secrets=("credential-1",),
    )
