"""The template read model's facts of each cluster (`template_cluster_facts`): what its templates
rest on there (node pools, storage classes with their specs and configurations, by stream), kept
from their events, so `runnable` says what the cluster lacks (domain/cluster_facts.py)."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Final
from uuid import UUID

import msgspec

from domain import storage_classes, storage_rules
from domain.cluster_facts import NOTHING, ClusterFacts
from domain.cluster_specs import StorageClassRules, StorageClassSpec
from domain.combined import Combined
from domain.events import (
    NodePoolCreated,
    NodePoolDeleted,
    RecordedEvent,
    StorageClassConfigurationCreated,
    StorageClassConfigurationDeleted,
    StorageClassConfigurationUpdated,
    StorageClassRegistered,
    StorageClassRemoved,
)
from domain.storage_rules import StorageFacts
from projections.executor import Executor

EVENTS: Final = (
    NodePoolCreated,
    NodePoolDeleted,
    StorageClassRegistered,
    StorageClassRemoved,
    StorageClassConfigurationCreated,
    StorageClassConfigurationUpdated,
    StorageClassConfigurationDeleted,
)
_encode = msgspec.json.Encoder().encode
_decode_rules = msgspec.json.Decoder(StorageClassRules).decode
_decode_spec = msgspec.json.Decoder(StorageClassSpec).decode
_INSERT: Final = (
    "INSERT INTO template_cluster_facts (stream_id, cluster_id, kind, name, detail)"
    " VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT DO NOTHING"
)
# A class registered anew (its spec changed) replaces its spec: whether it is the default.
_REGISTER: Final = (
    "INSERT INTO template_cluster_facts (stream_id, cluster_id, kind, name, detail)"
    " VALUES ($1, $2, 'storageclass', $3, $4::jsonb)"
    " ON CONFLICT (stream_id) DO UPDATE SET detail = excluded.detail"
)
_DELETE: Final = "DELETE FROM template_cluster_facts WHERE stream_id = $1 RETURNING cluster_id"


def rests_on(combined: Combined) -> bool:
    """Whether combined specs rest on what their cluster holds (a node pool, a new volume's
    storage class, named or its default): a change there works them out again
    (template_catalogue.py `_recombine`)."""
    master = combined.master
    specs = [("", combined.spec), ("", master)]
    pools = combined.spec.node_pools or (master is not None and master.node_pools)
    return bool(pools or storage_rules.named_in(specs))


async def record(conn: Executor, batch: Sequence[RecordedEvent]) -> set[UUID]:
    """Each fact these events make, change or end, kept for its cluster; the clusters whose
    facts moved. Safe to run twice: a fact is its stream's, made and ended by its events."""
    moved: set[UUID] = set()
    for recorded in batch:
        match recorded.event:
            case NodePoolCreated() as e:
                await conn.execute(_INSERT, e.nodepool_id, e.cluster_id, "nodepool", e.name, None)
                moved.add(e.cluster_id)
            case StorageClassRegistered() as e:
                stream_id = storage_classes.stream_of(e.cluster_id, e.name)
                spec = _encode(e.spec).decode()
                await conn.execute(_REGISTER, stream_id, e.cluster_id, e.name, spec)
                moved.add(e.cluster_id)
            case StorageClassConfigurationCreated() as e:
                rules = _encode(e.rules).decode()
                await conn.execute(
                    _INSERT, e.configuration_id, e.cluster_id, "storageclassconfig", e.name, rules
                )
                moved.add(e.cluster_id)
            case StorageClassConfigurationUpdated() as e:
                changed = await conn.fetch(
                    "UPDATE template_cluster_facts SET detail = $2::jsonb WHERE stream_id = $1"
                    " RETURNING cluster_id",
                    e.configuration_id,
                    _encode(e.rules).decode(),
                )
                moved.update(row["cluster_id"] for row in changed)
            case NodePoolDeleted() | StorageClassRemoved() | StorageClassConfigurationDeleted():
                gone = await conn.fetch(_DELETE, recorded.stream_id)
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
        "SELECT cluster_id, kind, name, detail::text AS detail FROM template_cluster_facts"
        " WHERE cluster_id = ANY($1::uuid[])",
        wanted,
    )
    pools: dict[UUID, set[str]] = {}
    classes: dict[UUID, set[str]] = {}
    defaults: dict[UUID, set[str]] = {}
    rules: dict[UUID, dict[str, StorageClassRules]] = {}
    for row in rows:
        cluster, name = row["cluster_id"], row["name"]
        match row["kind"]:
            case "nodepool":
                pools.setdefault(cluster, set()).add(name)
            case "storageclass":
                classes.setdefault(cluster, set()).add(name)
                if row["detail"] is not None and _decode_spec(row["detail"]).is_default:
                    defaults.setdefault(cluster, set()).add(name)
            case "storageclassconfig":
                rules.setdefault(cluster, {})[name] = _decode_rules(row["detail"])
    return {
        c: ClusterFacts(
            node_pools=frozenset(pools.get(c, ())),
            storage=StorageFacts(
                classes=frozenset(classes[c]) if c in classes else None,
                rules=rules.get(c, {}),
                default=storage_rules.default_of(defaults.get(c, ())),
            ),
        )
        for c in {*pools, *classes, *rules}
    }


def of(facts: Mapping[UUID, ClusterFacts], cluster_id: UUID | None) -> ClusterFacts:
    """One cluster's facts (a tenant's template has no cluster: nothing)."""
    return NOTHING if cluster_id is None else facts.get(cluster_id, NOTHING)
