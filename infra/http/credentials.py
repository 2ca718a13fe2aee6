"""Credential assets in Run:ai's shapes (docs/api/assets.md). Values are write-only: no response,
event, read model or error body carries them, only the public part and the sealing key's id.
Also: domain/credentials.py, services/credentials.py."""

from typing import Annotated, Final, cast
from uuid import UUID

import msgspec
from litestar import delete, get, post, put
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath, JSONBody
from msgspec import Meta

from domain.commands import CreateCredential, DeleteCredential, SecretValues, UpdateCredential
from domain.specs import CredentialKind, CredentialSpec, NonEmpty
from infra.http.accepted import Accepted
from infra.http.adapters import Adapters
from infra.http.asset_actions import (
    one_visible,
    scope_of,
    visible_credentials,
    visible_rows,
    written,
)
from infra.http.asset_schemas import (
    AssetCreationMeta,
    AssetMetaResponse,
    AssetUsageInfo,
    RequestBody,
    UsageInfo,
    asset_meta,
)
from infra.http.assets import visible_asset
from infra.http.callers import Caller, actor, creation_id, guard_reads
from infra.http.openapi_document import DisplayName
from projections.asset_catalogue import AssetFilter, AssetRow
from services import credentials as credential_use_cases
from services.credentials import create_credential, delete_credential, update_credential
from services.errors import InvalidRequestError

NgcApiKey = Annotated[str, Meta(pattern=r"^[-._A-Za-z0-9]+$")]


class KeyValuePair(RequestBody, frozen=True, kw_only=True):
    key: str
    value: str | None = None


class CredentialCreationSpec(RequestBody, frozen=True, kw_only=True):
    """Every kind's creation fields; which ones a kind takes is checked per kind."""

    existing_secret_name: NonEmpty | None = None
    access_key_id: NonEmpty | None = None
    secret_access_key: NonEmpty | None = None
    user: NonEmpty | None = None
    password: NonEmpty | None = None
    url: NonEmpty | None = None
    key_value_pairs: tuple[KeyValuePair, ...] | None = None
    ngc_api_key: NgcApiKey | None = msgspec.field(default=None, name="ngc_api_key")


class CredentialCreationRequest(RequestBody, frozen=True, kw_only=True):
    meta: AssetCreationMeta
    spec: CredentialCreationSpec


class CredentialUpdateMeta(RequestBody, frozen=True, kw_only=True):
    name: DisplayName | None = None
    description: str | None = None


class CredentialUpdateRequest(RequestBody, frozen=True, kw_only=True):
    meta: CredentialUpdateMeta


class PublicPair(msgspec.Struct, frozen=True):
    key: str


class CredentialSpecResponse(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"
):
    key_id: int
    existing_secret_name: str | None = None
    user: str | None = None
    url: str | None = None
    key_value_pairs: list[PublicPair] | None = None  # keys only: values are write-only


class CredentialAsset(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"
):
    meta: AssetMetaResponse
    spec: CredentialSpecResponse
    used_by: AssetUsageInfo | None = None


class CombinedSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """The combined list's spec: the entry's kind names its one member."""

    access_key: CredentialSpecResponse | None = None
    password: CredentialSpecResponse | None = None
    docker_registry: CredentialSpecResponse | None = None
    generic_secret: CredentialSpecResponse | None = None
    ngc_api_key: CredentialSpecResponse | None = None


class CombinedEntry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    meta: AssetMetaResponse
    spec: CombinedSpec
    used_by: AssetUsageInfo | None = None


class CredentialListResponse(msgspec.Struct, frozen=True):
    entries: list[CredentialAsset]


class CombinedListResponse(msgspec.Struct, frozen=True):
    entries: list[CombinedEntry]


# Which creation fields each kind takes, and which of them are secret values.
_FIELDS: Final[dict[CredentialKind, tuple[str, ...]]] = {
    "accessKey": ("existing_secret_name", "access_key_id", "secret_access_key"),
    "password": ("existing_secret_name", "user", "password"),
    "dockerRegistry": ("existing_secret_name", "user", "password", "url"),
    "genericSecret": ("existing_secret_name", "key_value_pairs"),
    "ngcApiKey": ("ngc_api_key",),
}
_SECRET_FIELDS: Final = {
    "access_key_id": "accessKeyId",
    "secret_access_key": "secretAccessKey",
    "password": "password",
    "ngc_api_key": "ngc_api_key",
}
_SEGMENTS: Final[dict[CredentialKind, tuple[str, int]]] = {
    "accessKey": ("access-key", 202),
    "password": ("password", 202),
    "dockerRegistry": ("docker-registry", 202),
    "genericSecret": ("generic-secret", 204),
    "ngcApiKey": ("ngc-api-key", 204),
}


def _command(
    kind: CredentialKind, request: Caller, data: CredentialCreationRequest
) -> CreateCredential:
    """Translate the wire body: refuse fields of other kinds, and part values from the rest."""
    spec = data.spec
    for field in msgspec.structs.fields(CredentialCreationSpec):
        if getattr(spec, field.name) is not None and field.name not in _FIELDS[kind]:
            raise InvalidRequestError(
                f"/spec/{field.encode_name}", f"not a field of {kind} credentials"
            )
    values: dict[str, str | None] = {
        wire: getattr(spec, name) for name, wire in _SECRET_FIELDS.items() if name in _FIELDS[kind]
    }
    pairs = spec.key_value_pairs or ()
    if kind == "genericSecret":
        values = {pair.key: pair.value for pair in pairs}
    asset_id, keyed = creation_id(request, kind)
    return CreateCredential(
        asset_id=asset_id,
        keyed=keyed,
        kind=kind,
        scope=scope_of(data.meta),
        cluster_id=data.meta.cluster_id,
        name=data.meta.name,
        description=data.meta.description,
        private=bool(data.meta.private),
        public=CredentialSpec(
            existing_secret_name=spec.existing_secret_name,
            user=spec.user,
            url=spec.url,
            keys=tuple(pair.key for pair in pairs) or None,
        ),
        values=SecretValues(values),
        metadata=actor(request),
    )


