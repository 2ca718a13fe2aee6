"""The Trainer v2 rendering: for every framework, master mode, queue flavour and gang policy,
the TrainingRuntime and the TrainJob validate against the upstream CRDs with unknown fields as
errors, and keep the Trainer's admission rules (kubeflow/trainer v2.3 `pkg/webhooks` and the
plugins' Validate) that no schema expresses. A template version is one runtime that its
workloads share; what is the workload's own reaches the TrainJob, or a runtime of its own."""

import re
from typing import Any
from uuid import UUID

import msgspec
import pytest

from domain.events import DataVolumeClaim, TemplateSpecs, WorkloadRequested
from domain.workload_plans import plan_for
from infra.backends.kubeflow_jobs import to_kubeflow_job
from infra.backends.scheduling import Scheduling
from infra.backends.trainer_v2 import (
    ANCESTOR_LABEL,
    FRAMEWORK_LABEL,
    PATCH_MANAGER,
    TEMPLATE_LABEL,
    to_trainer_v2,
)
from infra.serialization import DOMAIN_CODEC
from services.errors import BackendRejectedError
from tests.crd_schemas import errors_of, require_crds
from tests.workload_samples import WORKLOAD, requested

require_crds()
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS_1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
TEMPLATE = UUID("6c1f0e4a-2b7d-4c3e-9f1a-0d2e3b4c5a69")
# What the Trainer's plugins reserve for themselves (pkg/constants: TorchRunReservedEnvNames,
# XGBoostReservedEnvNames, MPIReservedEnvNames).
RESERVED_ENV = {
    "PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT",
    "DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER",
    "OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args", "OMPI_MCA_orte_keep_fqdn_hostnames",
    "OMPI_MCA_orte_set_default_slots",
}  # fmt: skip
# What Trainer v2 can run: the torch and xgboost policies run every node from one pod template,
# so their masters may only be the workers' copy; JAX runs workers only (as with v1).
CASES = [
    (framework, mode)
    for framework in ("PyTorch", "TF", "XGBoost", "JAX", "MPI")
    for mode in ("same", "separate", "workers-only")
    if not (framework in ("MPI", "XGBoost") and mode == "workers-only")
    and not (framework in ("JAX", "PyTorch", "XGBoost") and mode == "separate")
]
FLAVOURS = [
    Scheduling(queues=queues, gang=gang)
    for queues in ("runai", "kai", "kueue")
    for gang in ("none", "coscheduling", "volcano")
]


def of_template(workload: WorkloadRequested, template: WorkloadRequested) -> WorkloadRequested:
    """`workload`, asked of version 3 of a template whose own specs are `template`'s."""
    own = template.snapshot
    specs = TemplateSpecs(
        spec=own.spec, master_spec_same_as_worker=own.master_spec_same_as_worker, master=own.master
    )
    snapshot = msgspec.structs.replace(
        workload.snapshot,
        template_id=TEMPLATE,
        template_version=3,
        template_specs=None if specs.spec == workload.snapshot.spec else specs,
    )
    return msgspec.structs.replace(workload, snapshot=snapshot)


@pytest.mark.parametrize("scheduling", FLAVOURS, ids=lambda s: f"{s.queues}-{s.gang}")
@pytest.mark.parametrize(("framework", "mode"), CASES)
def test_both_objects_validate_against_the_crds_and_the_webhook_rules(
    framework: str, mode: str, scheduling: Scheduling
) -> None:
    runtime, job = to_trainer_v2(plan_for(requested(framework, mode)), scheduling)
    assert not errors_of(runtime)
    assert not errors_of(job)
    check_webhook_rules(runtime, job)


