"""Read model of templates: one row per live template, its used assets indexed, its combined
specs and runnable state worked out from the asset versions it records (`template_asset_states`)
and its cluster's facts (projections/template_facts.py): docs/decisions/0024-read-models.md."""

import typing
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final
from uuid import UUID

import asyncpg
import msgspec

from domain import assets as asset_rules
from domain.assets import Asset
from domain.bounded import Bounded
from domain.cluster_facts import NOTHING, ClusterFacts
from domain.combined import Combined, combine, master_of
from domain.events import (
    AssetEvent,
    AssetVersion,
    RecordedEvent,
    TemplateCreated,
    TemplateDeleted,
    TemplateLinkedAssetUpdated,
    TemplateUpdated,
    event_tag,
    stream_type_of,
)
from domain.template_specs import DistributedTemplateSpec, MasterSection, TemplateAssets
from domain.templates import Template, TemplateBody
from domain.values import AssetMeta, ScopeRef, TemplateMeta
from projections import template_facts
from projections.asset_catalogue import SPECS
from projections.executor import Executor

NAME: Final = "template_catalogue"


class StoredBody(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    spec: DistributedTemplateSpec
    assets: TemplateAssets | None = None
    master_spec_same_as_worker: bool = True
    master: MasterSection | None = None
    asset_versions: tuple[AssetVersion, ...] = ()


# A decoded row's key: the template, its version, its cluster facts' `recombined`, and the table
# it was read from (a rebuild swaps in another, whose rows may differ at the same versions).
RowKey = tuple[UUID, int, int, int]


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
    conn: Executor, versions: Iterable[AssetVersion], *, deleted_too: bool = False
) -> dict[tuple[UUID, int], Asset]:
    """The assets at the versions given, by (id, version): one query. Deleted ones (an asset's
    last version) only when asked for: a template's combined specs lack them, and the next
    event of an asset builds on them."""
    wanted = list(versions)
    if not wanted:
        return {}
    rows = await conn.fetch(
        "SELECT s.asset_id, s.version, s.kind, s.meta::text AS meta, s.spec::text AS spec,"
        " s.deleted FROM template_asset_states s"
        " JOIN unnest($1::uuid[], $2::int[]) AS w(asset_id, version) USING (asset_id, version)"
        " WHERE $3 OR NOT s.deleted",
        [v.asset_id for v in wanted],
        [v.version for v in wanted],
        deleted_too,
    )
    return {
        (row["asset_id"], row["version"]): Asset(
            id=row["asset_id"],
            kind=row["kind"],
            meta=_decode_asset_meta(row["meta"]),
            spec=msgspec.json.decode(row["spec"], type=SPECS[row["kind"]]),  # type: ignore[arg-type]
            deleted=row["deleted"],
            version=row["version"],
        )
        for row in rows
    }


async def _record_assets(conn: Executor, batch: Sequence[RecordedEvent]) -> None:
    """Each asset's state at each version these events make, from its state at the version
    before (read once per asset, for its first event here): one read, one write."""
    if not batch:
        return
    firsts: dict[UUID, int] = {}
    for recorded in batch:
        firsts.setdefault(recorded.stream_id, recorded.version)
    known = await _asset_states(
        conn,
        (AssetVersion(asset_id=a, version=v - 1) for a, v in firsts.items() if v > 1),
        deleted_too=True,
    )
    latest: dict[UUID, Asset | None] = {a: known.get((a, v - 1)) for a, v in firsts.items()}
    made: list[tuple[UUID, int, Asset]] = []
    for recorded in batch:
        event = recorded.event
        assert asset_rules.is_asset_event(event)
        state = asset_rules.evolve(latest[recorded.stream_id], event)
        latest[recorded.stream_id] = state
        made.append((recorded.stream_id, recorded.version, state))
    await conn.execute(
        "INSERT INTO template_asset_states (asset_id, version, kind, meta, spec, deleted)"
        " SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::jsonb[], $5::jsonb[],"
        "   $6::bool[])"
        " ON CONFLICT DO NOTHING",
        [a for a, _, _ in made],
        [v for _, v, _ in made],
        [s.kind for _, _, s in made],
        [_encode(s.meta).decode() for _, _, s in made],
        [_encode(s.spec).decode() for _, _, s in made],
        [s.deleted for _, _, s in made],
    )


