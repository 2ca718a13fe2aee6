"""A workload plan as the Kubeflow job the training operator runs: PyTorchJob, TFJob, XGBoostJob,
JAXJob (kubeflow.org/v1) or MPIJob (kubeflow.org/v2beta1). Pure: a plan in, a manifest out.

Scheduling follows Run:ai: the project's queue label on the job and on every pod, the scheduler
name, the priority class and the preemptibility label on every pod.
"""

import shlex
from typing import Any, Final

from domain.template_specs import ReplicaSpec, Storage
from domain.workload_plans import ReplicaGroup, WorkloadPlan

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
WORKLOAD_LABEL: Final = "trainplate.io/workload-id"
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
    volumes, mounts = _volumes(spec.storage)
    if compute is not None and compute.large_shm_request:
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory"}})
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
    if volumes:
        pod["volumes"] = volumes
    if spec.tolerations:
        pod["tolerations"] = [_toleration(t) for t in spec.tolerations if not t.exclude]
    affinity = _affinity(spec, str(plan.workload_id))
    if affinity:
        pod["affinity"] = affinity
    if spec.security is not None:
        pod_security = _pod_security(spec)
        if pod_security:
            pod["securityContext"] = pod_security
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


def _toleration(t: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"operator": t.operator or "Equal"}
    if t.key is not None:
        found["key"] = t.key
    if t.value is not None and t.operator != "Exists":
        found["value"] = t.value
    if t.effect is not None and t.effect != "Any":
        found["effect"] = t.effect
    if t.seconds is not None:
        found["tolerationSeconds"] = t.seconds
    return found


def _affinity(spec: ReplicaSpec, workload_id: str) -> dict[str, Any]:
    affinity: dict[str, Any] = {}
    terms: list[dict[str, list[dict[str, Any]]]] = []
    required = spec.node_affinity_required
    for selector in (required.node_selector_terms or ()) if required else ():
        terms.append(
            {
                "matchExpressions": [
                    {
                        "key": e.key,
                        "operator": e.operator,
                        **({"values": list(e.values)} if e.values else {}),
                    }
                    for e in selector.match_expressions or ()
                ]
            }
        )
    if spec.node_pools:
        terms = terms or [{"matchExpressions": []}]
        for term in terms:
            term["matchExpressions"].append(
                {"key": "runai/node-pool", "operator": "In", "values": list(spec.node_pools)}
            )
    if terms:
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    if spec.pod_affinity is not None and spec.pod_affinity.key:
        pod_term: dict[str, Any] = {
            "labelSelector": {"matchLabels": {WORKLOAD_LABEL: workload_id}},
            "topologyKey": spec.pod_affinity.key,
        }
        if spec.pod_affinity.type == "Required":
            affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [pod_term]}
        else:
            preferred = [{"weight": 100, "podAffinityTerm": pod_term}]
            affinity["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": preferred}
    return affinity


def _pod_security(spec: ReplicaSpec) -> dict[str, Any]:
    security = spec.security
    assert security is not None
    context: dict[str, Any] = {}
    if security.uid_gid_source == "custom":
        if security.run_as_uid is not None:
            context["runAsUser"] = security.run_as_uid
        if security.run_as_gid is not None:
            context["runAsGroup"] = security.run_as_gid
        if security.supplemental_groups:
            context["supplementalGroups"] = [
                int(g) for g in security.supplemental_groups.split(",") if g.strip()
            ]
    if security.run_as_non_root is not None:
        context["runAsNonRoot"] = security.run_as_non_root
    if security.seccomp_profile_type is not None:
        context["seccompProfile"] = {"type": security.seccomp_profile_type}
    return context


def _volumes(storage: Storage | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Kubernetes volumes and their mounts. Git and S3 sources are fetched by Run:ai's own
    sidecars, which a plain cluster lacks, so they are not rendered."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if storage is None:
        return volumes, mounts

    def add(volume: dict[str, Any], mount_path: str | None, **mount: Any) -> None:
        name = f"vol-{len(volumes)}"
        volumes.append({"name": name, **volume})
        if mount_path:
            mounts.append({"name": name, "mountPath": mount_path, **mount})

    for pvc in storage.pvc or ():
        if pvc.exclude:
            continue
        if pvc.ephemeral and pvc.claim_info is not None:
            info = pvc.claim_info
            modes = info.access_modes
            claim = {
                "accessModes": [
                    mode
                    for mode, on in (
                        ("ReadWriteOnce", modes.read_write_once if modes else True),
                        ("ReadOnlyMany", modes.read_only_many if modes else False),
                        ("ReadWriteMany", modes.read_write_many if modes else False),
                    )
                    if on
                ],
                "resources": {"requests": {"storage": info.size or "1Gi"}},
                **({"storageClassName": info.storage_class} if info.storage_class else {}),
                **({"volumeMode": info.volume_mode} if info.volume_mode else {}),
            }
            add({"ephemeral": {"volumeClaimTemplate": {"spec": claim}}}, pvc.path)
        else:
            claim_ref: dict[str, Any] = {"claimName": pvc.claim_name or pvc.name or "claim"}
            if pvc.read_only is not None:
                claim_ref["readOnly"] = pvc.read_only
            add({"persistentVolumeClaim": claim_ref}, pvc.path)
    for nfs in storage.nfs or ():
        if not nfs.exclude:
            add(
                {"nfs": {"server": nfs.server, "path": nfs.path, "readOnly": bool(nfs.read_only)}},
                nfs.mount_path,
            )
    for host in storage.host_path or ():
        if not host.exclude:
            add({"hostPath": {"path": host.path}}, host.mount_path, readOnly=bool(host.read_only))
    for config in storage.config_map_volume or ():
        if not config.exclude:
            volume: dict[str, Any] = {"name": config.config_map}
            if config.default_mode is not None:
                volume["defaultMode"] = int(config.default_mode, 8)
            extra = {"subPath": config.sub_path} if config.sub_path else {}
            add({"configMap": volume}, config.mount_path, **extra)
    for secret in storage.secret_volume or ():
        if not secret.exclude:
            volume = {"secretName": secret.secret}
            if secret.default_mode is not None:
                volume["defaultMode"] = int(secret.default_mode, 8)
            add({"secret": volume}, secret.mount_path)
    for empty in storage.empty_dir_volume or ():
        if not empty.exclude:
            empty_dir: dict[str, Any] = {}
            if empty.medium:
                empty_dir["medium"] = empty.medium
            if empty.size_limit:
                empty_dir["sizeLimit"] = empty.size_limit
            add({"emptyDir": empty_dir}, empty.path)
    return volumes, mounts