def check_webhook_rules(runtime: dict[str, Any], job: dict[str, Any]) -> None:
    """The Trainer's admission rules that the schemas cannot see."""
    name = job["metadata"]["name"]
    # JobSet names each pod <jobset>-<job>-<index>-<pod>: a DNS-1035 label of at most 63.
    assert DNS_1035.match(name)
    assert len(name) <= 63
    assert DNS_1123_SUBDOMAIN.match(runtime["metadata"]["name"])
    assert len(runtime["metadata"]["name"]) <= 253
    assert runtime["metadata"]["labels"][FRAMEWORK_LABEL]  # the SDK needs it on every runtime
    assert job["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "TrainingRuntime",
        "name": runtime["metadata"]["name"],
    }
    assert job["metadata"]["namespace"] == runtime["metadata"]["namespace"]
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    containers = {
        j["name"]: {c["name"] for c in j["template"]["spec"]["template"]["spec"]["containers"]}
        for j in jobs
    }
    trainers = [j for j in jobs if j["template"].get("metadata", {}).get("labels", {})]
    assert len(trainers) == 1  # one trainer step, which the TrainJob's values address
    for trained in trainers:
        # trainingruntime_webhook: an ancestor's job has one replica and the `node` container.
        assert trained["template"]["metadata"]["labels"][ANCESTOR_LABEL] == "trainer"
        assert trained["replicas"] == 1
        assert "node" in containers[trained["name"]]
    assert len({j["name"] for j in jobs}) == len(jobs)
    for depends in (d for j in jobs for d in j.get("dependsOn", ())):
        assert depends["name"] in containers
    # jobset plugin: each runtime patch is a domain-prefixed manager's, reaches only jobs and
    # containers the runtime has, and sets no environment of a `node` container.
    managers = [p["manager"] for p in job["spec"]["runtimePatches"]]
    assert len(set(managers)) == len(managers)
    for patch in job["spec"]["runtimePatches"]:
        assert re.match(r"^[a-z0-9.-]+/[a-z0-9.-]+$", patch["manager"])
        for rjob in patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]:
            assert rjob["name"] in containers
            pod = rjob["template"]["spec"]["template"].get("spec", {})
            for container in pod.get("containers", ()):
                assert container["name"] in containers[rjob["name"]]
                assert not (container["name"] == "node" and container.get("env"))
    # torch, xgboost and mpi plugins: no reserved environment variable from the TrainJob.
    trainer = job["spec"]["trainer"]
    assert not {e["name"] for e in trainer.get("env", ())} & RESERVED_ENV
    assert trainer["numNodes"] >= 1
    policy = runtime["spec"]["mlPolicy"]
    assert sum(key in policy for key in ("torch", "mpi", "jax", "xgboost", "flux")) <= 1
    if "mpi" in policy:  # runLauncherAsNode needs both a launcher and a node job
        assert set(containers) == {"launcher", "node"}


def test_the_workloads_of_one_template_version_share_its_runtime() -> None:
    template = requested("PyTorch", "same")
    first = of_template(template, template)
    second = of_template(requested("PyTorch", "same", numWorkers=7), template)
    second = msgspec.structs.replace(second, workload_id=UUID(int=9), job_name="other-00000009")
    runtime_1, job_1 = to_trainer_v2(plan_for(first))
    runtime_2, job_2 = to_trainer_v2(plan_for(second))
    assert runtime_1 == runtime_2  # one object, made once, by whichever comes first
    name = runtime_1["metadata"]["name"]
    assert name.startswith(f"tp-{TEMPLATE}-v3-")
    assert runtime_1["metadata"]["labels"][TEMPLATE_LABEL] == str(TEMPLATE)
    # The master is the workers' copy: node 0 plays it, one more node.
    assert runtime_1["spec"]["mlPolicy"]["numNodes"] == 4
    assert job_1["spec"]["trainer"] == {"numNodes": 4}
    assert job_2["spec"]["trainer"] == {"numNodes": 8}
    assert job_2["metadata"]["name"] == "other-00000009"


