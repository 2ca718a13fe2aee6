"""A workload's pods as Run:ai's wire shows them, shared by the API's pod lists
(infra/http/workload_pods.py) and the console's workload page."""

from infra.http.adapters import Adapters
from infra.http.workload_schemas import Pod, PodContainer, PodList
from infra.http.workload_views import TENANT_ID
from projections.queries import workload_reads as queries
from projections.workload_catalogue import WorkloadRow
from projections.workload_pods import PodRow, Query


async def pods_of(
    row: WorkloadRow,
    adapters: Adapters,
    *,
    deleted: bool = False,
    offset: int = 0,
    limit: int = 50,
    search: str | None = None,
) -> PodList:
    """The pods of a workload the caller may see (`row`) in its current run: the API's page of
    them and the console's."""
    query = Query(
        project_ids=[row.workload.request.project_id],
        deleted=deleted,
        workload_id=row.workload.id,
        search=search,
    )
    return await page_of_pods(adapters, query, None, False, offset, limit, full=False)


async def page_of_pods(
    adapters: Adapters,
    query: Query,
    sort_by: str | None,
    descending: bool,
    offset: int,
    limit: int,
    *,
    full: bool,
) -> PodList:
    rows, more = await queries.pods_page(
        adapters.reads, query, sort_by=sort_by, descending=descending, offset=offset, limit=limit
    )
    return PodList(
        pods=[pod_of(row, full=full) for row in rows], next=offset + limit if more else None
    )


def pod_of(row: PodRow, *, full: bool) -> Pod:
    pod = row.pod
    return Pod(
        name=pod.name,
        priority_class_name=row.priority_class,
        id=pod.uid,
        workload_id=row.workload_id,
        cluster_id=row.cluster_id,
        project_id=row.project_id,
        node_name=pod.node_name,
        created_at=pod.created_at,
        completed_at=pod.completed_at,
        containers=[
            PodContainer(name=c.name, image=c.image, started_at=c.started_at)
            for c in pod.containers
        ],
        requested_resources=row.requested or None,
        k8s_phase=pod.phase,
        ip=pod.ip,
        tenant_id=TENANT_ID,
        k8s_phase_updated_at=pod.phase_changed_at,
        updated_at=row.updated_at,
        deleted_at=row.deleted_at,
        project_name=row.project_name if full else None,
        workload_name=row.workload_name if full else None,
    )
