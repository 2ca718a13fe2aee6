"""Read model of templates: one row per live template, with the assets it uses indexed and its
combined specs and runnable state worked out.

A template follows the version of each linked asset its stream records (the fan-out moves it),
so the combined specs are of those versions: the projection keeps every asset's state at each of
its versions (`template_asset_states`) as the asset events pass, before any template event that
names that version (the fan-out appends it after the asset's event, and a template is created
after the assets it names). A read is then one row; no read loads an event stream.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Final
from uuid import UUID

import asyncpg
import msgspec

from domain import assets as asset_rules
from domain.assets import Asset
from domain.combined import Combined, combine
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
from domain.values import AssetMeta, ScopeRef, TemplateMeta
from projections.asset_catalogue import SPECS
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
    combined: Combined  # as of `template.version`
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str


_encode = msgspec.json.Encoder().encode
_decode_body = msgspec.json.Decoder(StoredBody).decode
_decode_meta = msgspec.json.Decoder(TemplateMeta).decode
_decode_combined = msgspec.json.Decoder(Combined).decode
_decode_asset_meta = msgspec.json.Decoder(AssetMeta).decode


def _template_body(body: StoredBody) -> TemplateBody:
    return TemplateBody(
        spec=body.spec,
        assets=body.assets,
        master_spec_same_as_worker=body.master_spec_same_as_worker,
        master=body.master,
    )


async def _asset_states(
    conn: Executor, versions: Iterable[AssetVersion]
) -> dict[tuple[UUID, int], Asset]:
    """The assets at the versions given that still exist then, by (id, version): one query."""
    wanted = list(versions)
    if not wanted:
        return {}
    rows = await conn.fetch(
        "SELECT s.asset_id, s.version, s.kind, s.meta::text AS meta, s.spec::text AS spec"
        " FROM template_asset_states s"
        " JOIN unnest($1::uuid[], $2::int[]) AS w(asset_id, version) USING (asset_id, version)"
        " WHERE NOT s.deleted",
        [v.asset_id for v in wanted],
        [v.version for v in wanted],
    )
    return {
        (row["asset_id"], row["version"]): _asset_of(row, row["asset_id"], row["version"])
        for row in rows
    }


def _asset_of(row: Any, asset_id: UUID, version: int) -> Asset:
    return Asset(
        id=asset_id,
        kind=row["kind"],
        meta=_decode_asset_meta(row["meta"]),
        spec=msgspec.json.decode(row["spec"], type=SPECS[row["kind"]]),  # type: ignore[arg-type]
        deleted=row.get("deleted", False),
        version=version,
    )


async def _combined(conn: Executor, body: StoredBody) -> str:
    """The combined specs of the body, from the asset versions it records, as stored."""
    states = await _asset_states(conn, body.asset_versions)
    return _encode(_combine_with(body, states)).decode()


async def _record_asset(conn: Executor, recorded: RecordedEvent) -> None:
    """The asset's state at this event's version, from its state at the one before."""
    event = recorded.event
    assert asset_rules.is_asset_event(event)
    before = None
    if recorded.version > 1:
        before = await _asset_states_any(conn, recorded.stream_id, recorded.version - 1)
    state = asset_rules.evolve(before, event)
    await conn.execute(
        "INSERT INTO template_asset_states (asset_id, version, kind, meta, spec, deleted)"
        " VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6) ON CONFLICT DO NOTHING",
        recorded.stream_id, recorded.version, state.kind, _encode(state.meta).decode(),
        _encode(state.spec).decode(), state.deleted,
    )  # fmt: skip


async def _asset_states_any(conn: Executor, asset_id: UUID, version: int) -> Asset | None:
    """The asset at `version`, deleted or not (the next event builds on it)."""
    row = await conn.fetchrow(
        "SELECT kind, meta::text AS meta, spec::text AS spec, deleted FROM template_asset_states"
        " WHERE asset_id = $1 AND version = $2",
        asset_id,
        version,
    )
    return None if row is None else _asset_of(row, asset_id, version)


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
                " body, asset_ids, created_at, created_by, updated_at, updated_by, version,"
                " combined)"
                " VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $8, $9, $10,"
                " $11::jsonb)"
                " ON CONFLICT (template_id) DO NOTHING",
                e.template_id, e.meta.name, scope.kind, scope.id, _encode(e.meta).decode(),
                _encode(_body(e)).decode(), _asset_ids(e), at, by, version,
                await _combined(conn, _body(e)),
            )  # fmt: skip
        case TemplateUpdated() as e:
            await conn.execute(
                "UPDATE template_catalogue SET name = $2,"
                " meta = jsonb_set(jsonb_set(meta, '{name}', to_jsonb($2::text)),"
                "                  '{description}', coalesce(to_jsonb($3::text), 'null'::jsonb)),"
                " body = $4::jsonb, asset_ids = $5, updated_at = $6, updated_by = $7, version = $8,"
                " combined = $9::jsonb"
                " WHERE template_id = $1 AND version < $8",
                e.template_id, e.name, e.description, _encode(_body(e)).decode(),
                _asset_ids(e), at, by, version, await _combined(conn, _body(e)),
            )  # fmt: skip
        case TemplateLinkedAssetUpdated() as e:
            await _linked_asset_updates(conn, [(recorded, e)])
        case TemplateDeleted() as e:
            await conn.execute(
                "DELETE FROM template_catalogue WHERE template_id = $1", e.template_id
            )
        case event if asset_rules.is_asset_event(event):
            await _record_asset(conn, recorded)
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
    """Each template moves on to its asset's new version, and its combined specs with it: the
    rows, then the asset states they need, each read once for the whole run (the templates are
    distinct), and one statement for the writes."""
    if not run:
        return
    rows = await conn.fetch(
        "SELECT template_id, body::text AS body, version FROM template_catalogue"
        " WHERE template_id = ANY($1::uuid[])",
        [r.stream_id for r, _ in run],
    )
    current = {row["template_id"]: (_decode_body(row["body"]), row["version"]) for row in rows}
    moved: list[tuple[RecordedEvent, StoredBody]] = []
    for recorded, event in run:
        found = current.get(recorded.stream_id)
        if found is None or found[1] >= recorded.version:
            continue  # deleted since, or applied already
        body = found[0]
        versions = tuple(
            msgspec.structs.replace(v, version=event.asset_version)
            if v.asset_id == event.asset_id
            else v
            for v in body.asset_versions
        )
        moved.append((recorded, msgspec.structs.replace(body, asset_versions=versions)))
    if not moved:
        return
    states = await _asset_states(conn, {v for _, b in moved for v in b.asset_versions})
    await conn.execute(
        "UPDATE template_catalogue t SET body = u.body, combined = u.combined,"
        " updated_at = u.at, updated_by = u.by, version = u.version"
        " FROM unnest($1::uuid[], $2::jsonb[], $3::jsonb[], $4::timestamptz[], $5::text[],"
        "   $6::int[]) AS u(template_id, body, combined, at, by, version)"
        " WHERE t.template_id = u.template_id AND t.version < u.version",
        [r.stream_id for r, _ in moved],
        [_encode(b).decode() for _, b in moved],
        [_encode(_combine_with(b, states)).decode() for _, b in moved],
        [r.recorded_at for r, _ in moved],
        [r.metadata.actor_subject for r, _ in moved],
        [r.version for r, _ in moved],
    )


def _combine_with(body: StoredBody, states: dict[tuple[UUID, int], Asset]) -> Combined:
    """The body combined with the assets at the versions it records (gone: absent)."""
    found = {
        v.asset_id: states[key]
        for v in body.asset_versions
        if (key := (v.asset_id, v.version)) in states
    }
    return combine(_template_body(body), found)


COLUMNS: Final = """template_id, meta::text AS meta, body::text AS body, created_at, created_by,
    updated_at, updated_by, version, combined::text AS combined"""


def row_of(record: asyncpg.Record) -> TemplateRow:
    body = _decode_body(record["body"])
    meta = _decode_meta(record["meta"])
    template = Template(
        id=record["template_id"],
        meta=meta,
        body=_template_body(body),
        asset_versions=body.asset_versions,
        version=record["version"],
    )
    return TemplateRow(
        template=template,
        combined=_decode_combined(record["combined"]),
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
    )


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