class _Draft(msgspec.Struct, kw_only=True):
    """A template's row while a batch folds into it."""

    meta: TemplateMeta
    body: StoredBody
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str
    version: int


def _body(e: TemplateCreated | TemplateUpdated) -> StoredBody:
    return StoredBody(
        spec=e.spec,
        assets=e.assets,
        master_spec_same_as_worker=e.master_spec_same_as_worker,
        master=e.master,
        asset_versions=e.asset_versions,
    )


def _evolve(draft: _Draft | None, recorded: RecordedEvent) -> _Draft | None:
    """The row after one template event; None when there is none (deleted, or never made)."""
    at, by, version = recorded.recorded_at, recorded.metadata.actor_subject, recorded.version
    match recorded.event:
        case TemplateCreated() as e:
            return _Draft(meta=e.meta, body=_body(e), created_at=at, created_by=by,
                          updated_at=at, updated_by=by, version=version)  # fmt: skip
        case TemplateUpdated() as e if draft is not None:
            meta = msgspec.structs.replace(draft.meta, name=e.name, description=e.description)
            return _Draft(meta=meta, body=_body(e), created_at=draft.created_at,
                          created_by=draft.created_by, updated_at=at, updated_by=by,
                          version=version)  # fmt: skip
        case TemplateLinkedAssetUpdated() as e if draft is not None:
            versions = tuple(
                msgspec.structs.replace(v, version=e.asset_version) if v.asset_id == e.asset_id
                else v
                for v in draft.body.asset_versions
            )  # fmt: skip
            body = msgspec.structs.replace(draft.body, asset_versions=versions)
            return msgspec.structs.replace(
                draft, body=body, updated_at=at, updated_by=by, version=version
            )
        case _:  # deleted; or a change to a row there is not (deleted before)
            return None