def test_the_trainer_fields_a_submission_overrides_ride_on_the_train_job() -> None:
    template = requested("PyTorch", "same")
    spec = msgspec.to_builtins(template.snapshot.spec)
    changed = requested(
        "PyTorch",
        "same",
        image="registry.example.com/train:2.0",
        command="python -m train --fast",
        environmentVariables=[*spec["environmentVariables"], {"name": "LR", "value": "0.3"}],
        compute={**spec["compute"], "cpuCoreRequest": 4},
    )
    shared, _ = to_trainer_v2(plan_for(of_template(template, template)))
    runtime, job = to_trainer_v2(plan_for(of_template(changed, template)))
    assert runtime == shared
    trainer = job["spec"]["trainer"]
    assert trainer["image"] == "registry.example.com/train:2.0"
    assert trainer["command"] == ["python", "-m", "train", "--fast"]
    assert trainer["env"] == [{"name": "LR", "value": "0.3"}]
    assert trainer["resourcesPerNode"]["requests"]["cpu"] == "4000m"
    assert "args" not in trainer  # unchanged: the runtime's
    assert not errors_of(job)


def test_an_override_no_train_job_can_carry_gets_a_runtime_of_its_own() -> None:
    template = requested("PyTorch", "same")
    tolerations = [{"name": "spot", "operator": "Exists", "key": "spot", "effect": "NoSchedule"}]
    changed = requested("PyTorch", "same", tolerations=tolerations)
    shared, _ = to_trainer_v2(plan_for(of_template(template, template)))
    runtime, job = to_trainer_v2(plan_for(of_template(changed, template)))
    assert runtime["metadata"]["name"] != shared["metadata"]["name"]
    assert runtime["metadata"]["name"].startswith(f"tp-{TEMPLATE}-v3-")
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert pod["template"]["spec"]["tolerations"] == [
        {"operator": "Exists", "key": "spot", "effect": "NoSchedule"}
    ]
    assert job["spec"]["runtimeRef"]["name"] == runtime["metadata"]["name"]
    assert job["spec"]["trainer"] == {"numNodes": 4}


def test_a_dropped_environment_variable_cannot_be_a_train_job_value() -> None:
    template = requested("JAX", "workers-only")
    fewer = requested("JAX", "workers-only", environmentVariables=[{"name": "MODE", "value": "x"}])
    shared, _ = to_trainer_v2(plan_for(of_template(template, template)))
    runtime, _ = to_trainer_v2(plan_for(of_template(fewer, template)))
    assert runtime["metadata"]["name"] != shared["metadata"]["name"]


def test_a_separate_pytorch_master_needs_the_training_operator() -> None:
    with pytest.raises(BackendRejectedError) as caught:
        to_trainer_v2(plan_for(requested("PyTorch", "separate")))
    assert "kubeflow_api v1" in caught.value.reason


def test_elastic_bounds_run_as_the_fixed_number_of_workers() -> None:
    """Trainer v2.2 removed the elastic policy: minReplicas/maxReplicas do not change the
    number of nodes a workload runs."""
    elastic = requested("PyTorch", "workers-only", minReplicas=1, maxReplicas=8)
    runtime, job = to_trainer_v2(plan_for(elastic))
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 3, "torch": {}}
    assert job["spec"]["trainer"]["numNodes"] == 3


