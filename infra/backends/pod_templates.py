"""The pod template of one replica group, as both Kubeflow APIs take it (infra/backends/
kubeflow_jobs.py, trainer_v2.py). What differs between them (container name, labels, scheduler,
how a pod finds its peers) is passed in. Pure: the plan's values and one group's spec in."""

import functools
import shlex
from typing import Any

from domain.template_specs import ReplicaSpec
from domain.workload_plans import WorkloadPlan
from infra.backends import shared_volumes
from infra.backends.kubeflow_pods import affinity, pod_security, toleration, volumes
from infra.backends.scheduling import PREEMPTIBILITY_LABEL
from services.errors import BackendRejectedError


def pod_template(
    plan: WorkloadPlan,
    spec: ReplicaSpec,
    *,
    container_name: str,
    labels: dict[str, str],
    scheduler_name: str,
    peers: dict[str, Any],
) -> dict[str, Any]:
    pod_labels = {
        **{label.name: label.value or "" for label in spec.labels or () if not label.exclude},
        **labels,
        PREEMPTIBILITY_LABEL: "preemptible" if plan.preemptible else "non-preemptible",
    }
    annotations = {a.name: a.value or "" for a in spec.annotations or () if not a.exclude}
    compute = spec.compute
    if compute is not None and compute.gpu_portion_request is not None:
        annotations["gpu-fraction"] = str(compute.gpu_portion_request)
    if compute is not None and compute.gpu_memory_request is not None:
        annotations["gpu-memory"] = compute.gpu_memory_request
    pod_volumes, mounts = volumes(spec.storage)
    for volume, mount in _data_volumes(plan, spec):
        pod_volumes.append(volume)
        mounts.append(mount)
    if compute is not None and compute.large_shm_request:
        pod_volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory"}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    pod: dict[str, Any] = {}
    if scheduler_name:
        pod["schedulerName"] = scheduler_name
    pod["restartPolicy"] = "Never"
    pod["containers"] = [container(spec, container_name, mounts)]
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
    placement = affinity(spec, peers)
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
    metadata: dict[str, Any] = {"labels": pod_labels}
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": pod}


def _data_volumes(
    plan: WorkloadPlan, spec: ReplicaSpec
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each data volume as a PVC of the workload's namespace: its origin PVC in its own project,
    elsewhere the read-only copy (infra/backends/shared_volumes.py). One the snapshot does not
    place is refused: a workload never runs without the mount it asked for."""
    claims = {claim.data_volume_id: claim for claim in plan.data_volume_claims}
    found = []
    for index, item in enumerate(spec.storage.data_volume or () if spec.storage else ()):
        if item.exclude or item.id is None:
            continue
        claim = claims.get(item.id)
        if claim is None:
            raise BackendRejectedError(
                plan.job_name,
                f"storage.dataVolume: the data volume {item.id} is not in the workload's"
                " snapshot, so where its PVC is is unknown",
            )
        name = f"dv-{index}"
        if claim.namespace == plan.namespace:
            source: dict[str, Any] = {"claimName": claim.claim_name}
            mount: dict[str, Any] = {"name": name, "mountPath": item.mount_path}
        else:
            source = {"claimName": shared_volumes.claim_name(claim), "readOnly": True}
            mount = {"name": name, "mountPath": item.mount_path, "readOnly": True}
        found.append(({"name": name, "persistentVolumeClaim": source}, mount))
    return found


def restart_policy(plan: WorkloadPlan, spec: ReplicaSpec) -> str:
    if spec.restart_policy is not None and spec.restart_policy != "Always":
        return spec.restart_policy
    # Retrying a failed pod is what backoffLimit counts; without one, a failure is final.
    return "OnFailure" if plan.backoff_limit else "Never"


@functools.lru_cache(maxsize=1024)
def words(line: str) -> tuple[str, ...]:
    """A command line split as a shell would; kept, as the workloads of a template repeat it."""
    return tuple(shlex.split(line))


def container(spec: ReplicaSpec, name: str, mounts: list[dict[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {"name": name, "image": spec.image}
    if spec.image_pull_policy is not None:
        found["imagePullPolicy"] = spec.image_pull_policy
    if spec.command:
        found["command"] = list(words(spec.command))
    if spec.args:
        found["args"] = list(words(spec.args))
    if spec.working_dir:
        found["workingDir"] = spec.working_dir
    env = _env(spec)
    if env:
        found["env"] = env
    resources = _resources(spec)
    if resources:
        found["resources"] = resources
    ports = [
        {"name": (p.name or f"port-{p.container}")[:15], "containerPort": p.container}
        for p in spec.ports or ()
        if p.container is not None and not p.exclude
    ]
    if ports:
        found["ports"] = ports
    if mounts:
        found["volumeMounts"] = mounts
    if spec.stdin is not None:
        found["stdin"] = spec.stdin
    if spec.tty is not None:
        found["tty"] = spec.tty
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
            found["securityContext"] = context
    return found


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
