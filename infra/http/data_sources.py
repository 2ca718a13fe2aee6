"""Data-source assets in Run:ai's shapes (`/api/v1/asset/datasource/<kind>` and the combined list):
nfs, pvc, s3, git, host-path, config-map and secret volumes. Also: domain/data_sources.py."""

from typing import Any, Final
from uuid import UUID

import msgspec
from litestar import delete, get, post, put
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath, JSONBody

from domain.commands import DeleteAsset
from domain.values import AssetKind
from infra.http.accepted import Accepted
from infra.http.adapters import Adapters
from infra.http.asset_actions import (
    create_from,
    one_visible,
    update_from,
    usage_of,
    visible_rows,
    written,
)
from infra.http.asset_schemas import (
    AssetCreationMeta,
    AssetMetaResponse,
    AssetUpdateMeta,
    AssetUsageInfo,
    RequestBody,
    Usage,
    UsageInfo,
    asset_meta,
    used_by,
)
from infra.http.assets import visible_asset
from infra.http.callers import Caller, actor
from infra.http.data_source_specs import KINDS, spec_as
from projections.asset_catalogue import AssetFilter, AssetRow
from services import assets


class DataSourceCreationRequest(RequestBody, frozen=True, kw_only=True):
    meta: AssetCreationMeta
    spec: dict[str, Any]  # converted to the path's kind


class DataSourceUpdateRequest(RequestBody, frozen=True, kw_only=True):
    meta: AssetUpdateMeta
    spec: dict[str, Any]


class DataSourceAsset(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"
):
    meta: AssetMetaResponse
    spec: dict[str, Any]
    used_by: AssetUsageInfo | None = None


class DataSourceListResponse(msgspec.Struct, frozen=True):
    entries: list[DataSourceAsset]


_MEMBERS: Final[dict[str, str]] = {kind: member for kind, (_, member) in KINDS.items()}


def _wire_spec(row: AssetRow) -> dict[str, Any]:
    spec: dict[str, Any] = msgspec.to_builtins(row.spec)
    spec.pop("kind", None)  # the stored tag; on the wire the path names the kind
    return spec


def _asset(row: AssetRow, usage: Usage = None) -> DataSourceAsset:
    return DataSourceAsset(meta=asset_meta(row), spec=_wire_spec(row), used_by=used_by(row, usage))


def _routes(kind: AssetKind) -> list[HTTPRouteHandler]:
    segment, _ = KINDS[kind]
    path = f"/api/v1/asset/datasource/{segment}"
    tags = ["Datasources"]
    ident = segment.replace("-", "_")

    @post(path, status_code=202, tags=tags, operation_id=f"create_{ident}", name=f"create_{ident}")
    async def create(
        request: Caller,
        data: JSONBody[DataSourceCreationRequest],
        adapters: NamedDependency[Adapters],
    ) -> DataSourceAsset:
        created = await create_from(
            request, data.meta, spec_as(kind, data.spec), adapters.streams, adapters.names
        )
        return _asset(written(created))

    @get(path, tags=tags, operation_id=f"list_{ident}", name=f"list_{ident}")
    async def list_kind(
        request: Caller,
        asset_filter: NamedDependency[AssetFilter],
        adapters: NamedDependency[Adapters],
        usage_info: UsageInfo = False,
    ) -> DataSourceListResponse:
        rows = await visible_rows(request, (kind,), asset_filter, adapters.reads)
        usage = await usage_of(request, adapters.reads, rows, usage_info)
        return DataSourceListResponse([_asset(row, usage) for row in rows])

    @get(f"{path}/{{asset_id:uuid}}", tags=tags, operation_id=f"get_{ident}", name=f"get_{ident}")
    async def get_one(
        request: Caller,
        asset_id: FromPath[UUID],
        adapters: NamedDependency[Adapters],
        usage_info: UsageInfo = False,
    ) -> DataSourceAsset:
        row = await one_visible(request, kind, asset_id, adapters.reads)
        return _asset(
            row,
            await usage_of(request, adapters.reads, [row], usage_info),
        )

    @put(
        f"{path}/{{asset_id:uuid}}",
        status_code=202,
        tags=tags,
        operation_id=f"update_{ident}",
        name=f"update_{ident}",
        guards=[visible_asset(kind)],
    )
    async def update(
        request: Caller,
        asset_id: FromPath[UUID],
        data: JSONBody[DataSourceUpdateRequest],
        adapters: NamedDependency[Adapters],
    ) -> DataSourceAsset:
        spec = spec_as(kind, data.spec)
        return _asset(
            await update_from(request, asset_id, data.meta, spec, adapters.streams, adapters.names)
        )

    @delete(
        f"{path}/{{asset_id:uuid}}",
        status_code=202,
        tags=tags,
        operation_id=f"delete_{ident}",
        name=f"delete_{ident}",
    )
    async def remove(
        request: Caller,
        asset_id: FromPath[UUID],
        adapters: NamedDependency[Adapters],
    ) -> Accepted:
        command = DeleteAsset(asset_id=asset_id, kind=kind, metadata=actor(request))
        await assets.delete_asset(command, streams=adapters.streams)
        return Accepted()

    return [create, list_kind, get_one, update, remove]


class CombinedEntry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    meta: AssetMetaResponse
    spec: dict[str, dict[str, Any]]
    used_by: AssetUsageInfo | None = None


class CombinedListResponse(msgspec.Struct, frozen=True):
    entries: list[CombinedEntry]


@get("/api/v1/asset/datasource", tags=["Datasources"])
async def list_data_sources(
    request: Caller,
    asset_filter: NamedDependency[AssetFilter],
    adapters: NamedDependency[Adapters],
    usage_info: UsageInfo = False,
) -> CombinedListResponse:
    """Every kind in one list; each entry's spec names its kind (Run:ai's member names)."""
    rows = await visible_rows(request, tuple(KINDS), asset_filter, adapters.reads)
    usage = await usage_of(request, adapters.reads, rows, usage_info)
    return CombinedListResponse(
        [
            CombinedEntry(
                meta=asset_meta(row),
                spec={_MEMBERS[row.kind]: _wire_spec(row)},
                used_by=used_by(row, usage),
            )
            for row in rows
        ]
    )


DATA_SOURCE_ROUTES: Final = (
    list_data_sources,
    *(handler for kind in KINDS for handler in _routes(kind)),
)
