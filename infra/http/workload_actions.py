"""What a caller's workload request does, shared by the API's handlers (infra/http/workloads.py)
and the console: a submission from Run:ai's body, a change, a visible workload and its logs."""

from pathlib import Path
from typing import Literal
from uuid import UUID

from domain.commands import ChangeWorkload, RequestWorkload
from domain.submissions import Overrides
from domain.values import ScopeRef
from domain.workloads import WorkloadNotFoundError
from infra.backends.local_runtime import default_work_dir
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, creation_id, seen_scopes
from infra.http.workload_schemas import (
    DistributedCreationRequest,
    DistributedWorkload,
)
from infra.http.workload_views import (
    distributed_of,
)
from projections.queries import workload_reads as queries
from projections.workload_catalogue import WorkloadRow
from services import org_units as org_unit_use_cases
from services import workloads as use_cases
from services.ports.event_store import EventStore


async def submit_from(
    request: Caller, data: DistributedCreationRequest, adapters: Adapters
) -> DistributedWorkload:
    """Submit a workload from Run:ai's body (the API's and the console's form alike)."""
    workload_id, keyed = creation_id(request, "workload")
    command = RequestWorkload(
        workload_id=workload_id,
        keyed=keyed,
        name=data.name,
        use_given_name_as_prefix=data.use_given_name_as_prefix,
        cluster_id=data.cluster_id,
        project_id=data.project_id,
        template_id=data.template_id,
        template_version=data.template_version,
        overrides=Overrides(
            spec=data.spec,
            master_spec_same_as_worker=data.master_spec_same_as_worker,
            master_spec=data.master_spec,
        ),
        metadata=actor(request),
    )
    requested = await use_cases.request_workload(
        command, streams=adapters.streams, names=adapters.names
    )
    created = requested.stamps.created
    return distributed_of(requested.state, created.by, created.at, None)


async def project_cluster(project_id: str, adapters: Adapters) -> UUID | None:
    """The cluster of a project (None: no such project), as its own stream says: a form that
    names the project alone submits with it (the submission checks the caller's sight)."""
    project = ScopeRef("project", project_id)
    return await org_unit_use_cases.cluster_of(project, streams=adapters.streams)


async def visible_workload(request: Caller, workload_id: UUID, adapters: Adapters) -> WorkloadRow:
    """The workload from the catalogue if the caller may see it; else WorkloadNotFoundError."""
    row = await queries.one(adapters.reads, workload_id)
    if row is None:
        raise WorkloadNotFoundError(workload_id)
    project = ScopeRef("project", row.workload.request.project_id)
    if project not in await seen_scopes(request):
        raise WorkloadNotFoundError(workload_id)  # out of sight: the same answer
    return row


Change = Literal["suspend", "resume", "delete"]


async def change_from(
    request: Caller, workload_id: UUID, action: Change, streams: EventStore
) -> None:
    """Suspend, resume or delete the workload for the caller (the API's and the console's)."""
    command = ChangeWorkload(workload_id=workload_id, action=action, metadata=actor(request))
    await use_cases.change_workload(command, streams=streams)


def run_folder(row: WorkloadRow, adapters: Adapters, run: int | None) -> Path:
    chosen = adapters.settings.submitter.work_dir
    work_dir = Path(chosen) if chosen else default_work_dir(Path(adapters.settings.data_dir))
    return work_dir / row.workload.request.job_name / f"run-{run or row.workload.run}"


def replica_logs(row: WorkloadRow, adapters: Adapters) -> dict[str, str]:
    """Every local replica's output of the current run, by replica (none on Kubernetes)."""
    found = sorted(run_folder(row, adapters, None).glob("*.log"))
    return {path.stem: read_log(path) or "" for path in found}


def read_log(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return None
