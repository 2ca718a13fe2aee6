"""What a caller's node pool request does, shared by the API's handlers (infra/http/node_pools.py)
and the console (which offers a template's cluster's pools): Run:ai's bodies to use cases, pools
read back as Run:ai's `Nodepool`."""

from datetime import datetime
from typing import Annotated
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.cluster_specs import NodePoolChanges, NodePoolSpec
from domain.node_pools import DEFAULT, NodePool
from domain.values import ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, seen_scopes
from infra.http.org_unit_schemas import TENANT_ID
from projections.queries import node_pool_reads as read
from services import org_units as org_unit_use_cases
from services.stamps import Stamped


class NodepoolCreateFields(NodePoolSpec, frozen=True, kw_only=True, forbid_unknown_fields=True):
    name: Annotated[str, Meta(min_length=1)]
    cluster_id: UUID


class NodepoolUpdateFields(NodePoolChanges, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Run:ai's NodepoolUpdateFields, as a PUT and a PATCH send them."""


class Nodepool(NodePoolSpec, frozen=True, kw_only=True):
    """Run:ai's Nodepool. What the service does not observe (the pool's phase, its nodes and
    their conditions) it leaves out."""

    id: str
    name: str
    cluster_id: UUID
    cluster_name: str
    tenant_id: int
    created_by: str
    created_at: datetime
    updated_by: str
    updated_at: datetime
    is_default: bool


class NodepoolList(msgspec.Struct, frozen=True):
    nodepools: list[Nodepool]


def spec_of(data: NodepoolCreateFields) -> NodePoolSpec:
    fields = {f: getattr(data, f) for f in NodePoolSpec.__struct_fields__}
    return NodePoolSpec(**fields)


def changes_of(data: NodepoolUpdateFields) -> NodePoolChanges:
    return NodePoolChanges(**{f: getattr(data, f) for f in NodePoolChanges.__struct_fields__})


def shown(row: read.Listed) -> Nodepool:
    return _wire(
        row.row.nodepool_id, row.row.name, row.row.cluster_id, row.cluster_name, row.row.spec,
        (row.row.created_by, row.row.created_at, row.row.updated_by, row.row.updated_at),
    )  # fmt: skip


async def written(done: Stamped[NodePool], adapters: Adapters) -> Nodepool:
    """A pool as a write left it, its cluster named from the cluster's own stream."""
    pool, stamps = done.state, done.stamps
    cluster = ScopeRef("cluster", str(pool.cluster_id))
    cluster_name = await org_unit_use_cases.unit_name(cluster, streams=adapters.streams)
    return _wire(
        pool.id, pool.name, pool.cluster_id, cluster_name, pool.spec,
        (stamps.created.by, stamps.created.at, stamps.updated.by, stamps.updated.at),
    )  # fmt: skip


def _wire(
    nodepool_id: UUID,
    name: str,
    cluster_id: UUID,
    cluster_name: str,
    spec: NodePoolSpec,
    stamps: tuple[str, datetime, str, datetime],
) -> Nodepool:
    created_by, created_at, updated_by, updated_at = stamps
    return Nodepool(
        **msgspec.structs.asdict(spec),
        id=str(nodepool_id),
        name=name,
        cluster_id=cluster_id,
        cluster_name=cluster_name,
        tenant_id=TENANT_ID,
        created_by=created_by,
        created_at=created_at,
        updated_by=updated_by,
        updated_at=updated_at,
        is_default=name == DEFAULT,
    )


async def pool_names(request: Caller, adapters: Adapters, cluster_id: UUID | None) -> list[str]:
    """The names of the pools of a cluster the caller sees, to offer in a form (none for a
    tenant's template, or a cluster out of sight)."""
    if cluster_id is None or ScopeRef("cluster", str(cluster_id)) not in await seen_scopes(request):
        return []
    return await read.names_in(adapters.reads, cluster_id)
