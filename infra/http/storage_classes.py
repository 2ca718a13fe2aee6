"""Storage classes in Run:ai's shapes (docs/api/organization.md): a cluster's classes, registered
by its admins (or agent) and listed to whoever sees it; their configurations, which its admins
manage. Also: domain/storage_classes.py, services/storage_classes.py."""

from typing import Annotated, Final, Literal
from uuid import UUID

import msgspec
from litestar import delete, get, patch, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from domain.cluster_specs import StorageClassSpec
from domain.commands import (
    CreateStorageClassConfiguration,
    DeleteStorageClassConfiguration,
    RegisterStorageClass,
    RemoveStorageClass,
    UpdateStorageClassConfiguration,
)
from domain.org_units import OrgUnitNotFoundError, UnknownScopeError
from domain.storage_classes import ConfigurationNotFoundError
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, creation_id, guarded, seen_scopes
from infra.http.lists import FilterBy, conditions_of
from infra.http.openapi_document import NOT_NEGATIVE
from infra.http.storage_class_actions import (
    Configuration,
    ConfigurationCreation,
    ConfigurationList,
    ConfigurationPatch,
    ConfigurationUpdate,
    StorageClass1,
    StorageClassSpecBody,
    StorageClassV2,
    cluster_classes,
    configuration_shown,
    rules_of,
    v1,
    v2,
)
from projections.queries import storage_class_reads as read
from services import storage_classes as use_cases

CLASSES: Final = "/v1/k8s/clusters/{uuid:uuid}/storage-classes"
ONE_CLASS: Final = f"{CLASSES}/{{storage_class_name:str}}"
CONFIGURATIONS: Final = "/api/v1/storage-class-configuration"
ONE_CONFIGURATION: Final = f"{CONFIGURATIONS}/{{configuration_id:uuid}}"
TAGS: Final = ["Storage Classes"]
CONFIGURATION_TAGS: Final = ["Storage Class Configuration"]
IncludeNone = Annotated[bool, QueryParameter(name="includeNone")]
ClusterId = Annotated[UUID, QueryParameter(name="clusterId")]

# A change to a configuration of a cluster the caller may not see is a 404 before its body.
_MANAGED: Final = guarded(use_cases.require_visible, param="configuration_id")


