"""The template read model's facts of each cluster (`template_cluster_facts`): what its templates'
combined specs rest on there (its node pools, by their streams), kept from their events, so a
template's `runnable` says what its cluster lacks (domain/cluster_facts.py)."""

from collections.abc import Iterable, Mapping, Sequence
from uuid import UUID

from domain.cluster_facts import NOTHING, ClusterFacts
from domain.combined import Combined
from domain.events import NodePoolCreated, NodePoolDeleted, RecordedEvent
from domain.template_specs import DistributedTemplateSpec, MasterSection
from projections.executor import Executor

EVENTS = (NodePoolCreated, NodePoolDeleted)


def named(spec: DistributedTemplateSpec, master: MasterSection | None) -> bool:
    """Whether a template's own specs name anything of its cluster's (a node pool)."""
    master_spec = master.spec if master is not None else None
    return bool(spec.node_pools or (master_spec is not None and master_spec.node_pools))


def rests_on(combined: Combined) -> bool:
    """Whether combined specs rest on what their cluster holds: a change there works them out
    again (template_catalogue.py `_recombine`)."""
    master = combined.master
    return bool(combined.spec.node_pools or (master is not None and master.node_pools))


async def record(conn: Executor, batch: Sequence[RecordedEvent]) -> set[UUID]:
    """Each node pool made or deleted, kept as a fact of its cluster; the clusters whose facts
    these events moved. Written once (stream ids are never reused), so safe to run twice."""
    moved: set[UUID] = set()
    for recorded in batch:
        match recorded.event:
            case NodePoolCreated() as e:
                await conn.execute(
                    "INSERT INTO template_cluster_facts (stream_id, cluster_id, kind, name)"
                    " VALUES ($1, $2, 'nodepool', $3) ON CONFLICT DO NOTHING",
                    e.nodepool_id, e.cluster_id, e.name,
                )  # fmt: skip
                moved.add(e.cluster_id)
            case NodePoolDeleted() as e:
                gone = await conn.fetch(
                    "DELETE FROM template_cluster_facts WHERE stream_id = $1 RETURNING cluster_id",
                    e.nodepool_id,
                )
                moved.update(row["cluster_id"] for row in gone)
            case _:
                pass
    return moved


async def of_clusters(conn: Executor, clusters: Iterable[UUID | None]) -> dict[UUID, ClusterFacts]:
    """What these clusters hold (those holding nothing: absent), one query."""
    wanted = sorted({c for c in clusters if c is not None})
    if not wanted:
        return {}
    rows = await conn.fetch(
        "SELECT cluster_id, name FROM template_cluster_facts WHERE cluster_id = ANY($1::uuid[])"
        " AND kind = 'nodepool'",
        wanted,
    )
    pools: dict[UUID, set[str]] = {}
    for row in rows:
        pools.setdefault(row["cluster_id"], set()).add(row["name"])
    return {c: ClusterFacts(node_pools=frozenset(names)) for c, names in pools.items()}


def of(facts: Mapping[UUID, ClusterFacts], cluster_id: UUID | None) -> ClusterFacts:
    """One cluster's facts (a tenant's template has no cluster: nothing)."""
    return NOTHING if cluster_id is None else facts.get(cluster_id, NOTHING)
