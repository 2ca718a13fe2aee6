"""Node pools: a cluster's nodes by label, which templates name in `nodePools`; a stream each,
named uniquely in its cluster (docs/api/organization.md). Also: services/node_pools.py,
projections/node_pool_catalogue.py, infra/http/node_pools.py."""

from collections.abc import Collection, Iterable
from typing import Final, assert_never
from uuid import UUID

import msgspec

from domain import name_rules
from domain.cluster_specs import NodePoolChanges, NodePoolSpec
from domain.errors import DomainError, InvalidHistoryError
from domain.events import Event, NodePoolCreated, NodePoolDeleted, NodePoolEvent, NodePoolUpdated
from domain.template_specs import ReplicaSpec

KIND: Final = "nodepool"
# Run:ai's name for the pool of a cluster's nodes that no other pool holds.
DEFAULT: Final = "default"
# A node pool's name is the value of the label a workload's pods are placed by (runai/node-pool).
NAME: Final = name_rules.NameRule(
    63,
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    "lowercase letters, digits and '-', starting and ending with a letter or digit",
)


class NodePool(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    cluster_id: UUID
    name: str
    spec: NodePoolSpec
    deleted: bool = False

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT


class NodePoolNotFoundError(DomainError):
    slug = "nodepool-not-found"

    def __init__(self, nodepool_id: UUID | str) -> None:
        super().__init__(f"node pool {nodepool_id} does not exist")
        self.nodepool_id = str(nodepool_id)


class InvalidNodePoolError(DomainError):
    slug = "invalid-nodepool"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


def name_namespace(cluster_id: UUID) -> str:
    """Where a pool's name must be unique: its cluster. The write side asks it which pools a
    cluster has (services/node_pools.py)."""
    return f"nodepool@cluster:{cluster_id}"


def evolve(state: NodePool | None, event: NodePoolEvent) -> NodePool:
    match event:
        case NodePoolCreated():
            return NodePool(
                id=event.nodepool_id, cluster_id=event.cluster_id, name=event.name, spec=event.spec
            )
        case NodePoolUpdated():
            return msgspec.structs.replace(_existing(state, event), spec=event.spec)
        case NodePoolDeleted():
            return msgspec.structs.replace(_existing(state, event), deleted=True)
        case _:
            assert_never(event)


def _existing(state: NodePool | None, event: Event) -> NodePool:
    if state is None:
        raise InvalidHistoryError(f"{type(event).__name__} before the node pool was created")
    return state


def fold(events: Iterable[Event]) -> NodePool | None:
    state: NodePool | None = None
    for event in events:
        if not isinstance(event, NodePoolCreated | NodePoolUpdated | NodePoolDeleted):
            raise InvalidHistoryError(f"{type(event).__name__} in a node pool stream")
        state = evolve(state, event)
    return state


def live(state: NodePool | None, nodepool_id: UUID) -> NodePool:
    if state is None or state.deleted:
        raise NodePoolNotFoundError(nodepool_id)
    return state


def create(
    state: NodePool | None, nodepool_id: UUID, *, cluster_id: UUID, name: str, spec: NodePoolSpec
) -> list[NodePoolEvent]:
    if state is not None:
        raise InvalidNodePoolError("/name", "a node pool of this id exists already")
    name_rules.check(name, "/name", NAME, refused=InvalidNodePoolError)
    return [NodePoolCreated(nodepool_id=nodepool_id, cluster_id=cluster_id, name=name, spec=spec)]


def update(state: NodePool | None, nodepool_id: UUID, spec: NodePoolSpec) -> list[NodePoolEvent]:
    """The pool's spec replaced; an unchanged pool writes nothing."""
    current = live(state, nodepool_id)
    return [] if current.spec == spec else [NodePoolUpdated(nodepool_id=nodepool_id, spec=spec)]


def changed(current: NodePoolSpec, changes: NodePoolChanges, *, whole: bool) -> NodePoolSpec:
    """The spec after a PATCH (`whole` False: what is not given stays) or a PUT (`whole`: what is
    not given is unset, but the nodes' label, which a pool cannot lack, stays)."""
    given = {k: v for k, v in msgspec.structs.asdict(changes).items() if v is not None}
    if whole:
        return NodePoolSpec(**{"label_key": current.label_key, "label_value": current.label_value,
                               **given})  # fmt: skip
    return msgspec.structs.replace(current, **given)


def delete(state: NodePool | None, nodepool_id: UUID) -> list[NodePoolEvent]:
    """Deleting a deleted pool is a no-op. Templates naming it stay, reported not runnable."""
    if state is not None and state.deleted:
        return []
    live(state, nodepool_id)
    return [NodePoolDeleted(nodepool_id=nodepool_id)]


def named_in(specs: Iterable[tuple[str, ReplicaSpec | None]]) -> list[tuple[str, str]]:
    """The node pools these specs (each with where it sits) name, each with its field."""
    return [
        (f"{at}/nodePools/{i}", name)
        for at, spec in specs
        if spec is not None
        for i, name in enumerate(spec.node_pools or ())
    ]


def missing(specs: Iterable[tuple[str, ReplicaSpec | None]], pools: Collection[str]) -> list[str]:
    """Why specs naming pools outside `pools` (a cluster's, when it has any) cannot run: one
    reason a pool, as a template's `runnable` says it."""
    if not pools:
        return []
    return [
        f"{field}: the cluster has no node pool {name!r}"
        for field, name in named_in(specs)
        if name not in pools
    ]
