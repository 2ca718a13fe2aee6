"""Data volumes in Run:ai's shapes (docs/api/assets.md; shared scopes at runapy's `/shared-scopes`
too): writes answer the volume as written, reads what the caller's grants reach. Also:
domain/data_volumes.py, services/data_volumes.py, projections/data_volume_catalogue.py."""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Annotated, Final, Literal
from uuid import UUID

import msgspec
from litestar import delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter
from msgspec import Meta

from domain import data_volumes
from domain.assets import AssetNotFoundError
from domain.commands import (
    CreateDataVolume,
    DeleteDataVolume,
    DescribeDataVolume,
    ShareDataVolume,
)
from domain.data_volumes import DataVolume
from domain.name_rules import DATA_VOLUME
from domain.specs import SharedScope
from domain.values import ScopeRef
from infra.http.adapters import Adapters
from infra.http.asset_schemas import RequestBody
from infra.http.callers import Caller, actor, creation_id, guarded, visibility
from infra.http.callers import viewer as viewer_of
from infra.http.lists import Count, FilterBy, Search, conditions_of
from infra.http.openapi_document import NOT_NEGATIVE
from projections.data_volume_catalogue import DataVolumeRow, SharedRow
from projections.queries import data_volume_reads as read
from projections.queries import org_unit_reads as unit_names
from services import data_volumes as use_cases
from services import org_units as org_unit_use_cases
from services.stamps import Stamped

PATH: Final = "/api/v1/datavolumes"
ONE: Final = f"{PATH}/{{datavolume_id:uuid}}"
SHARED: Final = f"{ONE}/sharedScopes"
# Where runapy asks for them (it spells every path's underscores as dashes); not documented.
SHARED_AS_RUNAPY: Final = f"{ONE}/shared-scopes"
TAGS: Final = ["Datavolumes"]

Name = Annotated[str, Meta(max_length=DATA_VOLUME.max_length, pattern=DATA_VOLUME.pattern)]
Description = Annotated[str, Meta(max_length=data_volumes.DESCRIPTION_MAX)]
ScopeType = Literal["cluster", "department", "project"]


class CreationFields(RequestBody, frozen=True, kw_only=True):
    name: Name
    description: Description | None = None
    origin_pvc_name: str
    project_id: str
    should_delete_original_volume: bool = False
    use_original_volume: bool | None = True


class PatchFields(RequestBody, frozen=True, kw_only=True):
    description: Description | None = None  # none: the description stays


class SharedScopeBase(RequestBody, frozen=True, kw_only=True):
    scope_type: ScopeType
    scope_id: str


Scopes = Annotated[list[SharedScopeBase], Meta(max_length=data_volumes.SHARED_MAX)]


class SharedScopesPatch(RequestBody, frozen=True, kw_only=True):
    add: Scopes | None = None
    remove: Scopes | None = None


