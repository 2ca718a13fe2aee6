"""Read model of node pools: one row per live pool, its spec as Run:ai's fields. Lists select,
sort and page it in SQL (projections/queries/node_pool_reads.py)."""

from datetime import datetime
from typing import Final
from uuid import UUID

import asyncpg
import msgspec

from domain.cluster_specs import NodePoolSpec
from domain.events import NodePoolCreated, NodePoolDeleted, NodePoolUpdated, RecordedEvent
from projections.executor import Executor

NAME: Final = "node_pool_catalogue"


class NodePoolRow(msgspec.Struct, frozen=True, kw_only=True):
    nodepool_id: UUID
    cluster_id: UUID
    name: str
    spec: NodePoolSpec
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str


_encode = msgspec.json.Encoder().encode
_decode_spec = msgspec.json.Decoder(NodePoolSpec).decode


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice (updates carry the stream version)."""
    at, by, version = recorded.recorded_at, recorded.metadata.actor_subject, recorded.version
    match recorded.event:
        case NodePoolCreated() as e:
            await conn.execute(
                "INSERT INTO node_pool_catalogue (nodepool_id, cluster_id, name, spec, created_at,"
                " created_by, updated_at, updated_by, version)"
                " VALUES ($1, $2, $3, $4::jsonb, $5, $6, $5, $6, $7)"
                " ON CONFLICT (nodepool_id) DO NOTHING",
                e.nodepool_id, e.cluster_id, e.name, _encode(e.spec).decode(), at, by, version,
            )  # fmt: skip
        case NodePoolUpdated() as e:
            await conn.execute(
                "UPDATE node_pool_catalogue SET spec = $2::jsonb, updated_at = $3,"
                " updated_by = $4, version = $5 WHERE nodepool_id = $1 AND version < $5",
                e.nodepool_id, _encode(e.spec).decode(), at, by, version,
            )  # fmt: skip
        case NodePoolDeleted() as e:
            await conn.execute(
                "DELETE FROM node_pool_catalogue WHERE nodepool_id = $1", e.nodepool_id
            )
        case _:
            pass  # not an event this read model cares about


COLUMNS: Final = """nodepool_id, cluster_id, name, spec::text AS spec, created_at, created_by,
    updated_at, updated_by"""


def row_of(record: asyncpg.Record) -> NodePoolRow:
    return NodePoolRow(
        nodepool_id=record["nodepool_id"],
        cluster_id=record["cluster_id"],
        name=record["name"],
        spec=_decode_spec(record["spec"]),
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
    )


async def get_one(conn: Executor, nodepool_id: UUID) -> NodePoolRow | None:
    row = await conn.fetchrow(
        f"SELECT {COLUMNS} FROM node_pool_catalogue WHERE nodepool_id = $1", nodepool_id
    )
    return None if row is None else row_of(row)


async def names_in(conn: Executor, cluster_id: UUID) -> list[str]:
    """The names of a cluster's pools, in order."""
    rows = await conn.fetch(
        'SELECT name FROM node_pool_catalogue WHERE cluster_id = $1 ORDER BY name COLLATE "C"',
        cluster_id,
    )
    return [row["name"] for row in rows]
