"""A workload plan as the Kubeflow job the Training Operator v1 runs (PyTorchJob, TFJob,
XGBoostJob, JAXJob, or MPIJob v2beta1), for clusters that still run it; Trainer v2 is
infra/backends/trainer_v2.py. Pure: a plan in, a manifest out."""

from typing import Any, Final

from domain.workload_plans import ReplicaGroup, WorkloadPlan
from infra.backends.kubeflow_pods import WORKLOAD_LABEL
from infra.backends.pod_templates import pod_template, restart_policy
from infra.backends.scheduling import Scheduling

KINDS: Final[dict[str, tuple[str, str, str, str]]] = {
    # framework: kind, apiVersion, replica-specs field, container name
    "PyTorch": ("PyTorchJob", "kubeflow.org/v1", "pytorchReplicaSpecs", "pytorch"),
    "TF": ("TFJob", "kubeflow.org/v1", "tfReplicaSpecs", "tensorflow"),
    "XGBoost": ("XGBoostJob", "kubeflow.org/v1", "xgbReplicaSpecs", "xgboost"),
    "JAX": ("JAXJob", "kubeflow.org/v1", "jaxReplicaSpecs", "jax"),
    "MPI": ("MPIJob", "kubeflow.org/v2beta1", "mpiReplicaSpecs", "mpi"),
}
PLURALS: Final = {
    "PyTorchJob": "pytorchjobs",
    "TFJob": "tfjobs",
    "XGBoostJob": "xgboostjobs",
    "JAXJob": "jaxjobs",
    "MPIJob": "mpijobs",
}
RUN_LABEL: Final = "trainplate.io/run"


def to_kubeflow_job(plan: WorkloadPlan, scheduling: Scheduling | None = None) -> dict[str, Any]:
    scheduling = scheduling or Scheduling()
    kind, api_version, field, container = KINDS[plan.framework]
    own = {WORKLOAD_LABEL: str(plan.workload_id), RUN_LABEL: str(plan.run)}
    labels = {**scheduling.job_labels(plan.project_name), **own}
    pod_labels = {**scheduling.pod_labels(plan.project_name), **own}
    spec: dict[str, Any] = {
        "runPolicy": _run_policy(plan),
        field: {
            group.role: _replica(plan, group, container, pod_labels, scheduling)
            for group in plan.groups
        },
    }
    if plan.framework == "MPI":
        spec["slotsPerWorker"] = plan.slots_per_worker or 1
        spec["sshAuthMountPath"] = plan.ssh_auth_mount_path or "/root/.ssh"
        spec["launcherCreationPolicy"] = plan.mpi_launcher_creation_policy or "AtStartup"
        spec["mpiImplementation"] = "OpenMPI"
    if plan.framework == "PyTorch":
        spec["nprocPerNode"] = "1"  # one process per pod unless the command says otherwise
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": plan.job_name, "namespace": plan.namespace, "labels": labels},
        "spec": spec,
    }


def _run_policy(plan: WorkloadPlan) -> dict[str, Any]:
    policy: dict[str, Any] = {"cleanPodPolicy": plan.clean_pod_policy or "None"}
    if plan.backoff_limit is not None:
        policy["backoffLimit"] = plan.backoff_limit
    if plan.ttl_seconds_after_finished is not None:
        policy["ttlSecondsAfterFinished"] = plan.ttl_seconds_after_finished
    policy["schedulingPolicy"] = {"minAvailable": plan.total_replicas, "queue": plan.project_name}
    if plan.priority_class is not None:
        policy["schedulingPolicy"]["priorityClass"] = plan.priority_class
    return policy


def _replica(
    plan: WorkloadPlan,
    group: ReplicaGroup,
    container_name: str,
    labels: dict[str, str],
    scheduling: Scheduling,
) -> dict[str, Any]:
    peers = {"labelSelector": {"matchLabels": {WORKLOAD_LABEL: str(plan.workload_id)}}}
    template = pod_template(
        plan,
        group.spec,
        container_name=container_name,
        labels=labels,
        scheduler_name=scheduling.scheduler,
        peers=peers,
    )
    return {
        "replicas": group.replicas,
        "restartPolicy": restart_policy(plan, group.spec),
        "template": template,
    }
