"""Registry assets in Run:ai's shapes (`/api/v1/asset/registries`, docs/api/assets.md), and what a
registry holds, asked of it over the OCI distribution API (infra/oci/); the password is
write-only, shown masked. Also: domain/registries.py, services/registries.py."""

from typing import Annotated, Final, Literal
from uuid import UUID

import msgspec
from litestar import delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from domain import registries
from domain.commands import CreateRegistry, DeleteRegistry, SecretValues, UpdateRegistry
from domain.specs import NonEmpty, RegistrySpec
from infra.http.adapters import Adapters
from infra.http.asset_actions import one_visible, scope_of, visible_rows, written
from infra.http.asset_schemas import (
    AssetCreationMeta,
    AssetMetaResponse,
    AssetUpdateMeta,
    RequestBody,
    asset_meta,
)
from infra.http.assets import visible_asset
from infra.http.callers import Caller, actor, creation_id, guard_reads
from infra.oci.distribution import REPOSITORY, REPOSITORY_MAX, DistributionClient
from infra.oci.logins import Login
from projections.asset_catalogue import AssetFilter, AssetRow
from services import registries as registry_use_cases
from services.registries import create_registry, delete_registry, update_registry

PATH: Final = "/api/v1/asset/registries"
ONE: Final = f"{PATH}/{{asset_id:uuid}}"
TAGS: Final = ["Registry"]
# What a response shows for the password (Run:ai's schema requires one). A PUT sending it back
# keeps the password as it is.
MASKED: Final = "********"


class RegistryCreationSpec(RequestBody, frozen=True, kw_only=True):
    url: NonEmpty
    credential_kind: Literal["password"]
    user: NonEmpty
    password: NonEmpty


class RegistryCreation(RequestBody, frozen=True, kw_only=True):
    meta: AssetCreationMeta
    spec: RegistryCreationSpec


class RegistryUpdateSpec(RequestBody, frozen=True, kw_only=True):
    """What a PUT may change besides the name and description; what it leaves out stays."""

    url: NonEmpty | None = None
    credential_kind: Literal["password"] | None = None
    user: NonEmpty | None = None
    password: NonEmpty | None = None


class RegistryUpdate(RequestBody, frozen=True, kw_only=True):
    meta: AssetUpdateMeta
    spec: RegistryUpdateSpec | None = None  # runapy sends the meta alone