class StorageClassNames(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    storage_classes: list[str]


class ItemsV1(msgspec.Struct, frozen=True):
    items: list[StorageClass1]


class ItemsV2(msgspec.Struct, frozen=True):
    items: list[StorageClassV2]


@put(ONE_CLASS, tags=TAGS, operation_id="register_storage_class")
async def register(
    request: Caller,
    uuid: FromPath[UUID],
    storage_class_name: FromPath[str],
    data: JSONBody[StorageClassSpecBody],
    adapters: NamedDependency[Adapters],
) -> StorageClassV2:
    """The cluster has this class, as sent (anew, or changed); answered as the v2 list shows it."""
    spec = StorageClassSpec(**msgspec.structs.asdict(data))
    command = RegisterStorageClass(
        cluster_id=uuid, name=storage_class_name, spec=spec, metadata=actor(request)
    )
    async with adapters.streams.session() as session:
        done = await use_cases.register_storage_class(command, streams=session)
    state = done.state
    return StorageClassV2(
        cluster_id=state.cluster_id, storage_class_name=state.name, spec=state.spec
    )


@delete(ONE_CLASS, status_code=204, tags=TAGS, operation_id="remove_storage_class")
async def remove(
    request: Caller,
    uuid: FromPath[UUID],
    storage_class_name: FromPath[str],
    adapters: NamedDependency[Adapters],
) -> None:
    command = RemoveStorageClass(cluster_id=uuid, name=storage_class_name, metadata=actor(request))
    async with adapters.streams.session() as session:
        await use_cases.remove_storage_class(command, streams=session)


@get(CLASSES, tags=TAGS, operation_id="V1GetStorageClasses")
async def names_v1(
    request: Caller,
    uuid: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    include_none: IncludeNone = False,
) -> StorageClassNames:
    try:
        found = await cluster_classes(request, adapters, uuid, None, include_none=include_none)
    except UnknownScopeError as exc:
        raise OrgUnitNotFoundError("cluster", str(uuid)) from exc
    return StorageClassNames(storage_classes=[row.name for row in found])


@get("/api/v1/storage-classes", tags=TAGS, operation_id="getStorageClasses")
async def list_v1(
    request: Caller,
    adapters: NamedDependency[Adapters],
    cluster_id: ClusterId,
    name: FromQuery[str | None] = None,
    include_none: IncludeNone = False,
) -> ItemsV1:
    found = await cluster_classes(request, adapters, cluster_id, name, include_none=include_none)
    return ItemsV1([v1(row) for row in found])


@get("/api/v2/storage-classes", tags=TAGS, operation_id="getStorageClassesV2")
async def list_v2(
    request: Caller,
    adapters: NamedDependency[Adapters],
    cluster_id: ClusterId,
    name: FromQuery[str | None] = None,
    include_none: IncludeNone = False,
) -> ItemsV2:
    found = await cluster_classes(request, adapters, cluster_id, name, include_none=include_none)
    return ItemsV2([v2(row) for row in found])


@post(
    CONFIGURATIONS,
    status_code=201,
    tags=CONFIGURATION_TAGS,
    operation_id="create_storage_class_configuration",
)
async def create_configuration(
    request: Caller, data: JSONBody[ConfigurationCreation], adapters: NamedDependency[Adapters]
) -> Configuration:
    configuration_id, keyed = creation_id(request, "storageclassconfig")
    command = CreateStorageClassConfiguration(
        configuration_id=configuration_id,
        keyed=keyed,
        cluster_id=data.scope_id,
        name=data.name,
        rules=rules_of(data.permissions, data.customization),
        metadata=actor(request),
    )
    async with adapters.streams.session() as session:
        created = await use_cases.create_configuration(command, streams=session)
    return configuration_shown(created.state)


@get(CONFIGURATIONS, tags=CONFIGURATION_TAGS, operation_id="list_storage_class_configuration")
async def list_configurations(
    request: Caller,
    adapters: NamedDependency[Adapters],
    filter_by: FilterBy = None,
    sort_by: Annotated[read.Field | None, QueryParameter(name="sortBy")] = None,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
) -> ConfigurationList:
    rows, more = await read.page(
        adapters.reads,
        await seen_scopes(request),
        conditions_of(read.GRAMMAR, filter_by),
        sort_by=sort_by,
        descending=sort_order == "desc",
        offset=offset,
        limit=limit,
    )
    return ConfigurationList(
        storage_class_configurations=[configuration_shown(row) for row in rows],
        next=offset + limit if more else None,
    )


@get(
    ONE_CONFIGURATION,
    tags=CONFIGURATION_TAGS,
    operation_id="get_storage_class_configuration_by_id",
)
async def get_configuration(
    request: Caller, configuration_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> Configuration:
    row = await read.configuration(adapters.reads, configuration_id)
    if row is None or not read.visible(row.cluster_id, await seen_scopes(request)):
        raise ConfigurationNotFoundError(configuration_id)  # unknown or out of sight: one answer
    return configuration_shown(row)


@put(
    ONE_CONFIGURATION,
    tags=CONFIGURATION_TAGS,
    operation_id="update_storage_class_configuration_by_id",
    guards=[_MANAGED],
)
async def replace_configuration(
    request: Caller,
    configuration_id: FromPath[UUID],
    data: JSONBody[ConfigurationUpdate],
    adapters: NamedDependency[Adapters],
) -> Configuration:
    """The configuration's permissions and customization, as sent (what is not sent, unset)."""
    command = UpdateStorageClassConfiguration(
        configuration_id=configuration_id,
        rules=rules_of(data.permissions, data.customization),
        whole=True,
        metadata=actor(request),
    )
    async with adapters.streams.session() as session:
        updated = await use_cases.update_configuration(command, streams=session)
    return configuration_shown(updated.state)


@patch(
    ONE_CONFIGURATION,
    tags=CONFIGURATION_TAGS,
    operation_id="patch_storage_class_configuration_by_id",
    guards=[_MANAGED],
)
async def change_configuration(
    request: Caller,
    configuration_id: FromPath[UUID],
    data: JSONBody[ConfigurationPatch],
    adapters: NamedDependency[Adapters],
) -> Configuration:
    """What is sent replaces the configuration's, member by member; `attributesToRemove` drops
    attributes by key."""
    custom = data.customization
    command = UpdateStorageClassConfiguration(
        configuration_id=configuration_id,
        rules=rules_of(data.permissions, custom),
        whole=False,
        remove_attributes=tuple(custom.attributes_to_remove or ()) if custom else (),
        metadata=actor(request),
    )
    async with adapters.streams.session() as session:
        updated = await use_cases.update_configuration(command, streams=session)
    return configuration_shown(updated.state)


@delete(
    ONE_CONFIGURATION,
    status_code=204,
    tags=CONFIGURATION_TAGS,
    operation_id="delete_storage_class_configuration_by_id",
    guards=[_MANAGED],
)
async def delete_configuration(
    request: Caller, configuration_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> None:
    command = DeleteStorageClassConfiguration(
        configuration_id=configuration_id, metadata=actor(request)
    )
    async with adapters.streams.session() as session:
        await use_cases.delete_configuration(command, streams=session)


STORAGE_CLASS_ROUTES: Final = (
    register, remove, names_v1, list_v1, list_v2, create_configuration, list_configurations,
    get_configuration, replace_configuration, change_configuration, delete_configuration,
)  # fmt: skip
