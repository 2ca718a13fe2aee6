"""Registries: the container registries a scope's templates pick images from (the guide's "NGC
private registry"), a stream each; the password is never kept, only a reference to the sealed
value. Also: services/registries.py, infra/http/registries.py."""

from collections.abc import Iterable
from typing import Final, assert_never
from urllib.parse import SplitResult, urlsplit
from uuid import UUID

import msgspec

from domain.assets import AssetExistsError, AssetNotFoundError, InvalidAssetError, check_name
from domain.errors import DomainError, InvalidHistoryError
from domain.events import Event, RegistryCreated, RegistryDeleted, RegistryEvent, RegistryUpdated
from domain.specs import RegistrySpec, SecretRef
from domain.values import AssetMeta

KIND: Final = "registry"
URL_MAX: Final = 2048
# A registry's URL may end in the API's own root; the service adds that itself.
_API_ROOT: Final = "/v2"


class Registry(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    meta: AssetMeta
    spec: RegistrySpec
    deleted: bool = False
    version: int = 0

    @property
    def kind(self) -> str:
        return KIND


class RegistryInUseError(DomainError):
    slug = "asset-in-use"

    def __init__(self, asset_id: UUID, users: Iterable[str]) -> None:
        names = ", ".join(users)
        super().__init__(f"registry {asset_id} is in use by: {names}")
        self.asset_id = asset_id
        self.users = names


def evolve(state: Registry | None, event: RegistryEvent) -> Registry:
    match event:
        case RegistryCreated():
            return Registry(id=event.asset_id, meta=event.meta, spec=event.spec)
        case RegistryUpdated():
            if state is None:
                raise InvalidHistoryError("registry.updated before registry.created")
            meta = msgspec.structs.replace(
                state.meta, name=event.name, description=event.description
            )
            return msgspec.structs.replace(state, meta=meta, spec=event.spec)
        case RegistryDeleted():
            if state is None:
                raise InvalidHistoryError("registry.deleted before registry.created")
            return msgspec.structs.replace(state, deleted=True)
        case _:
            assert_never(event)


def fold(events: Iterable[Event]) -> Registry | None:
    state: Registry | None = None
    count = 0
    for event in events:
        if not isinstance(event, RegistryCreated | RegistryUpdated | RegistryDeleted):
            raise InvalidHistoryError(f"{type(event).__name__} in a registry stream")
        state = evolve(state, event)
        count += 1
    return None if state is None else msgspec.structs.replace(state, version=count)


def live(state: Registry | None, asset_id: UUID) -> Registry:
    if state is None or state.deleted:
        raise AssetNotFoundError(KIND, asset_id)
    return state


def create(
    state: Registry | None, asset_id: UUID, meta: AssetMeta, spec: RegistrySpec
) -> list[RegistryEvent]:
    """`spec.secret` is the reference to the sealed password, which a registry must have."""
    if state is not None:
        raise AssetExistsError(asset_id)
    _check(meta, spec)
    if spec.secret is None:
        raise InvalidAssetError("/spec/password", "required")
    return [RegistryCreated(asset_id=asset_id, meta=meta, spec=spec)]


def update(
    state: Registry | None,
    asset_id: UUID,
    *,
    name: str,
    description: str | None,
    url: str,
    user: str,
    secret: SecretRef | None,
) -> list[RegistryEvent]:
    """Rename, re-describe, move or log in anew; `secret` is the new password's reference (None:
    the password stays). The password is only ever sent where it was given for: a new URL or
    user needs it given again. An unchanged registry writes nothing."""
    current = live(state, asset_id)
    meta = msgspec.structs.replace(current.meta, name=name, description=description)
    spec = msgspec.structs.replace(
        current.spec, url=url, user=user, secret=secret or current.spec.secret
    )
    _check(meta, spec)
    moved = (url, user) != (current.spec.url, current.spec.user)
    if moved and secret is None:
        field = "url" if url != current.spec.url else "user"
        raise InvalidAssetError(
            "/spec/password", f"give the password again with a new {field}: it goes nowhere else"
        )
    if (meta, spec) == (current.meta, current.spec):
        return []
    return [RegistryUpdated(asset_id=asset_id, name=name, description=description, spec=spec)]


def delete(state: Registry | None, asset_id: UUID) -> list[RegistryEvent]:
    """A deleted registry is a no-op. Whether a template still names it is decided where the
    deletion is written, in its transaction (RegistryInUseError, `Uses`)."""
    if state is not None and state.deleted:
        return []
    live(state, asset_id)
    return [RegistryDeleted(asset_id=asset_id)]


def _check(meta: AssetMeta, spec: RegistrySpec) -> None:
    check_name(meta)
    if meta.private:
        raise InvalidAssetError("/meta/private", "a registry cannot be private")
    if not spec.user:
        raise InvalidAssetError("/spec/user", "must not be empty")
    check_url(spec.url)


def check_url(url: str) -> None:
    """A registry's URL: http or https (https when it names none), a host and maybe a port and
    a path; never a login (it would be stored in the clear), a query or a fragment."""
    at = "/spec/url"
    if not url or len(url) > URL_MAX:
        raise InvalidAssetError(at, f"1 to {URL_MAX} characters")
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise InvalidAssetError(at, "no spaces or control characters")
    try:
        parts = _split(url)
    except ValueError:  # a bracketed host that is no IPv6 address
        raise InvalidAssetError(at, "names no host that can be read") from None
    if parts.scheme not in ("http", "https"):
        raise InvalidAssetError(at, "an http or https URL, e.g. https://registry.example.com")
    if "@" in parts.netloc:
        raise InvalidAssetError(at, "no login in the URL: give it as user and password")
    try:
        port = parts.port
    except ValueError:
        raise InvalidAssetError(at, "a port is 1 to 65535") from None
    if not parts.hostname or port == 0:
        raise InvalidAssetError(at, "names no host (or port 0)")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise InvalidAssetError(at, "no query or fragment")


def api_base(url: str) -> str:
    """Where the registry's OCI distribution API sits (its `/v2/` below this): the URL with
    https when it names no scheme, and without a trailing slash or `/v2`."""
    parts = _split(url)
    path = parts.path.rstrip("/").removesuffix(_API_ROOT)
    return f"{parts.scheme}://{parts.netloc}{path}"


def _split(url: str) -> SplitResult:
    return urlsplit(url if "://" in url else f"https://{url}")
