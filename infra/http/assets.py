"""Environment and compute-resource assets in Run:ai's shapes (`/api/v1/asset/environment`,
`/api/v1/asset/compute`): create and update answer 202 with the asset as written; lists and gets
come from the asset catalogue read model, limited to the scopes the caller's grants reach.

Assets, layer by layer: domain/assets.py the rules, services/assets.py the use cases,
infra/http/assets.py the HTTP routes.
"""

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Final
from uuid import UUID

from litestar import delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody
from litestar.types import Guard

from domain import assets as asset_rules
from domain.assets import Asset, AssetNotFoundError, AssetSpec
from domain.commands import CreateAsset, DeleteAsset, UpdateAsset
from domain.credentials import Credential
from domain.events import EventMetadata
from domain.registries import Registry
from domain.specs import ComputeSpec, EnvironmentSpec
from domain.values import AssetKind, ScopeRef
from infra.http.accepted import Accepted
from infra.http.adapters import Adapters
from infra.http.asset_schemas import (
    AssetCreationMeta,
    AssetUpdateMeta,
    ComputeAsset,
    ComputeCreationRequest,
    ComputeListResponse,
    ComputeUpdateRequest,
    EnvironmentAsset,
    EnvironmentCreationRequest,
    EnvironmentListResponse,
    EnvironmentUpdateRequest,
    Usage,
    UsageInfo,
    asset_meta,
    used_by,
)
from infra.http.callers import (
    Caller,
    actor,
    creation_id,
    guard_reads,
    guarded,
    seen_scopes,
    viewer,
)
from projections.asset_catalogue import AssetFilter, AssetRow
from projections.queries import Reads
from projections.queries import asset_reads as queries
from services import assets
from services.errors import InvalidRequestError
from services.ports.event_store import EventStore, StreamLoader
from services.stamps import Stamped


async def usage_of(request: Caller, reads: Reads, rows: list[AssetRow], wanted: bool) -> Usage:
    """With `usageInfo`, which templates use each of these assets (one query): only those the
    caller may see, as everywhere (a tenant asset is used in scopes a caller may not know)."""
    if not wanted:
        return None
    seen = await seen_scopes(request)
    return await queries.usage(reads, [row.asset_id for row in rows], seen)


# A use case's check that the actor may see the thing of a kind (services/assets.py
# `require_visible`, and the credentials' and registries').
KindCheck = Callable[[str, UUID, EventMetadata, StreamLoader], Awaitable[None]]


def visible_asset(kind: str, check: KindCheck = assets.require_visible) -> Guard:
    """A PUT's guard: an asset of this kind that the caller may not see is a 404 before its
    body is read (a credential's or registry's, with their use cases' `require_visible`)."""
    return guarded(partial(check, kind), param="asset_id")


@post("/api/v1/asset/environment", status_code=202, tags=["Environment"])
async def create_environment(
    request: Caller,
    data: JSONBody[EnvironmentCreationRequest],
    adapters: NamedDependency[Adapters],
) -> EnvironmentAsset:
    created = await create_from(request, data.meta, data.spec, adapters.streams)
    return _environment(written(created))


@get("/api/v1/asset/environment", tags=["Environment"])
async def list_environments(
    request: Caller,
    asset_filter: NamedDependency[AssetFilter],
    adapters: NamedDependency[Adapters],
    usage_info: UsageInfo = False,
) -> EnvironmentListResponse:
    rows = await visible_rows(request, ("environment",), asset_filter, adapters.reads)
    usage = await usage_of(request, adapters.reads, rows, usage_info)
    return EnvironmentListResponse([_environment(row, usage) for row in rows])


@get("/api/v1/asset/environment/{asset_id:uuid}", tags=["Environment"])
async def get_environment(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    usage_info: UsageInfo = False,
) -> EnvironmentAsset:
    row = await one_visible(request, "environment", asset_id, adapters.reads)
    return _environment(
        row,
        await usage_of(request, adapters.reads, [row], usage_info),
    )


@put(
    "/api/v1/asset/environment/{asset_id:uuid}",
    status_code=202,
    tags=["Environment"],
    guards=[visible_asset("environment")],
)
async def update_environment(
    request: Caller,
    asset_id: FromPath[UUID],
    data: JSONBody[EnvironmentUpdateRequest],
    adapters: NamedDependency[Adapters],
) -> EnvironmentAsset:
    row = await update_from(request, asset_id, data.meta, data.spec, adapters.streams)
    return _environment(row)


@delete("/api/v1/asset/environment/{asset_id:uuid}", status_code=202, tags=["Environment"])
async def delete_environment(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> Accepted:
    await delete_from(request, "environment", asset_id, adapters.streams)
    return Accepted()


@post("/api/v1/asset/compute", status_code=202, tags=["Compute"])
async def create_compute(
    request: Caller,
    data: JSONBody[ComputeCreationRequest],
    adapters: NamedDependency[Adapters],
) -> ComputeAsset:
    created = await create_from(request, data.meta, data.spec or ComputeSpec(), adapters.streams)
    return _compute(written(created))


@get("/api/v1/asset/compute", tags=["Compute"])
async def list_computes(
    request: Caller,
    asset_filter: NamedDependency[AssetFilter],
    adapters: NamedDependency[Adapters],
    usage_info: UsageInfo = False,
) -> ComputeListResponse:
    rows = await visible_rows(request, ("compute",), asset_filter, adapters.reads)
    usage = await usage_of(request, adapters.reads, rows, usage_info)
    return ComputeListResponse([_compute(row, usage) for row in rows])


@get("/api/v1/asset/compute/{asset_id:uuid}", tags=["Compute"])
async def get_compute(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    usage_info: UsageInfo = False,
) -> ComputeAsset:
    row = await one_visible(request, "compute", asset_id, adapters.reads)
    return _compute(
        row,
        await usage_of(request, adapters.reads, [row], usage_info),
    )


@put(
    "/api/v1/asset/compute/{asset_id:uuid}",
    status_code=202,
    tags=["Compute"],
    guards=[visible_asset("compute")],
)
async def update_compute(
    request: Caller,
    asset_id: FromPath[UUID],
    data: JSONBody[ComputeUpdateRequest],
    adapters: NamedDependency[Adapters],
) -> ComputeAsset:
    spec = data.spec or ComputeSpec()
    return _compute(await update_from(request, asset_id, data.meta, spec, adapters.streams))


@delete("/api/v1/asset/compute/{asset_id:uuid}", status_code=202, tags=["Compute"])
async def delete_compute(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> Accepted:
    await delete_from(request, "compute", asset_id, adapters.streams)
    return Accepted()


ASSET_ROUTES: Final = (
    create_environment,
    list_environments,
    get_environment,
    update_environment,
    delete_environment,
    create_compute,
    list_computes,
    get_compute,
    update_compute,
    delete_compute,
)


async def create_from(
    request: Caller, meta: AssetCreationMeta, spec: AssetSpec, streams: EventStore
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
    return await assets.create_asset(command, streams=streams)


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
    return written(await assets.update_asset(command, streams=streams, reads=guard_reads(request)))


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


def _environment(row: AssetRow, usage: Usage = None) -> EnvironmentAsset:
    assert isinstance(row.spec, EnvironmentSpec)
    return EnvironmentAsset(meta=asset_meta(row), spec=row.spec, used_by=used_by(row, usage))


def _compute(row: AssetRow, usage: Usage = None) -> ComputeAsset:
    assert isinstance(row.spec, ComputeSpec)
    return ComputeAsset(meta=asset_meta(row), spec=row.spec, used_by=used_by(row, usage))
