"""Read model of data volumes: one row per live data volume, with the scopes it is shared with
(each stamped with when and by whom it was shared). Lists select, sort and page it in SQL
(projections/queries/data_volume_reads.py)."""

from datetime import datetime
from typing import Final
from uuid import UUID

import asyncpg
import msgspec

from domain.events import (
    DataVolumeCreated,
    DataVolumeDeleted,
    DataVolumeShared,
    DataVolumeUnshared,
    DataVolumeUpdated,
    RecordedEvent,
)
from projections.executor import Executor

NAME: Final = "data_volume_catalogue"


class SharedRow(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    scope_type: str
    scope_id: str
    created_at: datetime
    created_by: str


class DataVolumeRow(msgspec.Struct, frozen=True, kw_only=True):
    datavolume_id: UUID
    name: str
    description: str | None
    project_id: str
    department_id: str | None
    cluster_id: UUID
    origin_pvc_name: str
    use_original_volume: bool
    shared_scopes: tuple[SharedRow, ...]
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str
    version: int


_encode = msgspec.json.Encoder().encode
_decode_shared = msgspec.json.Decoder(tuple[SharedRow, ...]).decode
# An update moves the row's stamps and version; a replayed (older) event changes nothing.
_TOUCH: Final = "updated_at = $2, updated_by = $3, version = $4"
_NEWER: Final = "WHERE datavolume_id = $1 AND version < $4"


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice (updates carry the stream version)."""
    at, by, version = recorded.recorded_at, recorded.metadata.actor_subject, recorded.version
    match recorded.event:
        case DataVolumeCreated() as e:
            meta, spec = e.meta, e.spec
            await conn.execute(
                "INSERT INTO data_volume_catalogue (datavolume_id, name, description, project_id,"
                " department_id, cluster_id, origin_pvc_name, use_original_volume, created_at,"
                " created_by, updated_at, updated_by, version)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $9, $10, $11)"
                " ON CONFLICT (datavolume_id) DO NOTHING",
                e.datavolume_id, meta.name, meta.description, str(meta.project_id),
                meta.department_id, meta.cluster_id, spec.origin_pvc_name,
                spec.use_original_volume, at, by, version,
            )  # fmt: skip
        case DataVolumeUpdated() as e:
            await conn.execute(
                f"UPDATE data_volume_catalogue SET description = $5, {_TOUCH} {_NEWER}",
                e.datavolume_id, at, by, version, e.description,
            )  # fmt: skip
        case DataVolumeShared() as e:
            scope = e.scope
            shared = SharedRow(
                scope_type=scope.scope_type, scope_id=scope.scope_id, created_at=at, created_by=by
            )
            await conn.execute(
                "UPDATE data_volume_catalogue SET shared_scopes = shared_scopes"
                f" || jsonb_build_array($5::jsonb), {_TOUCH} {_NEWER}",
                e.datavolume_id, at, by, version, _encode(shared).decode(),
            )  # fmt: skip
        case DataVolumeUnshared() as e:
            await conn.execute(
                "UPDATE data_volume_catalogue SET shared_scopes = (SELECT"
                " coalesce(jsonb_agg(s ORDER BY n), '[]'::jsonb)"
                " FROM jsonb_array_elements(shared_scopes) WITH ORDINALITY AS a(s, n)"
                " WHERE NOT (s->>'scopeType' = $5 AND s->>'scopeId' = $6)),"
                f" {_TOUCH} {_NEWER}",
                e.datavolume_id, at, by, version, e.scope.scope_type, e.scope.scope_id,
            )  # fmt: skip
        case DataVolumeDeleted() as e:
            await conn.execute(
                "DELETE FROM data_volume_catalogue WHERE datavolume_id = $1", e.datavolume_id
            )
        case _:
            pass  # not an event this read model cares about


COLUMNS: Final = """datavolume_id, name, description, project_id, department_id, cluster_id,
    origin_pvc_name, use_original_volume, shared_scopes::text AS shared_scopes, created_at,
    created_by, updated_at, updated_by, version"""


def row_of(record: asyncpg.Record) -> DataVolumeRow:
    return DataVolumeRow(
        datavolume_id=record["datavolume_id"],
        name=record["name"],
        description=record["description"],
        project_id=record["project_id"],
        department_id=record["department_id"],
        cluster_id=record["cluster_id"],
        origin_pvc_name=record["origin_pvc_name"],
        use_original_volume=record["use_original_volume"],
        shared_scopes=_decode_shared(record["shared_scopes"]),
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
        version=record["version"],
    )


async def list_all(conn: Executor) -> list[DataVolumeRow]:
    rows = await conn.fetch(
        f"SELECT {COLUMNS} FROM data_volume_catalogue ORDER BY name, datavolume_id"
    )
    return [row_of(r) for r in rows]


async def get_one(conn: Executor, datavolume_id: UUID) -> DataVolumeRow | None:
    row = await conn.fetchrow(
        f"SELECT {COLUMNS} FROM data_volume_catalogue WHERE datavolume_id = $1", datavolume_id
    )
    return None if row is None else row_of(row)