async def _fold_templates(conn: Executor, batch: Sequence[RecordedEvent]) -> set[UUID]:
    """Fold each template's events of the batch into its row in memory, from the rows as stored
    (read once; a stream new in this batch, unread), then upsert every moved row in one statement,
    delete in one more; the templates moved. Events at or below a row's version: skipped."""
    if not batch:
        return set()
    firsts: dict[UUID, int] = {}
    for recorded in batch:
        firsts.setdefault(recorded.stream_id, recorded.version)
    ids = list(firsts)
    if continued := [t for t, version in firsts.items() if version > 1]:
        stored = await conn.fetch(
            "SELECT template_id, meta::text AS meta, body::text AS body, created_at, created_by,"
            " updated_at, updated_by, version FROM template_catalogue"
            " WHERE template_id = ANY($1::uuid[])",
            continued,
        )
    else:
        stored = []
    drafts: dict[UUID, _Draft | None] = {
        row["template_id"]: _Draft(
            meta=_decode_meta(row["meta"]),
            body=_decode_body(row["body"]),
            created_at=row["created_at"],
            created_by=row["created_by"],
            updated_at=row["updated_at"],
            updated_by=row["updated_by"],
            version=row["version"],
        )
        for row in stored
    }
    moved: set[UUID] = set()
    for recorded in batch:
        draft = drafts.get(recorded.stream_id)
        if draft is not None and draft.version >= recorded.version:
            continue
        drafts[recorded.stream_id] = _evolve(draft, recorded)
        moved.add(recorded.stream_id)
    gone = [t for t in ids if t in moved and drafts.get(t) is None]
    if gone:
        await conn.execute(
            "DELETE FROM template_catalogue WHERE template_id = ANY($1::uuid[])", gone
        )
    kept = [(t, d) for t in ids if t in moved and (d := drafts.get(t)) is not None]
    if not kept:
        return moved
    states = await _asset_states(conn, {v for _, d in kept for v in d.body.asset_versions})
    combined = {t: _combine_with(d.body, states, NOTHING) for t, d in kept}
    # Worked out again on their clusters' facts: those resting on any (few), read in one query.
    resting = [(t, d) for t, d in kept if template_facts.rests_on(combined[t])]
    facts = await template_facts.of_clusters(conn, (d.meta.cluster_id for _, d in resting))
    for t, d in resting:
        combined[t] = _combine_with(d.body, states, template_facts.of(facts, d.meta.cluster_id))
    rows = [
        _Upserted(
            template_id=t,
            name=d.meta.name,
            scope_kind=d.meta.scope_ref.kind,
            scope_id=d.meta.scope_ref.id,
            meta=d.meta,
            body=d.body,
            asset_ids=_array_literal(v.asset_id for v in d.body.asset_versions),
            created_at=d.created_at,
            created_by=d.created_by,
            updated_at=d.updated_at,
            updated_by=d.updated_by,
            version=d.version,
            combined=combined[t],
            cluster_facts=template_facts.rests_on(combined[t]),
        )
        for t, d in kept
    ]
    # The rows as one JSON document, encoded in one call and taken apart by the database
    # (jsonb_to_recordset): sending them as thirteen arrays cost the driver an encoding of
    # every element of each, more than the rest of the projection's own work.
    await conn.execute(
        "INSERT INTO template_catalogue AS t (template_id, name, scope_kind, scope_id, meta,"
        " body, asset_ids, created_at, created_by, updated_at, updated_by, version, combined,"
        " cluster_facts)"
        " SELECT u.template_id, u.name, u.scope_kind, u.scope_id, u.meta, u.body,"
        "   u.asset_ids::uuid[], u.created_at, u.created_by, u.updated_at, u.updated_by,"
        "   u.version, u.combined, u.cluster_facts"
        " FROM jsonb_to_recordset($1::jsonb) AS u(template_id uuid, name text, scope_kind text,"
        "   scope_id text, meta jsonb, body jsonb, asset_ids text, created_at timestamptz,"
        "   created_by text, updated_at timestamptz, updated_by text, version int,"
        "   combined jsonb, cluster_facts bool)"
        " ON CONFLICT (template_id) DO UPDATE SET name = excluded.name, meta = excluded.meta,"
        "   body = excluded.body, asset_ids = excluded.asset_ids,"
        "   updated_at = excluded.updated_at, updated_by = excluded.updated_by,"
        "   version = excluded.version, combined = excluded.combined,"
        "   cluster_facts = excluded.cluster_facts"
        " WHERE t.version < excluded.version",
        _encode(rows).decode(),
    )
    return moved


async def _recombine(conn: Executor, clusters: set[UUID], folded: set[UUID]) -> None:
    """Work out again the combined specs of these clusters' templates that rest on their facts
    (but those just folded, which read the facts as they now are); `recombined` moves, so no
    reader keeps the row it decoded before (`row_of`)."""
    if not clusters:
        return
    rows = await conn.fetch(
        "SELECT template_id, meta::text AS meta, body::text AS body FROM template_catalogue"
        " WHERE cluster_facts AND meta->>'clusterId' = ANY($1::text[])"
        " AND NOT template_id = ANY($2::uuid[])",
        [str(c) for c in sorted(clusters)],
        list(folded),
    )
    if not rows:
        return
    bodies = {r["template_id"]: (_decode_meta(r["meta"]), _decode_body(r["body"])) for r in rows}
    states = await _asset_states(conn, {v for _, b in bodies.values() for v in b.asset_versions})
    facts = await template_facts.of_clusters(conn, clusters)
    combined = {
        t: _combine_with(body, states, template_facts.of(facts, meta.cluster_id))
        for t, (meta, body) in bodies.items()
    }
    await conn.execute(
        "UPDATE template_catalogue AS t SET combined = u.combined,"
        " cluster_facts = u.cluster_facts, recombined = t.recombined + 1"
        " FROM jsonb_to_recordset($1::jsonb) AS u(template_id uuid, combined jsonb,"
        "   cluster_facts bool)"
        " WHERE t.template_id = u.template_id",
        _encode(
            [
                {"template_id": t, "combined": c, "cluster_facts": template_facts.rests_on(c)}
                for t, c in combined.items()
            ]
        ).decode(),
    )


