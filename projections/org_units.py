"""Read model of the org tree: one row per live cluster, department and project.

Org units, layer by layer: domain/org_units.py the rules, services/org_units.py the use cases,
projections/org_units.py the read model, infra/http/org_units.py the HTTP routes.
"""

from collections.abc import Iterable
from datetime import datetime
from typing import Final
from uuid import UUID

import asyncpg
import msgspec

from domain import org_units
from domain.events import (
    ClusterCreated,
    ClusterDeleted,
    ClusterRenamed,
    DepartmentCreated,
    DepartmentDeleted,
    DepartmentUpdated,
    ProjectCreated,
    ProjectDeleted,
    ProjectUpdated,
    RecordedEvent,
)
from domain.values import NodePoolResources, ScopeKind, ScopeRef, quota_total
from projections import epochs
from projections.executor import Executor

NAME: Final = "org_units"


class Details(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """The fields only some kinds have, kept together in one jsonb column."""

    resources: tuple[NodePoolResources, ...] = ()
    domain: str | None = None
    cluster_version: str | None = None
    requested_namespace: str | None = None


class OrgUnitRow(msgspec.Struct, frozen=True, kw_only=True):
    kind: ScopeKind
    id: str
    name: str
    cluster_id: UUID
    department_id: str | None
    description: str
    details: Details
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str

    @property
    def lineage(self) -> tuple[ScopeRef, ...]:
        return org_units.lineage(self.kind, self.id, self.cluster_id, self.department_id)


_encode = msgspec.json.Encoder().encode
_decode_details = msgspec.json.Decoder(Details).decode

_INSERT: Final = """
INSERT INTO org_units (kind, id, name, cluster_id, department_id, description, details,
                       total_gpu_quota, total_gpu_quota_text,
                       created_at, created_by, updated_at, updated_by, version)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $10, $11, $12)
ON CONFLICT (kind, id) DO NOTHING
"""
# Updates carry the stream version: a replayed older event never overwrites a newer row.
_RENAME: Final = """
UPDATE org_units SET name = $3, updated_at = $4, updated_by = $5, version = $6
 WHERE kind = $1 AND id = $2 AND version < $6
"""
_UPDATE: Final = """
UPDATE org_units SET description = $3, details = $4::jsonb, total_gpu_quota = $5,
       total_gpu_quota_text = $6, updated_at = $7, updated_by = $8, version = $9
 WHERE kind = $1 AND id = $2 AND version < $9
"""


def _gpu_total(details: Details) -> tuple[float | None, str]:
    """The unit's `totalGpuQuota` (domain/values.py `quota_total`), and as the lists' text
    operators read it: as Python writes the number, "" when there is none."""
    total = quota_total(details.resources, "gpu")
    return total, "" if total is None else str(total)


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice."""
    at, by, version = recorded.recorded_at, recorded.metadata.actor_subject, recorded.version
    match recorded.event:
        case ClusterCreated() as e:
            details = Details(domain=e.domain, cluster_version=e.version)
            await conn.execute(
                _INSERT, "cluster", str(e.cluster_id), e.name, e.cluster_id, None, "",
                _encode(details).decode(), *_gpu_total(details), at, by, version,
            )  # fmt: skip
        case DepartmentCreated() as e:
            details = Details(resources=e.resources)
            await conn.execute(
                _INSERT, "department", e.department_id, e.name, e.cluster_id, None,
                e.description, _encode(details).decode(), *_gpu_total(details), at, by, version,
            )  # fmt: skip
        case ProjectCreated() as e:
            details = Details(resources=e.resources, requested_namespace=e.requested_namespace)
            await conn.execute(
                _INSERT, "project", e.project_id, e.name, e.cluster_id, e.department_id,
                e.description, _encode(details).decode(), *_gpu_total(details), at, by, version,
            )  # fmt: skip
        case ClusterRenamed() as e:
            await conn.execute(_RENAME, "cluster", str(e.cluster_id), e.name, at, by, version)
        case DepartmentUpdated() as e:
            await _update_fields(conn, recorded, "department", e.department_id, e.description)
        case ProjectUpdated() as e:
            await _update_fields(conn, recorded, "project", e.project_id, e.description)
        case ClusterDeleted() as e:
            await _delete(conn, "cluster", str(e.cluster_id))
        case DepartmentDeleted() as e:
            await _delete(conn, "department", e.department_id)
        case ProjectDeleted() as e:
            await _delete(conn, "project", e.project_id)
        case _:
            return  # not an event this read model cares about
    if isinstance(recorded.event, _RESHAPING):
        await epochs.touch(conn, "org_units_epoch")


# The events that add or remove a unit, and so change lineages; readers keep lineages in memory
# until the epoch they were read at moves (migration 0017).
_RESHAPING: Final = (
    ClusterCreated,
    DepartmentCreated,
    ProjectCreated,
    ClusterDeleted,
    DepartmentDeleted,
    ProjectDeleted,
)


async def _update_fields(
    conn: Executor, recorded: RecordedEvent, kind: ScopeKind, unit_id: str, description: str
) -> None:
    assert isinstance(recorded.event, DepartmentUpdated | ProjectUpdated)
    row = await conn.fetchrow(
        "SELECT details::text AS details FROM org_units WHERE kind = $1 AND id = $2", kind, unit_id
    )
    if row is None:
        return
    details = msgspec.structs.replace(
        _decode_details(row["details"]), resources=recorded.event.resources
    )
    await conn.execute(
        _UPDATE, kind, unit_id, description, _encode(details).decode(), *_gpu_total(details),
        recorded.recorded_at, recorded.metadata.actor_subject, recorded.version,
    )  # fmt: skip


async def _delete(conn: Executor, kind: ScopeKind, unit_id: str) -> None:
    await conn.execute("DELETE FROM org_units WHERE kind = $1 AND id = $2", kind, unit_id)


# What a unit's row reads as (`row_of`), from org_units or a query's rows alike.
COLUMNS: Final = """kind, id, name, cluster_id, department_id, description,
    details::text AS details, created_at, created_by, updated_at, updated_by"""


def row_of(record: asyncpg.Record) -> OrgUnitRow:
    return OrgUnitRow(
        kind=record["kind"],
        id=record["id"],
        name=record["name"],
        cluster_id=record["cluster_id"],
        department_id=record["department_id"],
        description=record["description"],
        details=_decode_details(record["details"]),
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
    )


async def list_units(conn: Executor, kind: ScopeKind | None = None) -> list[OrgUnitRow]:
    """Live units of one kind (or all), ordered by kind and numeric-aware id."""
    rows = await conn.fetch(
        f"SELECT {COLUMNS} FROM org_units WHERE $1::text IS NULL OR kind = $1"
        " ORDER BY kind, length(id), id",
        kind,
    )
    return [row_of(r) for r in rows]


async def get_unit(conn: Executor, kind: ScopeKind, unit_id: str) -> OrgUnitRow | None:
    row = await conn.fetchrow(
        f"SELECT {COLUMNS} FROM org_units WHERE kind = $1 AND id = $2", kind, unit_id
    )
    return None if row is None else row_of(row)


async def names_of(conn: Executor, kind: ScopeKind, ids: Iterable[str]) -> dict[str, str]:
    """The names of these live units of one kind, by id (one query for many)."""
    rows = await conn.fetch(
        "SELECT id, name FROM org_units WHERE kind = $1 AND id = ANY($2::text[])", kind, list(ids)
    )
    return {row["id"]: row["name"] for row in rows}
