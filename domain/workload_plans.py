"""What a backend must start for one run of a workload: the replica groups of its framework, each
with its resolved container spec, and the run policy. Pure, from the recorded snapshot alone, so
every backend and redelivery starts exactly the same (docs/decisions/0016-domain-shapes.md)."""

from typing import Final, Literal
from uuid import UUID

import msgspec

from domain.events import DataVolumeClaim, WorkloadRequested
from domain.specs import DistFramework
from domain.template_specs import DistributedTemplateSpec, MasterTemplateSpec, ReplicaSpec
from domain.workloads import InvalidWorkloadError

Role = Literal["Master", "Chief", "Launcher", "Worker"]
MASTER_ROLE: Final[dict[str, Role]] = {
    "PyTorch": "Master",
    "XGBoost": "Master",
    "TF": "Chief",
    "MPI": "Launcher",
}


class ReplicaGroup(msgspec.Struct, frozen=True, kw_only=True):
    role: Role
    replicas: int
    spec: ReplicaSpec


class WorkloadPlan(msgspec.Struct, frozen=True, kw_only=True):
    workload_id: UUID
    run: int
    name: str
    job_name: str
    namespace: str
    template_id: UUID | None = None
    template_version: int | None = None
    project_name: str
    framework: DistFramework
    groups: tuple[ReplicaGroup, ...]
    clean_pod_policy: str | None = None
    backoff_limit: int | None = None
    ttl_seconds_after_finished: int | None = None
    termination_grace_period_seconds: int | None = None
    preemptible: bool = True
    priority_class: str | None = None
    slots_per_worker: int | None = None
    ssh_auth_mount_path: str | None = None
    mpi_launcher_creation_policy: str | None = None
    image_pull_secrets: tuple[str, ...] = ()
    data_volume_claims: tuple[DataVolumeClaim, ...] = ()
    # The template version's own plan, without the submission's overrides, when they differ:
    # what a backend keeping one object per template version renders.
    template: "WorkloadPlan | None" = None

    @property
    def total_replicas(self) -> int:
        return sum(group.replicas for group in self.groups)

    def group(self, role: Role) -> ReplicaGroup | None:
        return next((g for g in self.groups if g.role == role), None)


def plan_for(requested: WorkloadRequested, run: int = 1) -> WorkloadPlan:
    snapshot = requested.snapshot
    plan = _plan(
        requested, run, snapshot.spec, snapshot.master_spec_same_as_worker, snapshot.master
    )
    specs = snapshot.template_specs
    if specs is None:
        return plan
    try:
        template = _plan(requested, run, specs.spec, specs.master_spec_same_as_worker, specs.master)
    except InvalidWorkloadError:  # the template alone cannot run: the workload is all there is
        return plan
    return msgspec.structs.replace(plan, template=template)


def _plan(
    requested: WorkloadRequested,
    run: int,
    spec: DistributedTemplateSpec,
    same_as_worker: bool,
    master: MasterTemplateSpec | None,
) -> WorkloadPlan:
    snapshot = requested.snapshot
    framework = spec.distributed_framework
    if framework is None:
        raise InvalidWorkloadError("/spec/distributedFramework", "the framework is not set")
    workers = spec.num_workers or 1
    groups = _groups(framework, spec, workers, same_as_worker, master)
    return WorkloadPlan(
        workload_id=requested.workload_id,
        run=run,
        name=requested.name,
        job_name=requested.job_name,
        namespace=requested.namespace,
        template_id=snapshot.template_id,
        template_version=snapshot.template_version,
        project_name=requested.project_name,
        framework=framework,
        groups=groups,
        clean_pod_policy=spec.clean_pod_policy,
        backoff_limit=spec.backoff_limit,
        ttl_seconds_after_finished=spec.auto_deletion_time_after_completion_seconds,
        termination_grace_period_seconds=spec.termination_grace_period_seconds,
        preemptible=spec.preemptibility != "non-preemptible",
        priority_class=spec.priority_class,
        slots_per_worker=spec.slots_per_worker if framework == "MPI" else None,
        ssh_auth_mount_path=spec.ssh_auth_mount_path if framework == "MPI" else None,
        mpi_launcher_creation_policy=(
            spec.mpi_launcher_creation_policy if framework == "MPI" else None
        ),
        image_pull_secrets=snapshot.image_pull_secrets,
        data_volume_claims=snapshot.data_volume_claims,
    )


def _groups(
    framework: DistFramework,
    spec: DistributedTemplateSpec,
    workers: int,
    same_as_worker: bool,
    master: MasterTemplateSpec | None,
) -> tuple[ReplicaGroup, ...]:
    worker = ReplicaGroup(role="Worker", replicas=workers, spec=spec)
    if framework == "JAX":
        if master is None:
            return (worker,)
        if not same_as_worker:
            raise InvalidWorkloadError(
                "/masterSpecSameAsWorker", "JAX runs workers only: a separate master cannot run"
            )
        return (ReplicaGroup(role="Worker", replicas=workers + 1, spec=spec),)
    if master is None and not same_as_worker:
        return (worker,)
    # The master's own spec, or (same as worker) the worker's container fields.
    master_spec: ReplicaSpec = spec if same_as_worker or master is None else master
    return (ReplicaGroup(role=MASTER_ROLE[framework], replicas=1, spec=master_spec), worker)
