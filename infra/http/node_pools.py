"""Node pools in Run:ai's shapes (`/api/v1/node-pools`, docs/api/organization.md): a cluster's
admins register, change and delete them; whoever sees the cluster lists them. Also:
domain/node_pools.py, services/node_pools.py, projections/node_pool_catalogue.py."""

from typing import Annotated, Final, Literal
from uuid import UUID

from litestar import delete, get, patch, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter

from domain.commands import CreateNodePool, DeleteNodePool, UpdateNodePool
from domain.node_pools import NodePoolNotFoundError
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, creation_id, guarded, seen_scopes
from infra.http.lists import Count, FilterBy, conditions_of
from infra.http.node_pool_actions import (
    Nodepool,
    NodepoolCreateFields,
    NodepoolList,
    NodepoolUpdateFields,
    changes_of,
    shown,
    spec_of,
    written,
)
from infra.http.openapi_document import NOT_NEGATIVE
from projections.queries import node_pool_reads as read
from services import node_pools as use_cases

PATH: Final = "/api/v1/node-pools"
ONE: Final = f"{PATH}/{{nodepool_id:uuid}}"
TAGS: Final = ["NodePools"]

# A change to a pool of a cluster the caller may not see is a 404 before its body is read.
_MANAGED: Final = guarded(use_cases.require_visible, param="nodepool_id")


@post(PATH, status_code=201, tags=TAGS, operation_id="create_nodepool")
async def create(
    request: Caller, data: JSONBody[NodepoolCreateFields], adapters: NamedDependency[Adapters]
) -> Nodepool:
    nodepool_id, keyed = creation_id(request, "nodepool")
    command = CreateNodePool(
        nodepool_id=nodepool_id,
        keyed=keyed,
        cluster_id=data.cluster_id,
        name=data.name,
        spec=spec_of(data),
        metadata=actor(request),
    )
    async with adapters.streams.session() as session:
        created = await use_cases.create_node_pool(command, streams=session)
    return await written(created, adapters)


@get(PATH, tags=TAGS, operation_id="get_nodepools")
async def list_all(
    request: Caller,
    adapters: NamedDependency[Adapters],
    filter_by: FilterBy = None,
    sort_by: Annotated[read.Field | None, QueryParameter(name="sortBy")] = None,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
) -> NodepoolList:
    listed = await read.page(
        adapters.reads,
        await seen_scopes(request),
        conditions_of(read.GRAMMAR, filter_by),
        sort_by=sort_by,
        descending=sort_order == "desc",
        offset=offset,
        limit=limit,
    )
    return NodepoolList([shown(one) for one in listed])


@get(f"{PATH}/count", tags=TAGS, operation_id="count_nodepools")
async def count(
    request: Caller, adapters: NamedDependency[Adapters], filter_by: FilterBy = None
) -> Count:
    conditions = conditions_of(read.GRAMMAR, filter_by)
    return Count(await read.count(adapters.reads, await seen_scopes(request), conditions))


@get(ONE, tags=TAGS, operation_id="get_nodepool")
async def get_one(
    request: Caller, nodepool_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Nodepool:
    found = await read.one(adapters.reads, nodepool_id)
    if found is None or not read.visible(found.row, await seen_scopes(request)):
        raise NodePoolNotFoundError(nodepool_id)  # unknown or out of sight: one answer
    return shown(found)


@put(ONE, tags=TAGS, operation_id="update_nodepool", guards=[_MANAGED])
async def replace(
    request: Caller,
    nodepool_id: FromPath[UUID],
    data: JSONBody[NodepoolUpdateFields],
    adapters: NamedDependency[Adapters],
) -> Nodepool:
    """The pool's spec as sent; what is not sent is unset, but its label stays."""
    return await _update(request, nodepool_id, data, adapters, whole=True)


@patch(ONE, tags=TAGS, operation_id="patch_nodepool", guards=[_MANAGED])
async def change(
    request: Caller,
    nodepool_id: FromPath[UUID],
    data: JSONBody[NodepoolUpdateFields],
    adapters: NamedDependency[Adapters],
) -> Nodepool:
    """The fields sent (and not null) replace the pool's; the others stay."""
    return await _update(request, nodepool_id, data, adapters, whole=False)


async def _update(
    request: Caller,
    nodepool_id: UUID,
    data: NodepoolUpdateFields,
    adapters: Adapters,
    *,
    whole: bool,
) -> Nodepool:
    command = UpdateNodePool(
        nodepool_id=nodepool_id, changes=changes_of(data), whole=whole, metadata=actor(request)
    )
    async with adapters.streams.session() as session:
        updated = await use_cases.update_node_pool(command, streams=session)
    return await written(updated, adapters)


@delete(ONE, status_code=204, tags=TAGS, operation_id="delete_nodepool", guards=[_MANAGED])
async def remove(
    request: Caller, nodepool_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> None:
    command = DeleteNodePool(nodepool_id=nodepool_id, metadata=actor(request))
    async with adapters.streams.session() as session:
        await use_cases.delete_node_pool(command, streams=session)


NODE_POOL_ROUTES: Final = (create, list_all, count, get_one, replace, change, remove)
