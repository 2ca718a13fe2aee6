"""A requested workload as the tests need one: a spec (Run:ai's wire shape), a name, a master."""

from typing import Any
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