def test_mpi_runs_a_launcher_beside_its_workers_under_the_mpi_policy() -> None:
    plan = plan_for(requested("MPI", "separate", mpiLauncherCreationPolicy="WaitForWorkersReady"))
    runtime, job = to_trainer_v2(plan)
    spec = runtime["spec"]
    assert spec["mlPolicy"] == {
        "numNodes": 3,
        "mpi": {
            "numProcPerNode": 2,
            "mpiImplementation": "OpenMPI",
            "sshAuthMountPath": "/home/mpi/.ssh",
            "runLauncherAsNode": False,
        },
    }
    node, launcher = spec["template"]["spec"]["replicatedJobs"]
    assert (node["name"], launcher["name"]) == ("node", "launcher")
    assert launcher["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert launcher["template"]["metadata"]["labels"] == {ANCESTOR_LABEL: "trainer"}
    (container,) = launcher["template"]["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["sleep", "10"]  # the separate launcher's own
    assert spec["template"]["spec"]["successPolicy"] == {
        "operator": "All",
        "targetReplicatedJobs": ["launcher"],
    }
    assert job["spec"]["trainer"] == {"numNodes": 3}


def test_tensorflow_runs_as_plain_ml_with_its_cluster_in_tf_config() -> None:
    runtime, _ = to_trainer_v2(plan_for(requested("TF", "separate")))
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 3}  # no TensorFlow policy in v2
    chief, node = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert (chief["name"], node["name"]) == ("chief", "node")

    def env(job: dict[str, Any]) -> dict[str, Any]:
        (container,) = job["template"]["spec"]["template"]["spec"]["containers"]
        return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}

    worker_env = env(node)
    assert worker_env["JOBSET"] == {
        "fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/jobset-name']"}
    }
    assert worker_env["TF_CONFIG"] == (
        '{"cluster":{"chief":["$(JOBSET)-chief-0-0.$(JOBSET):2222"],'
        '"worker":["$(JOBSET)-node-0-0.$(JOBSET):2222","$(JOBSET)-node-0-1.$(JOBSET):2222",'
        '"$(JOBSET)-node-0-2.$(JOBSET):2222"]},"task":{"type":"worker","index":$(INDEX)}}'
    )
    assert '"task":{"type":"chief","index":$(INDEX)}' in env(chief)["TF_CONFIG"]
    assert node["template"]["spec"]["completionMode"] == "Indexed"
    assert runtime["spec"]["template"]["spec"]["successPolicy"]["targetReplicatedJobs"] == ["chief"]


