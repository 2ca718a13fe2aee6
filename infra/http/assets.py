"""Environment and compute-resource assets in Run:ai's shapes (docs/api/assets.md): writes answer
202 with the asset as written; reads, from the asset catalogue, what the caller's grants reach.
Also: domain/assets.py, services/assets.py."""

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Final
from uuid import UUID

from litestar import delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody
from litestar.types import Guard

from domain.events import EventMetadata
from domain.specs import ComputeSpec, EnvironmentSpec
from infra.http.accepted import Accepted
from infra.http.adapters import Adapters
from infra.http.asset_actions import (
    create_from,
    delete_from,
    one_visible,
    update_from,
    usage_of,
    visible_rows,
    written,
)
from infra.http.asset_schemas import (
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
    guarded,
)
from projections.asset_catalogue import AssetFilter, AssetRow
from services import assets
from services.ports.event_store import StreamLoader

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
    created = await create_from(request, data.meta, data.spec, adapters.streams, adapters.names)
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
    row = await update_from(
        request, asset_id, data.meta, data.spec, adapters.streams, adapters.names
    )
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
    created = await create_from(
        request, data.meta, data.spec or ComputeSpec(), adapters.streams, adapters.names
    )
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
    return _compute(
        await update_from(request, asset_id, data.meta, spec, adapters.streams, adapters.names)
    )


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


def _environment(row: AssetRow, usage: Usage = None) -> EnvironmentAsset:
    assert isinstance(row.spec, EnvironmentSpec)
    return EnvironmentAsset(meta=asset_meta(row), spec=row.spec, used_by=used_by(row, usage))


def _compute(row: AssetRow, usage: Usage = None) -> ComputeAsset:
    assert isinstance(row.spec, ComputeSpec)
    return ComputeAsset(meta=asset_meta(row), spec=row.spec, used_by=used_by(row, usage))