def _routes(kind: CredentialKind) -> list[HTTPRouteHandler]:
    segment, delete_status = _SEGMENTS[kind]
    path = f"/api/v1/asset/credentials/{segment}"
    tags = ["Credentials"]
    ident = segment.replace("-", "_")

    @post(path, status_code=202, tags=tags, operation_id=f"create_{ident}", name=f"create_{ident}")
    async def create(
        request: Caller,
        data: JSONBody[CredentialCreationRequest],
        adapters: NamedDependency[Adapters],
    ) -> CredentialAsset:
        created = await create_credential(
            _command(kind, request, data), store=adapters.streams, vault=adapters.vault
        )
        return _asset(written(created))

    @get(path, tags=tags, operation_id=f"list_{ident}", name=f"list_{ident}")
    async def list_kind(
        request: Caller,
        adapters: NamedDependency[Adapters],
        usage_info: UsageInfo = False,
    ) -> CredentialListResponse:
        rows = await visible_rows(request, (kind,), AssetFilter(), adapters.reads)
        return CredentialListResponse([_asset(row, usage_info) for row in rows])

    @get(f"{path}/{{asset_id:uuid}}", tags=tags, operation_id=f"get_{ident}", name=f"get_{ident}")
    async def get_one(
        request: Caller,
        asset_id: FromPath[UUID],
        adapters: NamedDependency[Adapters],
        usage_info: UsageInfo = False,
    ) -> CredentialAsset:
        row = await one_visible(request, kind, asset_id, adapters.reads)
        return _asset(row, usage_info)

    @put(
        f"{path}/{{asset_id:uuid}}",
        status_code=202,
        tags=tags,
        operation_id=f"update_{ident}",
        name=f"update_{ident}",
        guards=[visible_asset(kind, credential_use_cases.require_visible)],
    )
    async def update(
        request: Caller,
        asset_id: FromPath[UUID],
        data: JSONBody[CredentialUpdateRequest],
        adapters: NamedDependency[Adapters],
    ) -> CredentialAsset:
        command = UpdateCredential(
            asset_id=asset_id,
            kind=kind,
            name=data.meta.name or None,  # none (or empty): the name stays
            description=data.meta.description,
            metadata=actor(request),
        )
        return _asset(
            written(
                await update_credential(command, store=adapters.streams, reads=guard_reads(request))
            )
        )

    async def remove(
        request: Caller,
        asset_id: FromPath[UUID],
        adapters: NamedDependency[Adapters],
    ) -> None:
        command = DeleteCredential(asset_id=asset_id, kind=kind, metadata=actor(request))
        await delete_credential(command, store=adapters.streams)

    async def remove_accepted(
        request: Caller,
        asset_id: FromPath[UUID],
        adapters: NamedDependency[Adapters],
    ) -> Accepted:
        await remove(request, asset_id, adapters)
        return Accepted()

    # 202 with Run:ai's body, or (generic secrets, NGC keys) 204 with none, as the document has
    # each.
    removal = delete(
        f"{path}/{{asset_id:uuid}}",
        status_code=delete_status,
        tags=tags,
        operation_id=f"delete_{ident}",
        name=f"delete_{ident}",
    )(remove_accepted if delete_status == 202 else remove)

    return [create, list_kind, get_one, update, removal]


@get("/api/v1/asset/credentials", tags=["Credentials"])
async def list_credentials(
    request: Caller,
    adapters: NamedDependency[Adapters],
    usage_info: UsageInfo = False,
) -> CombinedListResponse:
    rows = await visible_credentials(request, adapters.reads)
    entries = []
    for row in rows:
        single = _asset(row, usage_info)
        member = {_member(row.kind): single.spec}
        spec = CombinedSpec(**member)
        entries.append(CombinedEntry(meta=single.meta, spec=spec, used_by=single.used_by))
    return CombinedListResponse(entries)


CREDENTIAL_ROUTES: Final = (
    list_credentials,
    *(handler for kind in _SEGMENTS for handler in _routes(kind)),
)


def _member(kind: str) -> str:
    return {
        "accessKey": "access_key",
        "dockerRegistry": "docker_registry",
        "genericSecret": "generic_secret",
        "ngcApiKey": "ngc_api_key",
    }.get(kind, kind)


def _asset(row: AssetRow, usage_info: bool = False) -> CredentialAsset:
    spec = cast(CredentialSpec, row.spec)
    public = CredentialSpecResponse(
        key_id=spec.secret.key_id if spec.secret is not None else 0,
        existing_secret_name=spec.existing_secret_name,
        user=spec.user,
        url=spec.url,
        key_value_pairs=None if spec.keys is None else [PublicPair(k) for k in spec.keys],
    )
    return CredentialAsset(
        meta=asset_meta(row), spec=public, used_by=AssetUsageInfo() if usage_info else None
    )
