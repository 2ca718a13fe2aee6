"""A workload plan as the Kubeflow job the training operator runs: PyTorchJob, TFJob, XGBoostJob,
JAXJob (kubeflow.org/v1) or MPIJob (kubeflow.org/v2beta1). Pure: a plan in, a manifest out.

Scheduling follows Run:ai: the project's queue label on the job and on every pod, the scheduler
name, the priority class and the preemptibility label on every pod.
"""

import shlex
from typing import Any, Final

from domain.template_specs import ReplicaSpec
from domain.workload_plans import ReplicaGroup, WorkloadPlan
from infra.backends.kubeflow_pods import WORKLOAD_LABEL, affinity, pod_security, toleration, volumes

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
QUEUE_LABEL: Final = "runai/queue"
PREEMPTIBILITY_LABEL: Final = "kai.scheduler/preemptibility"
RUN_LABEL: Final = "trainplate.io/run"
DEFAULT_SCHEDULER: Final = "runai-scheduler"


def to_kubeflow_job(
    plan: WorkloadPlan, *, scheduler_name: str = DEFAULT_SCHEDULER
) -> dict[str, Any]:
    kind, api_version, field, container = KINDS[plan.framework]
    labels = {
        QUEUE_LABEL: plan.project_name,
        WORKLOAD_LABEL: str(plan.workload_id),
        RUN_LABEL: str(plan.run),
    }
    spec: dict[str, Any] = {
        "runPolicy": _run_policy(plan),
        field: {
            group.role: _replica(plan, group, container, labels, scheduler_name)
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
    job_labels: dict[str, str],
    scheduler_name: str,
) -> dict[str, Any]:
    spec = group.spec
    labels = {
        **{label.name: label.value or "" for label in spec.labels or () if not label.exclude},
        **job_labels,
        PREEMPTIBILITY_LABEL: "preemptible" if plan.preemptible else "non-preemptible",
    }
    annotations = {a.name: a.value or "" for a in spec.annotations or () if not a.exclude}
    compute = spec.compute
    if compute is not None and compute.gpu_portion_request is not None:
        annotations["gpu-fraction"] = str(compute.gpu_portion_request)
    if compute is not None and compute.gpu_memory_request is not None:
        annotations["gpu-memory"] = compute.gpu_memory_request
    pod_volumes, mounts = volumes(spec.storage)
    if compute is not None and compute.large_shm_request:
        pod_volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory"}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    pod: dict[str, Any] = {
        "schedulerName": scheduler_name,
        "restartPolicy": "Never",
        "containers": [_container(spec, container_name, mounts)],
    }
    if plan.image_pull_secrets:
        pod["imagePullSecrets"] = [{"name": name} for name in plan.image_pull_secrets]
    if plan.priority_class is not None:
        pod["priorityClassName"] = plan.priority_class
    if plan.termination_grace_period_seconds is not None:
        pod["terminationGracePeriodSeconds"] = plan.termination_grace_period_seconds
    if pod_volumes:
        pod["volumes"] = pod_volumes
    if spec.tolerations:
        pod["tolerations"] = [toleration(t) for t in spec.tolerations if not t.exclude]
    placement = affinity(spec, str(plan.workload_id))
    if placement:
        pod["affinity"] = placement
    if spec.security is not None:
        context = pod_security(spec)
        if context:
            pod["securityContext"] = context
        if spec.security.host_ipc is not None:
            pod["hostIPC"] = spec.security.host_ipc
        if spec.security.host_network is not None:
            pod["hostNetwork"] = spec.security.host_network
    metadata: dict[str, Any] = {"labels": labels}
    if annotations:
        metadata["annotations"] = annotations
    return {
        "replicas": group.replicas,
        "restartPolicy": _restart_policy(plan, spec),
        "template": {"metadata": metadata, "spec": pod},
    }


def _restart_policy(plan: WorkloadPlan, spec: ReplicaSpec) -> str:
    if spec.restart_policy is not None and spec.restart_policy != "Always":
        return spec.restart_policy
    # Retrying a failed pod is what backoffLimit counts; without one, a failure is final.
    return "OnFailure" if plan.backoff_limit else "Never"


def _container(spec: ReplicaSpec, name: str, mounts: list[dict[str, Any]]) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": spec.image}
    if spec.image_pull_policy is not None:
        container["imagePullPolicy"] = spec.image_pull_policy
    if spec.command:
        container["command"] = shlex.split(spec.command)
    if spec.args:
        container["args"] = shlex.split(spec.args)
    if spec.working_dir:
        container["workingDir"] = spec.working_dir
    env = _env(spec)
    if env:
        container["env"] = env
    resources = _resources(spec)
    if resources:
        container["resources"] = resources
    ports = [
        {"name": (p.name or f"port-{p.container}")[:15], "containerPort": p.container}
        for p in spec.ports or ()
        if p.container is not None and not p.exclude
    ]
    if ports:
        container["ports"] = ports
    if mounts:
        container["volumeMounts"] = mounts
    if spec.stdin is not None:
        container["stdin"] = spec.stdin
    if spec.tty is not None:
        container["tty"] = spec.tty
    security = spec.security
    if security is not None:
        context: dict[str, Any] = {}
        if security.capabilities:
            context["capabilities"] = {"add": list(security.capabilities)}
        if security.allow_privilege_escalation is not None:
            context["allowPrivilegeEscalation"] = security.allow_privilege_escalation
        if security.read_only_root_filesystem is not None:
            context["readOnlyRootFilesystem"] = security.read_only_root_filesystem
        if context:
            container["securityContext"] = context
    return container


def _env(spec: ReplicaSpec) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = []
    for v in spec.environment_variables or ():
        if v.exclude:
            continue
        if v.secret is not None:
            env.append(
                {
                    "name": v.name,
                    "valueFrom": {"secretKeyRef": _key_ref(v.secret.name, v.secret.key)},
                }
            )
        elif v.config_map is not None:
            ref = _key_ref(v.config_map.name, v.config_map.key)
            env.append({"name": v.name, "valueFrom": {"configMapKeyRef": ref}})
        elif v.pod_field_ref is not None:
            env.append(
                {"name": v.name, "valueFrom": {"fieldRef": {"fieldPath": v.pod_field_ref.path}}}
            )
        elif v.user_credential is not None:
            ref = _key_ref(v.user_credential.name, v.user_credential.key)
            env.append({"name": v.name, "valueFrom": {"secretKeyRef": ref}})
        else:
            env.append({"name": v.name, "value": v.value or ""})
    return env


def _key_ref(name: str, key: str) -> dict[str, str]:
    return {"name": name, "key": key}


def _resources(spec: ReplicaSpec) -> dict[str, dict[str, Any]]:
    compute = spec.compute
    if compute is None:
        return {}
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    if compute.cpu_core_request is not None:
        requests["cpu"] = _cores(compute.cpu_core_request)
    if compute.cpu_core_limit is not None:
        limits["cpu"] = _cores(compute.cpu_core_limit)
    if compute.cpu_memory_request is not None:
        requests["memory"] = compute.cpu_memory_request
    if compute.cpu_memory_limit is not None:
        limits["memory"] = compute.cpu_memory_limit
    if compute.gpu_devices_request and compute.gpu_request_type is None:
        limits["nvidia.com/gpu"] = compute.gpu_devices_request
    for extended in compute.extended_resources or ():
        if not extended.exclude and extended.quantity is not None:
            limits[extended.resource] = extended.quantity
    found = {}
    if requests:
        found["requests"] = requests
    if limits:
        found["limits"] = limits
    return found


def _cores(cores: float) -> str:
    return f"{round(cores * 1000)}m"
