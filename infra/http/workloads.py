"""Distributed workloads in Run:ai's shapes (docs/api/workloads.md): submit from a template, read,
delete, suspend, resume, history and events from its own stream, `/logs` (ours); one outside the
caller's scopes is a 404. Also: domain/workloads.py, services/workloads.py."""

from typing import Annotated, Final, Literal
from uuid import UUID

from litestar import Response, delete, get, post
from litestar.di import NamedDependency, Provide
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, JSONBody, QueryParameter

from domain.workloads import WorkloadNotFoundError
from infra.http import workload_queries
from infra.http.accepted import Accepted
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.lists import Count, FilterBy, Search
from infra.http.openapi_document import NOT_NEGATIVE
from infra.http.workload_actions import (
    change_from,
    read_log,
    run_folder,
    submit_from,
    visible_workload,
)
from infra.http.workload_schemas import (
    DistributedCreationRequest,
    DistributedWorkload,
    EventList,
    HistoryList,
    Workload,
    WorkloadList,
    WorkloadManifests,
)
from infra.http.workload_views import (
    distributed_of,
    events_of,
    history_of,
    workload_of,
)
from projections.queries import workload_reads as queries
from projections.workload_catalogue import WorkloadRow
from services.errors import InvalidRequestError
from services.history import workload_history

BASE: Final = "/api/v1/workloads"
DISTRIBUTED: Final = f"{BASE}/distributed"


@post(DISTRIBUTED, status_code=202, tags=["Distributed workloads"])
async def submit(
    request: Caller,
    data: JSONBody[DistributedCreationRequest],
    adapters: NamedDependency[Adapters],
) -> DistributedWorkload:
    return await submit_from(request, data, adapters)