class _Upserted(msgspec.Struct, frozen=True, kw_only=True):
    """A row of the catalogue as the upsert takes it (its JSON member names are the columns')."""

    template_id: UUID
    name: str
    scope_kind: str
    scope_id: str
    meta: TemplateMeta
    body: StoredBody
    asset_ids: str
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str
    version: int
    combined: Combined
    cluster_facts: bool


def _array_literal(ids: Iterable[UUID]) -> str:
    """A row's ids as one array literal: unnest takes arrays of one dimension only, and a
    template's asset ids, one array each, differ in length. (Worked out here rather than from
    the body in SQL: that took a subquery a row.)"""
    return "{" + ",".join(map(str, ids)) + "}"


_TEMPLATE_EVENTS: Final = (
    TemplateCreated,
    TemplateUpdated,
    TemplateLinkedAssetUpdated,
    TemplateDeleted,
)


# The streams of the events above, of the assets' (whose states it keeps) and of its clusters'
# facts: no other event changes the read model.
STREAMS: Final = frozenset(
    stream_type_of(event_tag(event_type))
    for event_type in (*_TEMPLATE_EVENTS, *typing.get_args(AssetEvent), *template_facts.EVENTS)
)


async def apply_batch(conn: Executor, batch: Sequence[RecordedEvent]) -> None:
    """Fold a batch in, safe to run twice (rows carry their versions, asset states and facts are
    written once): asset states and cluster facts first (a template event's asset versions come
    before it), then the templates, then those resting on facts that moved (`_recombine`)."""
    assets: list[RecordedEvent] = []
    templates: list[RecordedEvent] = []
    facts: list[RecordedEvent] = []
    for recorded in batch:  # one pass, templates' first: most events are theirs
        if isinstance(recorded.event, _TEMPLATE_EVENTS):
            templates.append(recorded)
        elif asset_rules.is_asset_event(recorded.event):
            assets.append(recorded)
        elif isinstance(recorded.event, template_facts.EVENTS):
            facts.append(recorded)
    await _record_assets(conn, assets)
    clusters = await template_facts.record(conn, facts)
    folded = await _fold_templates(conn, templates)
    await _recombine(conn, clusters, folded)


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in: a batch of one."""
    await apply_batch(conn, [recorded])


def _combine_with(
    body: StoredBody, states: dict[tuple[UUID, int], Asset], facts: ClusterFacts
) -> Combined:
    """The body combined with the assets at the versions it records (gone: absent) on its
    cluster's `facts`, without the master of `masterSpecSameAsWorker`: that copy is made when the
    row is read (row_of), not stored with every row (it was a third of a row's bytes)."""
    return combine(
        _template_body(body),
        _kept(body.asset_versions, states),
        copy_master=False,
        cluster=facts,
    )


def _kept(
    versions: Iterable[AssetVersion], states: dict[tuple[UUID, int], Asset]
) -> dict[UUID, Asset]:
    """The assets at these versions, by id (gone: absent)."""
    return {v.asset_id: states[key] for v in versions if (key := (v.asset_id, v.version)) in states}


COLUMNS: Final = """template_id, meta::text AS meta, body::text AS body, created_at, created_by,
    updated_at, updated_by, version, combined::text AS combined, recombined, tableoid"""


# Rows decoded lately, bounded, per process: a change to a row moves its version (the fan-out's
# too) or its `recombined` (its cluster's facts), a rebuild its table; the rows are frozen all the
# way down, so a read of one decoded before takes that decoding again.
_DECODED: Final[Bounded[RowKey, TemplateRow]] = Bounded(4096)


def row_of(record: asyncpg.Record) -> TemplateRow:
    key = (record["template_id"], record["version"], record["recombined"], record["tableoid"])
    if (known := _DECODED.get(key)) is None:
        known = _decoded(record)
        _DECODED.put(key, known)
    return known


def _decoded(record: asyncpg.Record) -> TemplateRow:
    body = _decode_body(record["body"])
    meta = _decode_meta(record["meta"])
    template = Template(
        id=record["template_id"],
        meta=meta,
        body=_template_body(body),
        asset_versions=body.asset_versions,
        version=record["version"],
    )
    combined = _decode_combined(record["combined"])
    if body.master_spec_same_as_worker and combined.master is None:
        # Stored without the master, which is the worker spec's copy (_combine_with).
        combined = msgspec.structs.replace(combined, master=master_of(combined.spec))
    return TemplateRow(
        template=template,
        combined=combined,
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
    )


def one_by_id(placeholder: str) -> str:
    """The query of one row by its id, given as `placeholder` ($1, or later in a larger
    statement); `found` tells a row from the NULLs of an outer join that found none."""
    return f"SELECT {COLUMNS} FROM template_catalogue WHERE template_id = {placeholder}"


def found(record: asyncpg.Record) -> TemplateRow | None:
    return None if record["template_id"] is None else row_of(record)


def decoded_before(key: RowKey) -> TemplateRow | None:
    """The row of this key if this process decoded it lately."""
    return _DECODED.get(key)


async def by_ids(conn: Executor, template_ids: list[UUID]) -> dict[UUID, TemplateRow]:
    records = await conn.fetch(
        f"SELECT {COLUMNS} FROM template_catalogue WHERE template_id = ANY($1::uuid[])",
        template_ids,
    )
    return {record["template_id"]: row_of(record) for record in records}


async def names_in(
    conn: Executor, template_ids: list[UUID], scopes: Iterable[ScopeRef]
) -> dict[UUID, str]:
    """The names of those templates that are in `scopes`."""
    records = await conn.fetch(
        f"SELECT template_id, name FROM template_catalogue"
        f" WHERE template_id = ANY($1::uuid[]) AND {IN_SCOPES}",
        template_ids,
        *scope_columns(scopes),
    )
    return {record["template_id"]: record["name"] for record in records}


async def get_template(conn: Executor, template_id: UUID) -> TemplateRow | None:
    row = await conn.fetchrow(one_by_id("$1"), template_id)
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
        # `&&` (overlap), which the asset ids' GIN index serves: the templates using the
        # assets are found, not every template of the scopes read.
        "SELECT a.asset_id, t.template_id, t.name FROM template_catalogue t"
        " CROSS JOIN LATERAL unnest(t.asset_ids) AS a(asset_id)"
        f" WHERE t.asset_ids && $1::uuid[] AND a.asset_id = ANY($1::uuid[]) AND {IN_SCOPES}"
        " ORDER BY t.name",
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
        # `@>`, which the asset ids' GIN index serves (`= ANY` would read every row).
        f" WHERE asset_ids @> ARRAY[$1::uuid] AND {IN_SCOPES} ORDER BY name",
        asset_id,
        *scope_columns(scopes),
    )
    return [row_of(r) for r in rows]


async def templates_in(conn: Executor, scopes: Iterable[ScopeRef]) -> list[TemplateRow]:
    """The templates of these scopes, by name."""
    rows = await conn.fetch(
        # IN_SCOPES takes the scopes as $2 and $3; $1 stands in for the others' first argument.
        f"SELECT {COLUMNS} FROM template_catalogue WHERE $1::int IS NULL AND {IN_SCOPES}"
        " ORDER BY name, template_id",
        None,
        *scope_columns(scopes),
    )
    return [row_of(r) for r in rows]


async def combined_under(
    conn: Executor,
    rows: Sequence[TemplateRow],
    worker_defaults: Mapping[str, Any],
    master_defaults: Mapping[str, Any],
) -> list[Combined]:
    """Each row's combined specs with a project's policy defaults beneath them (what a workload
    of that project would run): from the asset states the read model keeps, one query for the
    page, no event stream."""
    states = await _asset_states(conn, [v for row in rows for v in row.template.asset_versions])
    return [
        combine(
            row.template.body,
            _kept(row.template.asset_versions, states),
            worker_defaults=worker_defaults,
            master_defaults=master_defaults,
        )
        for row in rows
    ]
