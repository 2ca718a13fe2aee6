"""Read model of storage classes: one row per class a cluster has, and one per configuration of a
class (projections/queries/storage_class_reads.py reads them together). Also:
domain/storage_classes.py, services/storage_classes.py, infra/http/storage_classes.py."""

from datetime import datetime
from typing import Final
from uuid import UUID

import asyncpg
import msgspec

from domain.cluster_specs import StorageClassRules, StorageClassSpec
from domain.events import (
    RecordedEvent,
    StorageClassConfigurationCreated,
    StorageClassConfigurationDeleted,
    StorageClassConfigurationUpdated,
    StorageClassRegistered,
    StorageClassRemoved,
)
from projections.executor import Executor

NAME: Final = "storage_class_catalogue"
CONFIGURATIONS: Final = "storage_class_configuration_catalogue"


class StorageClassRow(msgspec.Struct, frozen=True, kw_only=True):
    cluster_id: UUID
    name: str
    spec: StorageClassSpec
    rules: StorageClassRules | None  # its configuration's, if it has one


class ConfigurationRow(msgspec.Struct, frozen=True, kw_only=True):
    configuration_id: UUID
    cluster_id: UUID
    name: str
    rules: StorageClassRules
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str


_encode = msgspec.json.Encoder().encode
_decode_spec = msgspec.json.Decoder(StorageClassSpec).decode
_decode_rules = msgspec.json.Decoder(StorageClassRules).decode


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice (rows carry their stream version)."""
    at, by, version = recorded.recorded_at, recorded.metadata.actor_subject, recorded.version
    match recorded.event:
        case StorageClassRegistered() as e:
            await conn.execute(
                "INSERT INTO storage_class_catalogue (cluster_id, name, spec, version)"
                " VALUES ($1, $2, $3::jsonb, $4) ON CONFLICT (cluster_id, name) DO UPDATE"
                " SET spec = excluded.spec, version = excluded.version"
                " WHERE storage_class_catalogue.version < excluded.version",
                e.cluster_id, e.name, _encode(e.spec).decode(), version,
            )  # fmt: skip
        case StorageClassRemoved() as e:
            await conn.execute(
                "DELETE FROM storage_class_catalogue WHERE cluster_id = $1 AND name = $2"
                " AND version < $3",
                e.cluster_id, e.name, version,
            )  # fmt: skip
        case StorageClassConfigurationCreated() as e:
            await conn.execute(
                f"INSERT INTO {CONFIGURATIONS} (configuration_id, cluster_id, name, rules,"
                " created_at, created_by, updated_at, updated_by, version)"
                " VALUES ($1, $2, $3, $4::jsonb, $5, $6, $5, $6, $7)"
                " ON CONFLICT (configuration_id) DO NOTHING",
                e.configuration_id, e.cluster_id, e.name, _encode(e.rules).decode(), at, by,
                version,
            )  # fmt: skip
        case StorageClassConfigurationUpdated() as e:
            await conn.execute(
                f"UPDATE {CONFIGURATIONS} SET rules = $2::jsonb, updated_at = $3,"
                " updated_by = $4, version = $5 WHERE configuration_id = $1 AND version < $5",
                e.configuration_id, _encode(e.rules).decode(), at, by, version,
            )  # fmt: skip
        case StorageClassConfigurationDeleted() as e:
            await conn.execute(
                f"DELETE FROM {CONFIGURATIONS} WHERE configuration_id = $1", e.configuration_id
            )
        case _:
            pass  # not an event this read model cares about


CONFIGURATION_COLUMNS: Final = """configuration_id, cluster_id, name, rules::text AS rules,
    created_at, created_by, updated_at, updated_by"""


def configuration_of(record: asyncpg.Record) -> ConfigurationRow:
    return ConfigurationRow(
        configuration_id=record["configuration_id"],
        cluster_id=record["cluster_id"],
        name=record["name"],
        rules=_decode_rules(record["rules"]),
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
    )


async def classes_of(conn: Executor, cluster_id: UUID, name: str | None) -> list[StorageClassRow]:
    """A cluster's classes (or its one named so), by name, each with its configuration."""
    rows = await conn.fetch(
        "SELECT s.cluster_id, s.name, s.spec::text AS spec, c.rules::text AS rules"
        f" FROM storage_class_catalogue s LEFT JOIN {CONFIGURATIONS} c"
        " ON c.cluster_id = s.cluster_id AND c.name = s.name"
        " WHERE s.cluster_id = $1 AND ($2::text IS NULL OR s.name = $2)"
        ' ORDER BY s.name COLLATE "C"',
        cluster_id,
        name,
    )
    return [
        StorageClassRow(
            cluster_id=r["cluster_id"],
            name=r["name"],
            spec=_decode_spec(r["spec"]),
            rules=None if r["rules"] is None else _decode_rules(r["rules"]),
        )
        for r in rows
    ]


async def configuration(conn: Executor, configuration_id: UUID) -> ConfigurationRow | None:
    row = await conn.fetchrow(
        f"SELECT {CONFIGURATION_COLUMNS} FROM {CONFIGURATIONS} WHERE configuration_id = $1",
        configuration_id,
    )
    return None if row is None else configuration_of(row)
