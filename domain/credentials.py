"""Credentials: shared secrets of a scope. The domain sees which values a request carries but
never keeps them: events hold the public part and a reference to the sealed values, fixed at
creation. Also: services/credentials.py, infra/http/credentials.py."""

from collections.abc import Iterable, Mapping
from typing import Final, assert_never
from uuid import UUID

import msgspec

from domain.assets import (
    AssetExistsError,
    AssetNotFoundError,
    InvalidAssetError,
    check_name,
)
from domain.errors import DomainError, InvalidHistoryError
from domain.events import (
    CredentialCreated,
    CredentialDeleted,
    CredentialEvent,
    CredentialUpdated,
    Event,
)
from domain.specs import CredentialKind, CredentialSpec, SecretRef
from domain.values import AssetMeta

# The values each kind needs when it does not name an existing cluster secret.
REQUIRED_VALUES: Final[Mapping[CredentialKind, tuple[str, ...]]] = {
    "accessKey": ("accessKeyId", "secretAccessKey"),
    "password": ("password",),
    "dockerRegistry": ("password",),
    "genericSecret": (),
    "ngcApiKey": ("ngc_api_key",),
}
PRIVATE_KINDS: Final = ("dockerRegistry", "genericSecret")


class Credential(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    kind: CredentialKind
    meta: AssetMeta
    spec: CredentialSpec
    deleted: bool = False
    version: int = 0


class CredentialInUseError(DomainError):
    slug = "credential-in-use"

    def __init__(self, asset_id: UUID, users: Iterable[str]) -> None:
        names = ", ".join(users)
        super().__init__(f"credential {asset_id} is in use by: {names}")
        self.asset_id = asset_id
        self.users = names


def evolve(state: Credential | None, event: CredentialEvent) -> Credential:
    match event:
        case CredentialCreated():
            return Credential(id=event.asset_id, kind=event.kind, meta=event.meta, spec=event.spec)
        case CredentialUpdated():
            if state is None:
                raise InvalidHistoryError("credential.updated before credential.created")
            meta = msgspec.structs.replace(
                state.meta, name=event.name, description=event.description
            )
            return msgspec.structs.replace(state, meta=meta)
        case CredentialDeleted():
            if state is None:
                raise InvalidHistoryError("credential.deleted before credential.created")
            return msgspec.structs.replace(state, deleted=True)
        case _:
            assert_never(event)


def fold(events: Iterable[Event]) -> Credential | None:
    state: Credential | None = None
    count = 0
    for event in events:
        if not isinstance(event, CredentialCreated | CredentialUpdated | CredentialDeleted):
            raise InvalidHistoryError(f"{type(event).__name__} in a credential stream")
        state = evolve(state, event)
        count += 1
    return None if state is None else msgspec.structs.replace(state, version=count)


def live(state: Credential | None, kind: CredentialKind, asset_id: UUID) -> Credential:
    if state is None or state.deleted or state.kind != kind:
        raise AssetNotFoundError(kind, asset_id)
    return state


def create(
    state: Credential | None,
    asset_id: UUID,
    kind: CredentialKind,
    meta: AssetMeta,
    public: CredentialSpec,
    values: Mapping[str, str | None],
    secret: SecretRef | None,
) -> list[CredentialEvent]:
    """`values` are the request's secret fields by wire name (checked here, never kept);
    `secret` is the reference to them once sealed (None when the request names an existing
    cluster secret instead)."""
    if state is not None:
        raise AssetExistsError(asset_id)
    _check_meta(kind, meta)
    given = {name for name, value in values.items() if value is not None}
    if public.existing_secret_name is not None:
        if kind == "ngcApiKey":
            raise InvalidAssetError(
                "/spec/existingSecretName", "an NGC API key is given as ngc_api_key"
            )
        if given or public.user is not None or public.url is not None:
            field = sorted(given)[0] if given else ("user" if public.user is not None else "url")
            raise InvalidAssetError(f"/spec/{field}", "not together with existingSecretName")
    else:
        for name in REQUIRED_VALUES[kind]:
            if name not in given:
                raise InvalidAssetError(
                    f"/spec/{name}", "required unless existingSecretName is given"
                )
        if kind in ("password", "dockerRegistry") and public.user is None:
            raise InvalidAssetError("/spec/user", "required unless existingSecretName is given")
        if kind == "dockerRegistry" and public.url is None:
            raise InvalidAssetError("/spec/url", "required unless existingSecretName is given")
        if kind == "genericSecret":
            _check_pairs(public.keys or (), given)
    spec = msgspec.structs.replace(public, secret=secret if given else None)
    return [CredentialCreated(asset_id=asset_id, kind=kind, meta=meta, spec=spec)]


def _check_pairs(keys: tuple[str, ...], given: set[str]) -> None:
    if not keys:
        raise InvalidAssetError(
            "/spec/keyValuePairs", "required unless existingSecretName is given"
        )
    seen: set[str] = set()
    for i, key in enumerate(keys):
        if not key:
            raise InvalidAssetError(f"/spec/keyValuePairs/{i}/key", "must not be empty")
        if key in seen:
            raise InvalidAssetError(f"/spec/keyValuePairs/{i}/key", f"{key!r} is given twice")
        if key not in given:
            raise InvalidAssetError(f"/spec/keyValuePairs/{i}/value", "a value is required")
        seen.add(key)


def _check_meta(kind: CredentialKind, meta: AssetMeta) -> None:
    check_name(meta)
    if meta.private and kind not in PRIVATE_KINDS:
        raise InvalidAssetError(
            "/meta/private", "only docker-registry and generic-secret may be private"
        )


def update(
    state: Credential | None,
    kind: CredentialKind,
    asset_id: UUID,
    *,
    name: str,
    description: str | None,
) -> list[CredentialEvent]:
    current = live(state, kind, asset_id)
    _check_meta(kind, msgspec.structs.replace(current.meta, name=name, description=description))
    if (current.meta.name, current.meta.description) == (name, description):
        return []
    return [CredentialUpdated(asset_id=asset_id, name=name, description=description)]


def delete(state: Credential | None, kind: CredentialKind, asset_id: UUID) -> list[CredentialEvent]:
    """A deleted credential is a no-op. Whether something still reads it is decided where the
    deletion is written, in its transaction (CredentialInUseError, `Uses`)."""
    if state is not None and state.deleted and state.kind == kind:
        return []
    live(state, kind, asset_id)
    return [CredentialDeleted(asset_id=asset_id)]