class RegistrySpecShown(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    url: str
    credential_kind: str
    user: str
    password: str = MASKED


class RegistryAsset(msgspec.Struct, frozen=True, kw_only=True):
    meta: AssetMetaResponse
    spec: RegistrySpecShown


class RegistryList(msgspec.Struct, frozen=True):
    entries: list[RegistryAsset]


class RepositoryList(msgspec.Struct, frozen=True):
    repositories: list[str]


class RepositoryTagList(msgspec.Struct, frozen=True):
    name: str
    tags: list[str]


SearchName = Annotated[str | None, QueryParameter(name="searchName")]
Repository = Annotated[str, QueryParameter(pattern=REPOSITORY, max_length=REPOSITORY_MAX)]


@post(PATH, status_code=201, tags=TAGS, operation_id="create_registry")
async def create(
    request: Caller, data: JSONBody[RegistryCreation], adapters: NamedDependency[Adapters]
) -> RegistryAsset:
    asset_id, keyed = creation_id(request, "registry")
    command = CreateRegistry(
        asset_id=asset_id,
        keyed=keyed,
        scope=scope_of(data.meta),
        cluster_id=data.meta.cluster_id,
        name=data.meta.name,
        description=data.meta.description,
        workload_supported_types=data.meta.workload_supported_types,
        private=bool(data.meta.private),
        url=data.spec.url,
        user=data.spec.user,
        password=SecretValues({"password": data.spec.password}),
        metadata=actor(request),
    )
    created = await create_registry(command, store=adapters.streams, vault=adapters.vault)
    return _shown(written(created))


@get(PATH, tags=TAGS, operation_id="list_registries")
async def list_all(
    request: Caller, adapters: NamedDependency[Adapters], name: FromQuery[str | None] = None
) -> RegistryList:
    rows = await visible_rows(request, (registries.KIND,), AssetFilter(name=name), adapters.reads)
    return RegistryList([_shown(row) for row in rows])


@get(ONE, tags=TAGS, operation_id="get_registry_by_id")
async def get_one(
    request: Caller, asset_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> RegistryAsset:
    return _shown(await one_visible(request, registries.KIND, asset_id, adapters.reads))


@put(
    ONE,
    tags=TAGS,
    operation_id="update_registry",
    guards=[visible_asset(registries.KIND, registry_use_cases.require_visible)],
)
async def update(
    request: Caller,
    asset_id: FromPath[UUID],
    data: JSONBody[RegistryUpdate],
    adapters: NamedDependency[Adapters],
) -> RegistryAsset:
    spec = data.spec or RegistryUpdateSpec()
    password = None if spec.password == MASKED else spec.password
    command = UpdateRegistry(
        asset_id=asset_id,
        name=data.meta.name,
        description=data.meta.description,
        url=spec.url,
        user=spec.user,
        password=SecretValues({"password": password}),
        metadata=actor(request),
    )
    return _shown(
        written(
            await update_registry(
                command, store=adapters.streams, vault=adapters.vault, reads=guard_reads(request)
            )
        )
    )


@delete(ONE, status_code=204, tags=TAGS, operation_id="delete_registry")
async def remove(
    request: Caller, asset_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> None:
    command = DeleteRegistry(asset_id=asset_id, metadata=actor(request))
    await delete_registry(command, store=adapters.streams)


@get(f"{ONE}/repositories", tags=TAGS, operation_id="get_repositories")
async def repositories(
    request: Caller,
    asset_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    search_name: SearchName = None,
) -> RepositoryList:
    """The registry's repositories (`GET /v2/_catalog`, every page), those whose name holds
    `searchName` (any case)."""
    client, base, login = await _asking(request, asset_id, adapters)
    return RepositoryList(_matching(await client.repositories(base, login), search_name))


@get(f"{ONE}/repositories/tags", tags=TAGS, operation_id="get_repository_tags")
async def repository_tags(
    request: Caller,
    asset_id: FromPath[UUID],
    repository: Repository,
    adapters: NamedDependency[Adapters],
    search_name: SearchName = None,
) -> RepositoryTagList:
    """One repository's tags (`GET /v2/<repository>/tags/list`, every page), those that hold
    `searchName` (any case)."""
    client, base, login = await _asking(request, asset_id, adapters)
    found = await client.tags(base, repository, login)
    return RepositoryTagList(name=repository, tags=_matching(found, search_name))


REGISTRY_ROUTES: Final = (create, list_all, get_one, update, remove, repositories, repository_tags)


async def _asking(
    request: Caller, asset_id: UUID, adapters: Adapters
) -> tuple[DistributionClient, str, Login]:
    """How to ask the registry the caller may see: a client, where its API is, and its login
    from the vault, which must be the one that registry was given (the vault is written with
    the event, the read model after it)."""
    row = await one_visible(request, registries.KIND, asset_id, adapters.reads)
    assert isinstance(row.spec, RegistrySpec)
    password = await registry_use_cases.password_of(row.asset_id, row.spec, vault=adapters.vault)
    client = DistributionClient(adapters.settings.registries)
    return client, registries.api_base(row.spec.url), Login(row.spec.user, password)


def _matching(names: list[str], search: str | None) -> list[str]:
    if not search:
        return names
    wanted = search.casefold()
    return [name for name in names if wanted in name.casefold()]


def _shown(row: AssetRow) -> RegistryAsset:
    assert isinstance(row.spec, RegistrySpec)
    spec = RegistrySpecShown(
        url=row.spec.url, credential_kind=row.spec.credential_kind, user=row.spec.user
    )
    return RegistryAsset(meta=asset_meta(row), spec=spec)
