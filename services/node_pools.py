"""Node pool use cases: a cluster's admins register, change and delete its pools (names unique per
cluster); what a template names in `nodePools` is checked against them where it is written.
Also: domain/node_pools.py, projections/node_pool_catalogue.py, infra/http/node_pools.py."""

from collections.abc import Callable, Iterable, Sequence
from uuid import UUID

from domain import node_pools
from domain.commands import CreateNodePool, DeleteNodePool, UpdateNodePool
from domain.events import Event, EventMetadata
from domain.node_pools import NodePool, NodePoolNotFoundError
from domain.template_specs import ReplicaSpec
from domain.values import ScopeRef
from services import access, idempotency, stamps, uses
from services.kinds import fold_as
from services.ports.event_store import Append, EventStore, NameClaim, StreamLoader, Uses
from services.ports.name_lookups import Lookups
from services.prefetch import actor_stream, prefetch, scope_stream
from services.races import decided_again
from services.stamps import Stamped

# How a refusal of a field is raised where a pool is named (a template's).
Refusal = Callable[[str, str], Exception]


@decided_again
async def create_node_pool(cmd: CreateNodePool, *, streams: EventStore) -> Stamped[NodePool]:
    """Register the pool; return it as written. Sent again under the same idempotency key, the
    first answer, with nothing written."""
    cluster = _cluster(cmd.cluster_id)

    async def decide(remembered: bool) -> idempotency.Decision:
        loader = await prefetch(
            streams, [actor_stream(cmd.metadata), scope_stream(cluster)], remembered=remembered
        )
        await access.require_in(
            cmd.metadata, cluster, "admin", "create node pools", streams=loader, field="/clusterId"
        )
        events = node_pools.create(
            None, cmd.nodepool_id, cluster_id=cmd.cluster_id, name=cmd.name, spec=cmd.spec
        )
        return idempotency.Decision(
            events=events,
            name=_claim(cmd.cluster_id, cmd.name),
            uses=Uses(user=f"nodepool {cmd.name}", used=uses.of_scope(cluster, "/clusterId")),
            checked=loader.checked,
        )

    _, creation = await idempotency.create_decided(
        streams, cmd.nodepool_id, decide, request=cmd, keyed=cmd.keyed, metadata=cmd.metadata
    )
    state = node_pools.fold(creation.events)
    assert state is not None
    return Stamped(state=state, stamps=creation.stamps)


@decided_again
async def update_node_pool(cmd: UpdateNodePool, *, streams: EventStore) -> Stamped[NodePool]:
    """Change the pool's spec as a PUT or a PATCH asks; return it as it now is."""
    stream = await streams.load(cmd.nodepool_id)
    current = await _managed(cmd.nodepool_id, stream.events, cmd.metadata, "update", streams)
    spec = node_pools.changed(current.spec, cmd.changes, whole=cmd.whole)
    events = node_pools.update(current, cmd.nodepool_id, spec)
    if not events:
        return Stamped(state=current, stamps=stamps.loaded(stream))
    result = await streams.append(
        Append(
            cmd.nodepool_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            name=_claim(current.cluster_id, current.name),
        )
    )
    updated = node_pools.fold((*stream.events, *events))
    assert updated is not None
    return Stamped(state=updated, stamps=stamps.appended(stream, result, cmd.metadata))


@decided_again
async def delete_node_pool(cmd: DeleteNodePool, *, streams: EventStore) -> None:
    """Delete the pool, freeing its name. Templates naming it are not refused the deletion: their
    `runnable` says the pool is gone (docs/api/organization.md)."""
    stream = await streams.load(cmd.nodepool_id)
    live = await _managed(cmd.nodepool_id, stream.events, cmd.metadata, "delete", streams)
    await uses.delete_unused(
        streams,
        cmd.nodepool_id,
        stream,
        node_pools.delete(live, cmd.nodepool_id),
        metadata=cmd.metadata,
        user=f"nodepool {live.name}",
        in_use=lambda _: NodePoolNotFoundError(cmd.nodepool_id),  # nothing uses a pool
    )


async def require_visible(nodepool_id: UUID, actor: EventMetadata, streams: StreamLoader) -> None:
    """A pool of a cluster the actor may not see is missing, before a change's body is read."""
    await access.require_visible(
        nodepool_id,
        actor,
        streams=streams,
        scope_in=_scope_in,
        missing=NodePoolNotFoundError(nodepool_id),
    )


def _scope_in(events: Iterable[Event]) -> ScopeRef | None:
    found = fold_as(node_pools.fold, events)
    return None if found is None or found.deleted else _cluster(found.cluster_id)


async def _managed(
    nodepool_id: UUID,
    events: Sequence[Event],
    actor: EventMetadata,
    verb: str,
    streams: StreamLoader,
) -> NodePool:
    """The live pool, once the actor is an admin of its cluster; one it may not see (or none)
    is missing."""
    state = fold_as(node_pools.fold, events)
    current = node_pools.live(state, nodepool_id)
    cluster = _cluster(current.cluster_id)
    lineage = await access.lineage_of(cluster, streams=streams, field="/clusterId")
    unseen = NodePoolNotFoundError(nodepool_id)
    await access.require(
        actor, lineage, "admin", f"{verb} node pools", streams=streams, unseen=unseen
    )
    return current


async def check_named(
    specs: Iterable[tuple[str, ReplicaSpec | None]],
    cluster_id: UUID | None,
    *,
    names: Lookups,
    refuse: Refusal,
) -> None:
    """Every pool these specs name must be one of their cluster's, from the write side's names;
    a cluster with no pool registered (or no cluster: a tenant's) checks none."""
    named = node_pools.named_in(specs)
    if not named or cluster_id is None:
        return
    namespace = node_pools.name_namespace(cluster_id)
    if not await names.holders([namespace]):
        return
    for field, name in named:
        if await names.holder(namespace, name) is None:
            raise refuse(field, f"the cluster has no node pool {name!r}")


def _cluster(cluster_id: UUID) -> ScopeRef:
    return ScopeRef("cluster", str(cluster_id))


def _claim(cluster_id: UUID, name: str) -> NameClaim:
    return NameClaim(namespace=node_pools.name_namespace(cluster_id), name=name)
