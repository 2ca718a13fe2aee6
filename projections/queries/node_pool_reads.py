"""Node pools from their catalogue with their clusters' names: one by id, the names of one
cluster's, or a list or count chosen, sorted and paged in SQL by `filterBy` over Run:ai's fields.
Seen by whoever sees their cluster."""

from collections.abc import Sequence, Set
from typing import Any, Final, Literal, get_args
from uuid import UUID

import asyncpg
import msgspec

from domain.values import ScopeRef
from projections import node_pool_catalogue
from projections.list_grammar import Condition, Grammar
from projections.list_sql import Where
from projections.node_pool_catalogue import COLUMNS, NodePoolRow, row_of
from projections.queries import Reads

# Run:ai's NodepoolSortFilterFields. What no pool here records (its phase, its nodes' network
# acceleration, a topology's name) reads as "".
Field = Literal[
    "name", "phase", "clusterId", "createdAt", "updatedAt", "networkTopologyName",
    "gpuNetworkAccelerationDetection", "gpuNetworkAccelerationDetected",
    "gpuNetworkAccelerationLabelKey", "swapEnabled", "nodeLevelSchedulerEnabled",
]  # fmt: skip
GRAMMAR: Final = Grammar(get_args(Field), dates=("createdAt", "updatedAt"))

_FROM: Final = (
    "node_pool_catalogue n LEFT JOIN org_units o"
    " ON o.kind = 'cluster' AND o.id = n.cluster_id::text"
)
_TEXT: Final = {
    "name": "n.name",
    "phase": "''",
    "clusterId": "n.cluster_id::text",
    "networkTopologyName": "''",
    "gpuNetworkAccelerationDetection": ("coalesce(n.spec->>'gpuNetworkAccelerationDetection', '')"),
    "gpuNetworkAccelerationDetected": "''",
    "gpuNetworkAccelerationLabelKey": "coalesce(n.spec->>'gpuNetworkAccelerationLabelKey', '')",
    "swapEnabled": "coalesce(n.spec->'gpuResourceOptimization'->>'swapEnabled', '')",
    "nodeLevelSchedulerEnabled": (
        "coalesce(n.spec->'gpuResourceOptimization'->>'nodeLevelSchedulerEnabled', '')"
    ),
}
_DATES: Final = {"createdAt": "n.created_at", "updatedAt": "n.updated_at"}
_SORT: Final = {**{f: f'{e} COLLATE "C"' for f, e in _TEXT.items()}, **_DATES}


class Listed(msgspec.Struct, frozen=True):
    row: NodePoolRow
    cluster_name: str  # "" when the org tree's read model has no such cluster (yet)


def visible(row: NodePoolRow, seen: Set[ScopeRef]) -> bool:
    return ScopeRef("cluster", str(row.cluster_id)) in seen


async def one(reads: Reads, nodepool_id: UUID) -> Listed | None:
    rows = await _fetch(
        reads,
        f"SELECT {_columns()}, o.name AS cluster_name FROM {_FROM} WHERE n.nodepool_id = $1",
        [nodepool_id],
    )
    return Listed(row_of(rows[0]), rows[0]["cluster_name"] or "") if rows else None


async def names_in(reads: Reads, cluster_id: UUID) -> list[str]:
    """The names of a cluster's pools, by name (for a form offering them)."""
    async with reads.connection() as conn:
        return await node_pool_catalogue.names_in(conn, cluster_id)


def _where(seen: Set[ScopeRef], conditions: Sequence[Condition]) -> Where:
    query = Where(_TEXT, _DATES)
    clusters = sorted(ref.id for ref in seen if ref.kind == "cluster")
    query.where.append(f"n.cluster_id::text = ANY({query.param(clusters)}::text[])")
    for condition in conditions:
        query.condition(condition)
    return query


async def page(
    reads: Reads,
    seen: Set[ScopeRef],
    conditions: Sequence[Condition],
    *,
    sort_by: Field | None,
    descending: bool,
    offset: int,
    limit: int,
) -> list[Listed]:
    """The page the request selects, by the field asked (by name when none), ties by id."""
    query = _where(seen, conditions)
    direction = "DESC" if descending else "ASC"
    order = f"{_SORT[sort_by or 'name']} {direction}, n.nodepool_id {direction}"
    rows = await _fetch(
        reads,
        f"SELECT {_columns()}, o.name AS cluster_name FROM {_FROM} WHERE {query.clause}"
        f" ORDER BY {order} OFFSET {query.param(offset)} LIMIT {query.param(limit)}",
        query.params,
    )
    return [Listed(row_of(r), r["cluster_name"] or "") for r in rows]


async def count(reads: Reads, seen: Set[ScopeRef], conditions: Sequence[Condition]) -> int:
    query = _where(seen, conditions)
    rows = await _fetch(reads, f"SELECT count(*) FROM {_FROM} WHERE {query.clause}", query.params)
    return int(rows[0][0])


def _columns() -> str:
    return ", ".join(f"n.{column.strip()}" for column in COLUMNS.split(","))


async def _fetch(reads: Reads, sql: str, params: list[Any]) -> list[asyncpg.Record]:
    async with reads.connection() as conn:
        return await conn.fetch(sql, *params)
