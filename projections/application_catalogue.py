"""Read model of applications (service accounts): one row per live application."""

from datetime import datetime
from typing import Final
from uuid import UUID

import asyncpg
import msgspec

from domain.events import (
    ApplicationCreated,
    ApplicationDeleted,
    ApplicationEnablementChanged,
    RecordedEvent,
)
from domain.values import Grant
from projections.executor import Executor

NAME: Final = "application_catalogue"


class ApplicationSummary(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    name: str
    client_id: str
    grants: tuple[Grant, ...]
    created_at: datetime
    created_by: str
    version: int
    enabled: bool = True
    updated_at: datetime | None = None


_grants = msgspec.json.Encoder()
_decode_grants = msgspec.json.Decoder(tuple[Grant, ...])


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in. Safe to run twice: inserts skip existing rows, deletes are idempotent."""
    match recorded.event:
        case ApplicationCreated() as created:
            await conn.execute(
                "INSERT INTO application_catalogue (application_id, name, client_id, grants,"
                " created_at, created_by, version) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7)"
                " ON CONFLICT (application_id) DO NOTHING",
                created.application_id,
                created.name,
                created.client_id,
                _grants.encode(created.grants).decode(),
                recorded.recorded_at,
                recorded.metadata.actor_subject,
                recorded.version,
            )
        case ApplicationEnablementChanged() as changed:
            await conn.execute(
                "UPDATE application_catalogue SET enabled = $2, updated_at = $3, version = $4"
                " WHERE application_id = $1 AND version < $4",
                changed.application_id,
                changed.enabled,
                recorded.recorded_at,
                recorded.version,
            )
        case ApplicationDeleted() as deleted:
            await conn.execute(
                "DELETE FROM application_catalogue WHERE application_id = $1",
                deleted.application_id,
            )
        case _:
            pass  # not an event this read model cares about


_COLUMNS: Final = (
    "application_id, name, client_id, grants::text AS grants, created_at, created_by, version,"
    " enabled, updated_at"
)


def _summary(row: asyncpg.Record) -> ApplicationSummary:
    return ApplicationSummary(
        application_id=row["application_id"],
        name=row["name"],
        client_id=row["client_id"],
        grants=_decode_grants.decode(row["grants"]),
        created_at=row["created_at"],
        created_by=row["created_by"],
        version=row["version"],
        enabled=row["enabled"],
        updated_at=row["updated_at"],
    )


async def list_applications(conn: Executor) -> list[ApplicationSummary]:
    rows = await conn.fetch(f"SELECT {_COLUMNS} FROM application_catalogue ORDER BY name")
    return [_summary(row) for row in rows]


async def get_application(conn: Executor, application_id: UUID) -> ApplicationSummary | None:
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM application_catalogue WHERE application_id = $1", application_id
    )
    return None if row is None else _summary(row)
