"""Secrets kept beside the events, never in them: a credential's values and an application's
secret. An append writes or destroys them with its events (`Append.secret`, services/ports/
event_store.py); the ports here only read them."""

from collections.abc import Mapping
from typing import Protocol, TypeAlias
from uuid import UUID

import msgspec

from domain.specs import SecretRef


class CredentialValues(msgspec.Struct, frozen=True):
    """A credential's values, sealed and kept (in place of any kept before)."""

    values: Mapping[str, str]


class CredentialValuesDestroyed(msgspec.Struct, frozen=True):
    """A deleted credential's values, destroyed."""


class ApplicationSecret(msgspec.Struct, frozen=True, kw_only=True):
    """A new application's secret, kept as a slow hash under its client id (ClientIdTakenError
    when another application has it). `kept_for_retries` (a create under an Idempotency-Key):
    also sealed, for `first_secret`, until replaced, deleted, or a day has passed."""

    client_id: str
    secret: str
    kept_for_retries: bool = False


class ApplicationSecretReplaced(msgspec.Struct, frozen=True):
    """An application's secret swapped for a new one; the one kept for retries is forgotten."""

    secret: str


class ApplicationSecretDestroyed(msgspec.Struct, frozen=True):
    """A deleted application's secret (and any kept for retries), destroyed."""


SecretRow: TypeAlias = (
    CredentialValues
    | CredentialValuesDestroyed
    | ApplicationSecret
    | ApplicationSecretReplaced
    | ApplicationSecretDestroyed
)


class CredentialVault(Protocol):
    """The values kept of credential streams: what the events record in their place, and the
    values themselves for the few places that must hand them on."""

    def reference(self, asset_id: UUID, values: Mapping[str, str]) -> SecretRef:
        """The key id and keyed fingerprint the events record in place of the asset's values
        (bound to the asset: equal values of two assets fingerprint apart)."""
        ...

    def holds(self, asset_id: UUID, values: Mapping[str, str], secret: SecretRef) -> bool:
        """Whether `secret` is what the events recorded of these values of the asset."""
        ...

    async def open(self, asset_id: UUID) -> dict[str, str] | None:
        """The values kept for the asset, for the few places that must hand them on (a
        workload's cluster secret, a registry's login); None when it has none (or is gone)."""
        ...


class Authenticated(msgspec.Struct, frozen=True, kw_only=True):
    """Who logged in, and the token generation its tokens are issued in."""

    application_id: UUID
    token_generation: int


class ApplicationRegistry(Protocol):
    """The secrets kept of application streams."""

    async def first_secret(self, application_id: UUID) -> str | None:
        """The secret the application was created with, if it was kept for retries and still
        is; else None."""
        ...

    async def authenticate(self, client_id: str, secret: str) -> Authenticated | None:
        """The live application with these credentials, else None."""
        ...