def test_each_queue_flavour_labels_the_job_its_scheduler_reads() -> None:
    plan = plan_for(requested("JAX", "workers-only"))
    for scheduling, label, scheduler in (
        (Scheduling(), "runai/queue", "runai-scheduler"),
        (Scheduling(queues="kai"), "kai.scheduler/queue", "kai-scheduler"),
        (Scheduling(queues="kueue"), "kueue.x-k8s.io/queue-name", None),
    ):
        runtime, job = to_trainer_v2(plan, scheduling)
        assert job["metadata"]["labels"][label] == "team"
        pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
        assert pod["template"]["spec"].get("schedulerName") == scheduler
        (patch,) = job["spec"]["runtimePatches"]
        assert patch["manager"] == PATCH_MANAGER
        (rjob,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
        pod_labels = rjob["template"]["spec"]["template"]["metadata"]["labels"]
        assert pod_labels["trainplate.io/workload-id"] == str(WORKLOAD)
        assert (label in pod_labels) == (scheduling.queues != "kueue")
        assert pod["template"]["metadata"]["labels"]["kai.scheduler/preemptibility"] == (
            "non-preemptible"
        )
        assert pod["template"]["spec"]["priorityClassName"] == "high"


def test_the_gang_policy_is_the_runtimes_and_part_of_its_name() -> None:
    plan = plan_for(requested("JAX", "workers-only"))
    plain, _ = to_trainer_v2(plan)
    gang, _ = to_trainer_v2(plan, Scheduling(gang="coscheduling"))
    volcano, _ = to_trainer_v2(plan, Scheduling(gang="volcano"))
    assert "podGroupPolicy" not in plain["spec"]
    assert gang["spec"]["podGroupPolicy"] == {"coscheduling": {"scheduleTimeoutSeconds": 60}}
    assert volcano["spec"]["podGroupPolicy"] == {"volcano": {}}
    names = {r["metadata"]["name"] for r in (plain, gang, volcano)}
    assert len(names) == 3  # a changed setting never meets an older object of the same name


def test_pod_affinity_names_the_peers_by_their_jobset() -> None:
    runtime, _ = to_trainer_v2(plan_for(requested("JAX", "workers-only")))
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    (term,) = pod["template"]["spec"]["affinity"]["podAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["podAffinityTerm"]["matchLabelKeys"] == ["jobset.sigs.k8s.io/jobset-name"]


def test_retries_restart_the_gang_and_finished_jobs_expire() -> None:
    runtime, _ = to_trainer_v2(plan_for(requested("XGBoost", "same")))
    spec = runtime["spec"]["template"]["spec"]
    assert spec["failurePolicy"] == {"maxRestarts": 3}
    assert spec["ttlSecondsAfterFinished"] == 600
    (node,) = spec["replicatedJobs"]
    assert node["template"]["spec"]["backoffLimit"] == 0


def test_the_stored_request_alone_renders_the_same_objects_again() -> None:
    template = requested("MPI", "same")
    event = of_template(requested("MPI", "same", numWorkers=5), template)
    stored = DOMAIN_CODEC.decode(DOMAIN_CODEC.encode(event).data)
    assert isinstance(stored, WorkloadRequested)
    assert to_trainer_v2(plan_for(stored)) == to_trainer_v2(plan_for(event))


def test_a_typo_fails_the_strict_schemas() -> None:
    runtime, job = to_trainer_v2(plan_for(requested("JAX", "workers-only")))
    runtime["spec"]["mlPolicy"]["numNode"] = 2
    job["spec"]["trainer"]["nodes"] = 2
    assert any("numNode" in e for e in errors_of(runtime))
    assert any("nodes" in e for e in errors_of(job))


def with_claim(event: WorkloadRequested, namespace: str) -> WorkloadRequested:
    claim = DataVolumeClaim(data_volume_id=TEMPLATE, namespace=namespace, claim_name="datasets")
    snapshot = msgspec.structs.replace(event.snapshot, data_volume_claims=(claim,))
    return msgspec.structs.replace(event, snapshot=snapshot)


def test_a_data_volume_of_the_project_mounts_its_origin_pvc() -> None:
    mounted = {"dataVolume": [{"id": str(TEMPLATE), "mountPath": "/data"}]}
    plan = plan_for(with_claim(requested("JAX", "workers-only", storage=mounted), "runai-team"))
    runtime, job = to_trainer_v2(plan)
    assert not errors_of(runtime)
    assert not errors_of(job)
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    spec = pod["template"]["spec"]
    assert {"name": "dv-0", "persistentVolumeClaim": {"claimName": "datasets"}} in spec["volumes"]
    (container,) = spec["containers"]
    assert {"name": "dv-0", "mountPath": "/data"} in container["volumeMounts"]
    v1 = to_kubeflow_job(plan)
    assert not errors_of(v1)


def test_a_data_volume_of_another_namespace_mounts_its_copy_read_only() -> None:
    mounted = {"dataVolume": [{"id": str(TEMPLATE), "mountPath": "/data"}]}
    plan = plan_for(with_claim(requested("JAX", "workers-only", storage=mounted), "runai-other"))
    runtime, _ = to_trainer_v2(plan)
    assert not errors_of(runtime)
    spec = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    spec = spec["template"]["spec"]
    claim = {"claimName": f"dv-{TEMPLATE}", "readOnly": True}
    assert {"name": "dv-0", "persistentVolumeClaim": claim} in spec["volumes"]
    (container,) = spec["containers"]
    assert {"name": "dv-0", "mountPath": "/data", "readOnly": True} in container["volumeMounts"]
    v1 = to_kubeflow_job(plan)
    assert not errors_of(v1)


def test_a_data_volume_the_snapshot_does_not_place_is_refused_rather_than_left_unmounted() -> None:
    mounted = {"dataVolume": [{"id": str(TEMPLATE), "mountPath": "/data"}]}
    plan = plan_for(requested("JAX", "workers-only", storage=mounted))
    for render in (to_trainer_v2, to_kubeflow_job):
        with pytest.raises(BackendRejectedError) as caught:
            render(plan)
        assert "storage.dataVolume" in caught.value.reason