class Shown(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """Response structs: camelCase, unset fields left out."""


class Status(msgspec.Struct, frozen=True, kw_only=True):
    phase: str = read.PHASE  # shown, default or not


class SharedScopeShown(Shown, frozen=True, kw_only=True):
    scope_type: str
    scope_id: str
    scope_name: str
    created_at: datetime
    created_by: str


class Datavolume(Shown, frozen=True, kw_only=True):
    """Run:ai's Datavolume; without shared scopes (empty, so left out) it is its
    DatavolumeNoSharedScopes, as lists and a PATCH answer."""

    id: UUID
    name: str
    description: str | None = None
    origin_pvc_name: str
    project_id: str
    should_delete_original_volume: bool = False
    use_original_volume: bool
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str
    project_name: str
    department_id: str | None = None
    cluster_id: UUID
    status: Status
    shared_scopes: list[SharedScopeShown] = []


class DatavolumeList(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    datavolumes: list[Datavolume]
    next: int | None = None


RequestTypeParam = Annotated[read.RequestType, QueryParameter(name="requestType")]
UsableIn = Annotated[str | None, QueryParameter(name="usableInProjectId")]


# A change to a data volume the caller may not see is a 404 before its body is read.
_MANAGED: Final = guarded(use_cases.require_visible, param="datavolume_id")


@post(PATH, status_code=201, tags=TAGS, operation_id="create_datavolume")
async def create(
    request: Caller, data: JSONBody[CreationFields], adapters: NamedDependency[Adapters]
) -> Datavolume:
    datavolume_id, keyed = creation_id(request, "datavolume")
    command = CreateDataVolume(
        datavolume_id=datavolume_id,
        keyed=keyed,
        project_id=data.project_id,
        name=data.name,
        description=data.description,
        origin_pvc_name=data.origin_pvc_name,
        use_original_volume=data.use_original_volume is not False,
        should_delete_original_volume=data.should_delete_original_volume,
        metadata=actor(request),
    )
    async with adapters.streams.session() as session:
        created = await use_cases.create_data_volume(command, streams=session)
    return await _shown_written(created, (), adapters)


@get(PATH, tags=TAGS, operation_id="get_datavolumes")
async def list_all(
    request: Caller,
    adapters: NamedDependency[Adapters],
    request_type: RequestTypeParam,
    usable_in_project_id: UsableIn = None,
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    sort_by: Annotated[read.SortField | None, QueryParameter(name="sortBy")] = None,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    filter_by: FilterBy = None,
    search: Search = None,
) -> DatavolumeList:
    viewer = await viewer_of(request)
    listed, more = await read.page(
        adapters.reads,
        viewer,
        request_type,
        usable_in_project_id,
        conditions_of(read.GRAMMAR, filter_by),
        search=search,
        sort_by=sort_by,
        descending=sort_order == "desc",
        offset=offset,
        limit=limit,
    )
    return DatavolumeList(
        datavolumes=[_shown(one.row, one.project_name) for one in listed],
        next=offset + limit if more else None,
    )


@get(f"{PATH}/count", tags=TAGS, operation_id="count_datavolumes")
async def count(
    request: Caller,
    adapters: NamedDependency[Adapters],
    request_type: RequestTypeParam,
    usable_in_project_id: UsableIn = None,
    filter_by: FilterBy = None,
    search: Search = None,
) -> Count:
    """How many data volumes the list shows for the same parameters."""
    viewer = await viewer_of(request)
    conditions = conditions_of(read.GRAMMAR, filter_by)
    found = await read.count(
        adapters.reads, viewer, request_type, usable_in_project_id, conditions, search=search
    )
    return Count(found)


@get(f"{PATH}/name-availability", status_code=204, tags=TAGS)
async def name_availability(
    request: Caller,
    adapters: NamedDependency[Adapters],
    data_name: Annotated[str, QueryParameter(name="dataName", min_length=1)],
    cluster_id: Annotated[UUID, QueryParameter(name="clusterId")],
) -> None:
    """204 when no data volume of the cluster holds the name, 409 when one does. A cluster the
    caller may not see is answered as one that does not exist."""
    await use_cases.check_name_available(
        cluster_id,
        data_name,
        actor(request),
        streams=adapters.streams,
        holder=adapters.name_holder,
    )


@get(ONE, tags=TAGS, operation_id="get_datavolume")
async def get_one(
    request: Caller, datavolume_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Datavolume:
    row, seen = await _visible(request, datavolume_id, adapters)
    names = await _names(adapters, [read.origin(row), *_seen_shares(row, seen)])
    return _with_shares(row, names, seen)


@patch(ONE, tags=TAGS, operation_id="patch_datavolume", guards=[_MANAGED])
async def update(
    request: Caller,
    datavolume_id: FromPath[UUID],
    data: JSONBody[PatchFields],
    adapters: NamedDependency[Adapters],
) -> Datavolume:
    command = DescribeDataVolume(
        datavolume_id=datavolume_id, description=data.description, metadata=actor(request)
    )
    async with adapters.streams.session() as session:
        described = await use_cases.describe_data_volume(command, streams=session)
    return await _shown_written(described, (), adapters)


@delete(ONE, status_code=204, tags=TAGS, operation_id="delete_datavolume")
async def remove(
    request: Caller, datavolume_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> None:
    command = DeleteDataVolume(datavolume_id=datavolume_id, metadata=actor(request))
    async with adapters.streams.session() as session:
        await use_cases.delete_data_volume(command, streams=session)


@get(SHARED, tags=TAGS, operation_id="get_datavolume_shared_scopes")
async def shared_scopes(
    request: Caller, datavolume_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> list[SharedScopeShown]:
    """The scopes it is shared with that the caller may see."""
    return await _shared_scopes(request, datavolume_id, adapters)


async def _shared_scopes(
    request: Caller, datavolume_id: UUID, adapters: Adapters
) -> list[SharedScopeShown]:
    row, seen = await _visible(request, datavolume_id, adapters)
    shares = _seen_shares(row, seen)
    return _shares(row.shared_scopes, await _names(adapters, shares), seen)


@patch(SHARED, tags=TAGS, operation_id="patch_datavolume_shared_scopes", guards=[_MANAGED])
async def share(
    request: Caller,
    datavolume_id: FromPath[UUID],
    data: JSONBody[SharedScopesPatch],
    adapters: NamedDependency[Adapters],
) -> list[SharedScopeShown]:
    """Share with the scopes of `add`, no longer with those of `remove`; the scopes it is then
    shared with that the caller may see."""
    return await _share(request, datavolume_id, data, adapters)


async def _share(
    request: Caller, datavolume_id: UUID, data: SharedScopesPatch, adapters: Adapters
) -> list[SharedScopeShown]:
    command = ShareDataVolume(
        datavolume_id=datavolume_id,
        add=tuple(_scope(s) for s in data.add or ()),
        remove=tuple(_scope(s) for s in data.remove or ()),
        metadata=actor(request),
    )
    async with adapters.streams.session() as session:
        shared = await use_cases.share_data_volume(command, streams=session)
    rows = tuple(
        SharedRow(
            scope_type=scope.scope_type,
            scope_id=scope.scope_id,
            created_at=written.at,
            created_by=written.by,
        )
        for scope, written in shared
    )
    seen, _ = await visibility(request)
    refs = [ScopeRef(r.scope_type, r.scope_id) for r in rows]  # type: ignore[arg-type]
    return _shares(rows, await _names(adapters, refs, written=True), seen)


@get(SHARED_AS_RUNAPY, include_in_schema=False)
async def shared_scopes_as_runapy(
    request: Caller, datavolume_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> list[SharedScopeShown]:
    return await _shared_scopes(request, datavolume_id, adapters)


@patch(SHARED_AS_RUNAPY, include_in_schema=False, guards=[_MANAGED])
async def share_as_runapy(
    request: Caller,
    datavolume_id: FromPath[UUID],
    data: JSONBody[SharedScopesPatch],
    adapters: NamedDependency[Adapters],
) -> list[SharedScopeShown]:
    return await _share(request, datavolume_id, data, adapters)


DATA_VOLUME_ROUTES: Final = (
    create, list_all, count, name_availability, get_one, update, remove, shared_scopes, share,
    shared_scopes_as_runapy, share_as_runapy,
)  # fmt: skip


def _scope(given: SharedScopeBase) -> SharedScope:
    return SharedScope(scope_type=given.scope_type, scope_id=given.scope_id)


async def _visible(
    request: Caller, datavolume_id: UUID, adapters: Adapters
) -> tuple[DataVolumeRow, frozenset[ScopeRef]]:
    """One data volume the caller may see; unknown and out of sight are one 404."""
    seen, _ = await visibility(request)
    row = await read.one(adapters.reads, datavolume_id)
    if row is None or not read.visible(row, seen):
        raise AssetNotFoundError(data_volumes.KIND, datavolume_id)
    return row, seen


def _seen_shares(row: DataVolumeRow, seen: frozenset[ScopeRef]) -> list[ScopeRef]:
    return [ref for ref in read.shared_refs(row) if ref in seen]


async def _names(
    adapters: Adapters, refs: Sequence[ScopeRef], *, written: bool = False
) -> dict[ScopeRef, str]:
    """The names of these org units, from the read model; for a write's answer (`written`),
    from a unit's own stream when it is too new for the read model, as the answer names what
    the write just found. A read names no unit the read model lacks yet ("")."""
    found = await unit_names.names(adapters.reads, refs)
    for ref in refs:
        if ref not in found:
            found[ref] = (
                await org_unit_use_cases.unit_name(ref, streams=adapters.streams) if written else ""
            )
    return found


def _shares(
    rows: Iterable[SharedRow], names: dict[ScopeRef, str], seen: frozenset[ScopeRef]
) -> list[SharedScopeShown]:
    shown = []
    for row in rows:
        ref = ScopeRef(row.scope_type, row.scope_id)  # type: ignore[arg-type]
        if ref in seen:
            shown.append(
                SharedScopeShown(
                    scope_type=row.scope_type,
                    scope_id=row.scope_id,
                    scope_name=names.get(ref, ""),
                    created_at=row.created_at,
                    created_by=row.created_by,
                )
            )
    return shown


def _shown(
    row: DataVolumeRow, project_name: str, shares: list[SharedScopeShown] | None = None
) -> Datavolume:
    return Datavolume(
        id=row.datavolume_id,
        name=row.name,
        description=row.description,
        origin_pvc_name=row.origin_pvc_name,
        project_id=row.project_id,
        use_original_volume=row.use_original_volume,
        created_at=row.created_at,
        created_by=row.created_by,
        updated_at=row.updated_at,
        updated_by=row.updated_by,
        project_name=project_name,
        department_id=row.department_id,
        cluster_id=row.cluster_id,
        status=Status(),
        shared_scopes=shares or [],
    )


def _with_shares(
    row: DataVolumeRow, names: dict[ScopeRef, str], seen: frozenset[ScopeRef]
) -> Datavolume:
    project_name = names.get(read.origin(row), "")
    return _shown(row, project_name, _shares(row.shared_scopes, names, seen))


async def _shown_written(
    written: Stamped[DataVolume], shared: tuple[SharedRow, ...], adapters: Adapters
) -> Datavolume:
    """The data volume as a write left it, as the catalogue will show it."""
    state, stamps = written.state, written.stamps
    assert state.meta.cluster_id is not None  # a data volume's project is in a cluster
    row = DataVolumeRow(
        datavolume_id=state.id,
        name=state.meta.name,
        description=state.meta.description,
        project_id=str(state.meta.project_id),
        department_id=state.meta.department_id,
        cluster_id=state.meta.cluster_id,
        origin_pvc_name=state.spec.origin_pvc_name,
        use_original_volume=state.spec.use_original_volume,
        shared_scopes=shared,
        created_at=stamps.created.at,
        created_by=stamps.created.by,
        updated_at=stamps.updated.at,
        updated_by=stamps.updated.by,
        version=state.version,
    )
    names = await _names(adapters, [read.origin(row)], written=True)
    return _with_shares(row, names, frozenset())
