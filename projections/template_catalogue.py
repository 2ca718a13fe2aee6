"""Read model of templates: one row per live template, with the assets it uses indexed."""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Final
from uuid import UUID

import asyncpg
import msgspec

from domain.events import (
    AssetVersion,
    RecordedEvent,
    TemplateCreated,
    TemplateDeleted,
    TemplateLinkedAssetUpdated,
    TemplateUpdated,
)
from domain.template_specs import DistributedTemplateSpec, MasterSection, TemplateAssets
from domain.templates import Template, TemplateBody
from domain.values import ScopeRef, TemplateMeta
from projections.executor import Executor

NAME: Final = "template_catalogue"


class StoredBody(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    spec: DistributedTemplateSpec
    assets: TemplateAssets | None = None
    master_spec_same_as_worker: bool = True
    master: MasterSection | None = None
    asset_versions: tuple[AssetVersion, ...] = ()


class TemplateRow(msgspec.Struct, frozen=True, kw_only=True):
    template: Template
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str


_encode = msgspec.json.Encoder().encode
_decode_body = msgspec.json.Decoder(StoredBody).decode
_decode_meta = msgspec.json.Decoder(TemplateMeta).decode


def _body(e: TemplateCreated | TemplateUpdated) -> StoredBody:
    return StoredBody(
        spec=e.spec,
        assets=e.assets,
        master_spec_same_as_worker=e.master_spec_same_as_worker,
        master=e.master,
        asset_versions=e.asset_versions,
    )


def _asset_ids(e: TemplateCreated | TemplateUpdated) -> list[UUID]:
    return [v.asset_id for v in e.asset_versions]


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice (updates carry the stream version)."""
    at, by, version = recorded.recorded_at, recorded.metadata.actor_subject, recorded.version
    match recorded.event:
        case TemplateCreated() as e:
            scope = e.meta.scope_ref
            await conn.execute(
                "INSERT INTO template_catalogue (template_id, name, scope_kind, scope_id, meta,"
                " body, asset_ids, created_at, created_by, updated_at, updated_by, version)"
                " VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $8, $9, $10)"
                " ON CONFLICT (template_id) DO NOTHING",
                e.template_id, e.meta.name, scope.kind, scope.id, _encode(e.meta).decode(),
                _encode(_body(e)).decode(), _asset_ids(e), at, by, version,
            )  # fmt: skip
        case TemplateUpdated() as e:
            await conn.execute(
                "UPDATE template_catalogue SET name = $2,"
                " meta = jsonb_set(jsonb_set(meta, '{name}', to_jsonb($2::text)),"
                "                  '{description}', coalesce(to_jsonb($3::text), 'null'::jsonb)),"
                " body = $4::jsonb, asset_ids = $5, updated_at = $6, updated_by = $7, version = $8"
                " WHERE template_id = $1 AND version < $8",
                e.template_id, e.name, e.description, _encode(_body(e)).decode(),
                _asset_ids(e), at, by, version,
            )  # fmt: skip
        case TemplateLinkedAssetUpdated() as e:
            # Only the recorded version of one asset moves; the combined spec follows on read.
            await conn.execute(
                "UPDATE template_catalogue SET body = jsonb_set(body, '{assetVersions}',"
                " (SELECT coalesce(jsonb_agg(CASE WHEN v->>'assetId' = $2::text"
                "   THEN jsonb_set(v, '{version}', to_jsonb($3::int)) ELSE v END), '[]'::jsonb)"
                "  FROM jsonb_array_elements(body->'assetVersions') AS v)),"
                " updated_at = $4, updated_by = $5, version = $6"
                " WHERE template_id = $1 AND version < $6",
                e.template_id, str(e.asset_id), e.asset_version, at, by, version,
            )  # fmt: skip
        case TemplateDeleted() as e:
            await conn.execute(
                "DELETE FROM template_catalogue WHERE template_id = $1", e.template_id
            )
        case _:
            pass  # not an event this read model cares about


async def apply_batch(conn: Executor, batch: Sequence[RecordedEvent]) -> None:
    """As `apply` event by event, but each run of linked-asset updates to distinct templates (a
    fan-out writes thousands in a row) is one statement."""
    run: list[tuple[RecordedEvent, TemplateLinkedAssetUpdated]] = []
    for recorded in batch:
        event = recorded.event
        if not isinstance(event, TemplateLinkedAssetUpdated):
            await _linked_asset_updates(conn, run)
            run = []
            await apply(conn, recorded)
            continue
        if any(r.stream_id == recorded.stream_id for r, _ in run):  # one row, updated in order
            await _linked_asset_updates(conn, run)
            run = []
        run.append((recorded, event))
    await _linked_asset_updates(conn, run)


async def _linked_asset_updates(
    conn: Executor, run: Sequence[tuple[RecordedEvent, TemplateLinkedAssetUpdated]]
) -> None:
    if not run:
        return
    await conn.execute(
        "UPDATE template_catalogue t SET body = jsonb_set(t.body, '{assetVersions}',"
        " (SELECT coalesce(jsonb_agg(CASE WHEN v->>'assetId' = u.asset_id"
        "   THEN jsonb_set(v, '{version}', to_jsonb(u.asset_version)) ELSE v END), '[]'::jsonb)"
        "  FROM jsonb_array_elements(t.body->'assetVersions') AS v)),"
        " updated_at = u.at, updated_by = u.by, version = u.version"
        " FROM unnest($1::uuid[], $2::text[], $3::int[], $4::timestamptz[], $5::text[], $6::int[])"
        "   AS u(template_id, asset_id, asset_version, at, by, version)"
        " WHERE t.template_id = u.template_id AND t.version < u.version",
        [r.stream_id for r, _ in run],
        [str(e.asset_id) for _, e in run],
        [e.asset_version for _, e in run],
        [r.recorded_at for r, _ in run],
        [r.metadata.actor_subject for r, _ in run],
        [r.version for r, _ in run],
    )


COLUMNS: Final = """template_id, meta::text AS meta, body::text AS body, created_at, created_by,
    updated_at, updated_by, version"""


def row_of(record: asyncpg.Record) -> TemplateRow:
    body = _decode_body(record["body"])
    meta = _decode_meta(record["meta"])
    template = Template(
        id=record["template_id"],
        meta=meta,
        body=TemplateBody(
            spec=body.spec,
            assets=body.assets,
            master_spec_same_as_worker=body.master_spec_same_as_worker,
            master=body.master,
        ),
        asset_versions=body.asset_versions,
        version=record["version"],
    )
    return TemplateRow(
        template=template,
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
    )


async def list_templates(conn: Executor) -> list[TemplateRow]:
    rows = await conn.fetch(f"SELECT {COLUMNS} FROM template_catalogue ORDER BY name, template_id")
    return [row_of(r) for r in rows]


async def get_template(conn: Executor, template_id: UUID) -> TemplateRow | None:
    row = await conn.fetchrow(
        f"SELECT {COLUMNS} FROM template_catalogue WHERE template_id = $1", template_id
    )
    return None if row is None else row_of(row)


IN_SCOPES: Final = "(scope_kind, scope_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))"


def scope_columns(scopes: Iterable[ScopeRef]) -> tuple[list[str], list[str]]:
    chosen = sorted(scopes)
    return [scope.kind for scope in chosen], [scope.id for scope in chosen]


async def templates_using(
    conn: Executor, asset_ids: list[UUID], scopes: Iterable[ScopeRef]
) -> dict[UUID, list[tuple[UUID, str]]]:
    """For each asset, the templates in `scopes` (those the caller may see) that link or load
    it, as (id, name)."""
    rows = await conn.fetch(
        "SELECT a.asset_id, t.template_id, t.name FROM template_catalogue t"
        " CROSS JOIN LATERAL unnest(t.asset_ids) AS a(asset_id)"
        f" WHERE a.asset_id = ANY($1::uuid[]) AND {IN_SCOPES} ORDER BY t.name",
        asset_ids,
        *scope_columns(scopes),
    )
    found: dict[UUID, list[tuple[UUID, str]]] = {}
    for row in rows:
        found.setdefault(row["asset_id"], []).append((row["template_id"], row["name"]))
    return found


async def templates_with(
    conn: Executor, asset_id: UUID, scopes: Iterable[ScopeRef]
) -> list[TemplateRow]:
    """The templates in `scopes` (those the caller may see) that link or load the asset."""
    rows = await conn.fetch(
        f"SELECT {COLUMNS} FROM template_catalogue"
        f" WHERE $1 = ANY (asset_ids) AND {IN_SCOPES} ORDER BY name",
        asset_id,
        *scope_columns(scopes),
    )
    return [row_of(r) for r in rows]
