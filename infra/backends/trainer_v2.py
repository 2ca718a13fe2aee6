"""A workload plan as Kubeflow Trainer v2 runs it: a TrainingRuntime per template version, shared
by its workloads, and a TrainJob with each workload's own values. Pure: plans in, manifests out.
Why this split, and how each framework maps: docs/decisions/0009-kubernetes-backend-objects.md."""

import contextlib
import hashlib
import json
from typing import Any, Final

import msgspec

from domain.template_specs import ReplicaSpec
from domain.workload_plans import ReplicaGroup, WorkloadPlan
from infra.backends.kubeflow_jobs import RUN_LABEL
from infra.backends.kubeflow_pods import WORKLOAD_LABEL
from infra.backends.pod_templates import pod_template, restart_policy
from infra.backends.scheduling import Scheduling
from services.errors import BackendRejectedError

GROUP: Final = "trainer.kubeflow.org"
API_VERSION: Final = f"{GROUP}/v1alpha1"
RUNTIMES: Final = "trainingruntimes"
TRAINJOBS: Final = "trainjobs"
FRAMEWORK_LABEL: Final = "trainer.kubeflow.org/framework"
ANCESTOR_LABEL: Final = "trainer.kubeflow.org/trainjob-ancestor-step"
JOBSET_NAME_LABEL: Final = "jobset.sigs.k8s.io/jobset-name"
TEMPLATE_LABEL: Final = "trainplate.io/template-id"
TEMPLATE_VERSION_LABEL: Final = "trainplate.io/template-version"
PATCH_MANAGER: Final = "trainplate.io/submitter"
TRAINER: Final = "node"  # the trainer container's name, which the TrainJob's values address
FRAMEWORKS: Final = {
    "PyTorch": "torch",
    "XGBoost": "xgboost",
    "JAX": "jax",
    "MPI": "mpi",
    "TF": "tensorflow",
}
TF_PORT: Final = 2222
_canonical = msgspec.json.Encoder(order="sorted").encode  # the same bytes for the same spec
_copy = msgspec.json.Decoder(dict[str, Any]).decode
TRAINER_FIELDS: Final = ("image", "command", "args", "resources")
# The pod peers of a pod affinity: the pods of the same JobSet, whose name the Trainer gives
# the TrainJob's, so a runtime shared by many workloads can say it without naming one.
PEERS: Final = {
    "labelSelector": {"matchExpressions": [{"key": JOBSET_NAME_LABEL, "operator": "Exists"}]},
    "matchLabelKeys": [JOBSET_NAME_LABEL],
}