# Every route below that names one workload gets it as `row`, or a 404 when it is unknown or
# outside the caller's scopes.
async def _visible(
    request: Caller,
    workload_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> WorkloadRow:
    return await visible_workload(request, workload_id, adapters)


ONE: Final = {"row": Provide(_visible)}


@get(f"{DISTRIBUTED}/{{workload_id:uuid}}", dependencies=ONE, tags=["Distributed workloads"])
async def get_distributed(row: NamedDependency[WorkloadRow]) -> DistributedWorkload:
    return distributed_of(row.workload, row.created_by, row.created_at, row.deleted_at)


# Commands name their workload by id and the use case finds it on the write side (a workload
# submitted a moment ago can be cancelled at once); unknown and out of sight are one 404 there.
@delete(f"{DISTRIBUTED}/{{workload_id:uuid}}", status_code=202, tags=["Distributed workloads"])
async def delete_workload(
    request: Caller,
    workload_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> Response[Accepted]:
    await change_from(request, workload_id, "delete", adapters.streams)
    return Response(Accepted(), status_code=202)


@post(
    f"{DISTRIBUTED}/{{workload_id:uuid}}/{{action:str}}",
    status_code=202,
    tags=["Distributed workloads"],
)
async def suspend_or_resume(
    request: Caller,
    workload_id: FromPath[UUID],
    action: FromPath[str],
    adapters: NamedDependency[Adapters],
) -> Response[Accepted]:
    """`.../suspend` and `.../resume`."""
    if action not in ("suspend", "resume"):
        raise NotFoundException()
    verb: Literal["suspend", "resume"] = "suspend" if action == "suspend" else "resume"
    await change_from(request, workload_id, verb, adapters.streams)
    return Response(Accepted(), status_code=202)


@get(BASE, tags=["Workloads"])
async def list_workloads(
    request: Caller,
    adapters: NamedDependency[Adapters],
    deleted: Annotated[bool, QueryParameter()] = False,
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    filter_by: FilterBy = None,
    search: Search = None,
) -> WorkloadList:
    """Newest first. `filterBy` takes Run:ai's `<field><operator><value>` items (AND), over
    the fields shown and `templateId` (infra/http/workload_queries.py); `search` finds a text
    in the name."""
    shown, more = await workload_queries.page(
        adapters.reads,
        request,
        deleted=deleted,
        filter_by=filter_by,
        search=search,
        offset=offset,
        limit=limit,
    )
    return WorkloadList(workloads=shown, next=offset + limit if more else None)


@get(f"{BASE}/count", tags=["Workloads"])
async def count_workloads(
    request: Caller,
    adapters: NamedDependency[Adapters],
    deleted: Annotated[bool, QueryParameter()] = False,
    filter_by: FilterBy = None,
    search: Search = None,
) -> Count:
    """How many workloads the list shows for the same `deleted`, `filterBy` and `search`."""
    found = await workload_queries.count(
        adapters.reads, request, deleted=deleted, filter_by=filter_by, search=search
    )
    return Count(found)


@get(f"{BASE}/{{workload_id:uuid}}", dependencies=ONE, tags=["Workloads"])
async def get_workload(
    row: NamedDependency[WorkloadRow],
    adapters: NamedDependency[Adapters],
) -> Workload:
    return workload_of(row, await queries.department_names(adapters.reads, [row]))


@get(f"{BASE}/{{workload_id:uuid}}/history", dependencies=ONE, tags=["Workloads"])
async def history(
    row: NamedDependency[WorkloadRow],
    adapters: NamedDependency[Adapters],
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
) -> HistoryList:
    """Every phase change and every event of the workload, oldest first."""
    entries = await workload_history(row.workload.id, history=adapters.streams)
    records = history_of(row, entries)
    following = offset + limit if offset + limit < len(records) else None
    return HistoryList(records=records[offset : offset + limit], next=following)


@get(f"{BASE}/{{workload_id:uuid}}/events", dependencies=ONE, tags=["Workloads"])
async def events(
    row: NamedDependency[WorkloadRow],
    adapters: NamedDependency[Adapters],
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "desc",
) -> EventList:
    entries = await workload_history(row.workload.id, history=adapters.streams)
    found = events_of(row, [entry.recorded for entry in entries])
    if sort_order == "desc":
        found.reverse()
    following = offset + limit if offset + limit < len(found) else None
    return EventList(events=found[offset : offset + limit], next=following)


@get(f"{BASE}/{{workload_id:uuid}}/manifests", dependencies=ONE, tags=["Workloads"])
async def manifests(
    row: NamedDependency[WorkloadRow],
    adapters: NamedDependency[Adapters],
) -> WorkloadManifests:
    """What the backend made of the latest submitted run: a Trainer v2 TrainingRuntime and
    TrainJob, or a Training Operator v1 job (a dry run: what it would make)."""
    made = await queries.made(adapters.reads, row.workload.id)
    if made is None:  # the row was seen a moment ago: the catalogue is being rebuilt
        raise WorkloadNotFoundError(row.workload.id)
    return WorkloadManifests(
        workload_id=row.workload.id,
        run=made.run or None,
        backend=made.backend,
        manifests=made.manifests,
    )


@get(
    f"{BASE}/{{workload_id:uuid}}/logs",
    media_type="text/plain",
    dependencies=ONE,
    tags=["Workloads"],
)
async def logs(
    row: NamedDependency[WorkloadRow],
    adapters: NamedDependency[Adapters],
    replica: Annotated[str, QueryParameter(pattern=r"^(master|chief|launcher|worker)-\d{1,9}$")],
    run: Annotated[int | None, QueryParameter(ge=1)] = None,
) -> str:
    """A local replica's output (`replica=worker-0`), of the current run unless `run` is given.
    Kubernetes workloads' logs are the cluster's: read them with kubectl."""
    text = read_log(run_folder(row, adapters, run) / f"{replica}.log")
    if text is None:
        raise InvalidRequestError("/replica", f"no output of {replica} in this run")
    return text


WORKLOAD_ROUTES: Final = (
    submit,
    get_distributed,
    delete_workload,
    suspend_or_resume,
    list_workloads,
    count_workloads,
    get_workload,
    history,
    events,
    manifests,
    logs,
)
