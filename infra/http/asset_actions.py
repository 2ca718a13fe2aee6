"""What a caller's asset request does, shared by the handlers of every asset kind and the
console: Run:ai's bodies to use cases, rows read back as the caller may see them."""

from uuid import UUID

from domain import assets as asset_rules
from domain.assets import Asset, AssetNotFoundError, AssetSpec
from domain.commands import CreateAsset, DeleteAsset, UpdateAsset
from domain.credentials import Credential
from domain.registries import Registry
from domain.values import AssetKind, ScopeRef
from infra.http.asset_schemas import (
    AssetCreationMeta,
    AssetUpdateMeta,
    Usage,
)
from infra.http.callers import (
    Caller,
    actor,
    creation_id,
    guard_reads,
    seen_scopes,
    viewer,
)
from projections.asset_catalogue import CREDENTIAL_KINDS, AssetFilter, AssetRow
from projections.queries import Reads
from projections.queries import asset_reads as queries
from services import assets
from services.errors import InvalidRequestError
from services.ports.event_store import EventStore
from services.ports.name_lookups import Lookups
from services.stamps import Stamped


async def usage_of(request: Caller, reads: Reads, rows: list[AssetRow], wanted: bool) -> Usage:
    """With `usageInfo`, which templates use each of these assets (one query): only those the
    caller may see, as everywhere (a tenant asset is used in scopes a caller may not know)."""
    if not wanted:
        return None
    seen = await seen_scopes(request)
    return await queries.usage(reads, [row.asset_id for row in rows], seen)


async def create_from(
    request: Caller, meta: AssetCreationMeta, spec: AssetSpec, streams: EventStore, names: Lookups
) -> Stamped[Asset]:
    """Create an asset of the spec's kind from Run:ai's creation meta."""
    asset_id, keyed = creation_id(request, asset_rules.kind_of(spec))
    command = CreateAsset(
        asset_id=asset_id,
        keyed=keyed,
        scope=scope_of(meta),
        cluster_id=meta.cluster_id,
        name=meta.name,
        description=meta.description,
        workload_supported_types=meta.workload_supported_types,
        auto_delete=bool(meta.auto_delete),
        private=bool(meta.private),
        spec=spec,
        metadata=actor(request),
    )
    return await assets.create_asset(command, streams=streams, names=names)


def scope_of(meta: AssetCreationMeta) -> ScopeRef:
    """The scope the meta names; the id its kind needs must be there."""
    match meta.scope:
        case "tenant":
            return ScopeRef("tenant")
        case "cluster" if meta.cluster_id is not None:
            return ScopeRef("cluster", str(meta.cluster_id))
        case "department" if meta.department_id is not None:
            return ScopeRef("department", meta.department_id)
        case "project" if meta.project_id is not None:
            return ScopeRef("project", str(meta.project_id))
        case "system":
            raise InvalidRequestError("/meta/scope", "the system scope is for built-in assets")
        case kind:
            field = assets.SCOPE_FIELDS[kind]
            raise InvalidRequestError(field, f"a {kind}-scoped asset needs {field.rsplit('/')[-1]}")


async def update_from(
    request: Caller,
    asset_id: UUID,
    meta: AssetUpdateMeta,
    spec: AssetSpec,
    streams: EventStore,
    names: Lookups,
    *,
    expected_version: int | None = None,
) -> AssetRow:
    """Update an asset from Run:ai's update meta and a spec of its kind (made on the asset at
    `expected_version`, when given); the asset as written."""
    command = UpdateAsset(
        asset_id=asset_id,
        name=meta.name,
        description=meta.description,
        spec=spec,
        expected_version=expected_version,
        metadata=actor(request),
    )
    updated = await assets.update_asset(
        command, streams=streams, names=names, reads=guard_reads(request)
    )
    return written(updated)


async def delete_from(
    request: Caller, kind: AssetKind, asset_id: UUID, streams: EventStore
) -> None:
    """Delete an asset of this kind (refused while a template uses it)."""
    command = DeleteAsset(asset_id=asset_id, kind=kind, metadata=actor(request))
    await assets.delete_asset(command, streams=streams)


async def visible_rows(
    request: Caller, kinds: tuple[str, ...], wanted: AssetFilter, reads: Reads
) -> list[AssetRow]:
    """The assets of these kinds the filter selects and the caller may see, by name."""
    return await queries.selected(reads, kinds, wanted, await viewer(request))


async def one_visible(request: Caller, kind: str, asset_id: UUID, reads: Reads) -> AssetRow:
    """One asset from the catalogue; unknown and out of the caller's sight are one 404."""
    row = await queries.one(reads, kind, asset_id)
    if row is None:
        raise AssetNotFoundError(kind, asset_id)
    if not queries.visible(row, await seen_scopes(request)):
        raise AssetNotFoundError(kind, asset_id)  # existence must not leak
    return row


async def one_now(
    request: Caller, kind: AssetKind, asset_id: UUID, streams: EventStore
) -> AssetRow:
    """One asset as the write side has it now (what a form's change is made on); unknown and
    out of the caller's sight are one 404."""
    return written(await assets.visible_asset(kind, asset_id, actor(request), streams))


def written(stamped: Stamped[Asset] | Stamped[Credential] | Stamped[Registry]) -> AssetRow:
    """The asset (credential, registry) as a write left it, as the catalogue will show it."""
    asset, created, updated = stamped.state, stamped.stamps.created, stamped.stamps.updated
    return AssetRow(
        asset_id=asset.id,
        kind=asset.kind,
        meta=asset.meta,
        spec=asset.spec,
        created_at=created.at,
        created_by=created.by,
        updated_at=updated.at,
        updated_by=updated.by,
        version=asset.version,
    )


async def visible_credentials(request: Caller, reads: Reads) -> list[AssetRow]:
    """Every credential the caller may see, of any kind, by name."""
    return await visible_rows(request, CREDENTIAL_KINDS, AssetFilter(), reads)