def to_trainer_v2(
    plan: WorkloadPlan, scheduling: Scheduling | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The TrainingRuntime and the TrainJob of `plan`."""
    scheduling = scheduling or Scheduling()
    own = runtime_spec(plan, scheduling)
    shared: dict[str, Any] | None = None
    trainer: dict[str, Any] | None = None
    if plan.template is not None:  # else the workload is its template version, no more
        # The template alone may not run here while the workload's own specs can: no share.
        with contextlib.suppress(BackendRejectedError):
            shared = runtime_spec(plan.template, scheduling)
        if shared is not None:
            trainer = _trainer_values(shared, own)
    if shared is None or trainer is None:
        shared, trainer = own, {"numNodes": own["mlPolicy"]["numNodes"]}
    runtime = _runtime(plan, shared)
    return runtime, _train_job(plan, runtime, trainer, shared, scheduling)


def runtime_spec(plan: WorkloadPlan, scheduling: Scheduling) -> dict[str, Any]:
    """The spec of the TrainingRuntime that runs `plan`. BackendRejectedError when Trainer v2
    cannot express it."""
    framework = plan.framework
    workers = plan.group("Worker")
    assert workers is not None  # every plan has its workers
    policy: dict[str, Any] = {}
    jobs: list[dict[str, Any]]
    extra: dict[str, Any] = {}
    if framework in ("PyTorch", "XGBoost", "JAX"):
        nodes = _one_template(plan)
        policy = {"numNodes": nodes.replicas, FRAMEWORKS[framework]: {}}
        jobs = [_replicated_job("node", plan, nodes.spec, scheduling, trainer=True)]
    elif framework == "MPI":
        launcher = plan.group("Launcher") or ReplicaGroup(
            role="Launcher", replicas=1, spec=workers.spec
        )
        policy = {
            "numNodes": workers.replicas,
            "mpi": {
                "numProcPerNode": plan.slots_per_worker or 1,
                "mpiImplementation": "OpenMPI",
                "sshAuthMountPath": plan.ssh_auth_mount_path or "/root/.ssh",
                "runLauncherAsNode": False,
            },
        }
        after = (
            {"dependsOn": [{"name": "node", "status": "Ready"}]}
            if plan.mpi_launcher_creation_policy == "WaitForWorkersReady"
            else {}
        )
        jobs = [
            _replicated_job("node", plan, workers.spec, scheduling, trainer=False),
            {
                **_replicated_job("launcher", plan, launcher.spec, scheduling, trainer=True),
                **after,
            },
        ]
        # The launcher's mpirun is the workload: it is done when the launcher is.
        extra = {"successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]}}
    else:  # TF, as plain ML
        chief = plan.group("Chief")
        policy = {"numNodes": workers.replicas}
        jobs = [
            _tf_job("node", "worker", plan, workers.spec, scheduling, chief is not None),
        ]
        if chief is not None:
            jobs.insert(0, _tf_job("chief", "chief", plan, chief.spec, scheduling, True))
        extra = {"successPolicy": {"operator": "All", "targetReplicatedJobs": [jobs[0]["name"]]}}
    spec: dict[str, Any] = {
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        **extra,
        "replicatedJobs": jobs,
        # A failed pod fails its Job at once (backoffLimit 0), and the JobSet restarts the
        # whole gang: what the template's backoffLimit counts, as Run:ai retries a workload.
        "failurePolicy": {"maxRestarts": plan.backoff_limit or 0},
    }
    if plan.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = plan.ttl_seconds_after_finished
    runtime: dict[str, Any] = {"mlPolicy": policy, "template": {"spec": spec}}
    group_policy = scheduling.pod_group_policy()
    if group_policy is not None:
        runtime["podGroupPolicy"] = group_policy
    return runtime


def runtime_name(plan: WorkloadPlan, spec: dict[str, Any]) -> str:
    digest = hashlib.sha256(_canonical(spec)).hexdigest()[:10]
    if plan.template_id is None:
        return f"tp-spec-{digest}"
    return f"tp-{plan.template_id}-v{plan.template_version}-{digest}"


def _one_template(plan: WorkloadPlan) -> ReplicaGroup:
    """The frameworks whose policy runs every node from one pod template: a master is node 0,
    and may only be the workers' copy."""
    workers = plan.group("Worker")
    assert workers is not None
    master = next((g for g in plan.groups if g.role != "Worker"), None)
    if master is None:
        return workers
    if not _same_pod(plan, master.spec, workers.spec):
        raise BackendRejectedError(
            plan.job_name,
            f"Kubeflow Trainer v2 runs every {plan.framework} node from one pod template: a"
            " master with its own spec needs the Training Operator (kubeflow_api v1)",
        )
    return ReplicaGroup(
        role="Worker", replicas=workers.replicas + master.replicas, spec=workers.spec
    )


def _same_pod(plan: WorkloadPlan, one: ReplicaSpec, other: ReplicaSpec) -> bool:
    def pod(spec: ReplicaSpec) -> dict[str, Any]:
        return pod_template(
            plan, spec, container_name=TRAINER, labels={}, scheduler_name="", peers=PEERS
        )

    return one is other or pod(one) == pod(other)


def _replicated_job(
    name: str, plan: WorkloadPlan, spec: ReplicaSpec, scheduling: Scheduling, *, trainer: bool
) -> dict[str, Any]:
    pod = pod_template(
        plan,
        spec,
        container_name=TRAINER,
        labels={},
        scheduler_name=scheduling.scheduler,
        peers=PEERS,
    )
    pod["spec"]["restartPolicy"] = restart_policy(plan, spec)
    job: dict[str, Any] = {"spec": {"backoffLimit": 0, "template": pod}}
    if trainer:
        job["metadata"] = {"labels": {ANCESTOR_LABEL: "trainer"}}
    return {"name": name, "replicas": 1, "template": job}


def _tf_job(
    name: str,
    task: str,
    plan: WorkloadPlan,
    spec: ReplicaSpec,
    scheduling: Scheduling,
    with_chief: bool,
) -> dict[str, Any]:
    """A TF replica type as a Job of indexed pods, each told the cluster in TF_CONFIG: the
    hostnames JobSet gives its pods (`<jobset>-<job>-0-<index>.<jobset>`), and its own task."""
    job = _replicated_job(name, plan, spec, scheduling, trainer=name == "node")
    job["template"]["spec"]["completionMode"] = "Indexed"
    if name == "chief":
        job["template"]["spec"] |= {"parallelism": 1, "completions": 1}
    workers = plan.group("Worker")
    assert workers is not None

    def hosts(job_name: str, count: int) -> list[str]:
        return [f"$(JOBSET)-{job_name}-0-{i}.$(JOBSET):{TF_PORT}" for i in range(count)]

    cluster = {"worker": hosts("node", workers.replicas)}
    if with_chief:
        cluster = {"chief": hosts("chief", 1), **cluster}
    config = {"cluster": cluster, "task": {"type": task, "index": 0}}
    tf_config = json.dumps(config, separators=(",", ":")).replace('"index":0', '"index":$(INDEX)')
    env = [
        _field("JOBSET", f"metadata.labels['{JOBSET_NAME_LABEL}']"),
        _field("INDEX", "metadata.annotations['batch.kubernetes.io/job-completion-index']"),
        {"name": "TF_CONFIG", "value": tf_config},
    ]
    (container,) = job["template"]["spec"]["template"]["spec"]["containers"]
    container["env"] = env + container.get("env", [])
    return job


def _field(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _trainer_values(shared: dict[str, Any], own: dict[str, Any]) -> dict[str, Any] | None:
    """What a TrainJob must say so that `shared` runs as `own`: the node count and the trainer
    fields that differ. None when it cannot: a TrainJob sets trainer fields and merges variables
    by name, but takes no value away and reaches no other container, nor the pod."""
    base, wanted = _trainer_container(shared), _trainer_container(own)
    trainer: dict[str, Any] = {"numNodes": own["mlPolicy"]["numNodes"]}
    for field in TRAINER_FIELDS:
        if base.get(field) != wanted.get(field) and field in wanted:
            trainer[field if field != "resources" else "resourcesPerNode"] = wanted[field]
    base_env = {e["name"]: e for e in base.get("env", [])}
    changed = [e for e in wanted.get("env", []) if base_env.get(e["name"]) != e]
    if changed:
        trainer["env"] = changed
    return trainer if _applied(shared, trainer) == own else None


def _applied(runtime: dict[str, Any], trainer: dict[str, Any]) -> dict[str, Any]:
    """The runtime as the Trainer runs it under a TrainJob's `trainer` values."""
    result: dict[str, Any] = _copy(_canonical(runtime))
    result["mlPolicy"]["numNodes"] = trainer["numNodes"]
    container = _trainer_container(result)
    for field in TRAINER_FIELDS:
        given = trainer.get(field if field != "resources" else "resourcesPerNode")
        if given is not None:
            container[field] = given
    if "env" in trainer:
        merged = {e["name"]: e for e in container.get("env", [])}
        merged |= {e["name"]: e for e in trainer["env"]}
        container["env"] = list(merged.values())
    return result


def _trainer_container(runtime: dict[str, Any]) -> dict[str, Any]:
    (job,) = [
        job
        for job in runtime["template"]["spec"]["replicatedJobs"]
        if job["template"].get("metadata", {}).get("labels", {}).get(ANCESTOR_LABEL) == "trainer"
    ]
    pod = job["template"]["spec"]["template"]["spec"]
    found: dict[str, Any] = next(c for c in pod["containers"] if c["name"] == TRAINER)
    return found


def _runtime(plan: WorkloadPlan, spec: dict[str, Any]) -> dict[str, Any]:
    labels = {FRAMEWORK_LABEL: FRAMEWORKS[plan.framework]}
    if plan.template_id is not None:
        labels[TEMPLATE_LABEL] = str(plan.template_id)
        labels[TEMPLATE_VERSION_LABEL] = str(plan.template_version)
    return {
        "apiVersion": API_VERSION,
        "kind": "TrainingRuntime",
        "metadata": {
            "name": runtime_name(plan, spec),
            "namespace": plan.namespace,
            "labels": labels,
        },
        "spec": spec,
    }


def _train_job(
    plan: WorkloadPlan,
    runtime: dict[str, Any],
    trainer: dict[str, Any],
    spec: dict[str, Any],
    scheduling: Scheduling,
) -> dict[str, Any]:
    own = {WORKLOAD_LABEL: str(plan.workload_id), RUN_LABEL: str(plan.run)}
    # Not the run: a runtime patch may change only while the TrainJob is suspended and none of
    # its pods is active, so a resumed run keeps it as it is (the TrainJob carries the run).
    pod_labels = {**scheduling.pod_labels(plan.project_name), WORKLOAD_LABEL: own[WORKLOAD_LABEL]}
    patch = {
        "manager": PATCH_MANAGER,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": job["name"],
                            "template": {
                                "spec": {"template": {"metadata": {"labels": pod_labels}}}
                            },
                        }
                        for job in spec["template"]["spec"]["replicatedJobs"]
                    ]
                }
            }
        },
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "TrainJob",
        "metadata": {
            "name": plan.job_name,
            "namespace": plan.namespace,
            "labels": {**scheduling.job_labels(plan.project_name), **own},
        },
        "spec": {
            "runtimeRef": {
                "apiGroup": GROUP,
                "kind": "TrainingRuntime",
                "name": runtime["metadata"]["name"],
            },
            "trainer": trainer,
            "runtimePatches": [patch],
        },
    }
