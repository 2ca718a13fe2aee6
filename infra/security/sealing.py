"""Sealing credential values at rest (AES-256-GCM) with keys derived by HKDF from the configured
key, one per purpose (sealing, fingerprints; credential values, kept answers), so what is sealed
for one does not open as another (docs/decisions/0015-secrets-at-rest-and-logins.md)."""

import base64
import hashlib
import hmac
import os
from collections.abc import Mapping
from typing import Final
from uuid import UUID

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from infra.errors import InfraError
from infra.settings import CredentialSettings


class CredentialKeyUnconfiguredError(InfraError):
    slug = "credential-key-unconfigured"

    def __init__(self) -> None:
        super().__init__(
            "no credential encryption key is configured; credentials (and the secret a service"
            " account created under an Idempotency-Key answers its retries) cannot be stored"
        )


class InvalidCredentialKeyError(ValueError):
    pass


class SealedUnderAnotherKeyError(InfraError):
    """A value sealed under a credential key since replaced: only entering it again helps."""

    slug = "sealed-under-another-key"

    def __init__(self, asset_id: UUID) -> None:
        super().__init__(
            f"the secret of {asset_id} was sealed under a credential key since replaced;"
            " enter it again"
        )
        self.asset_id = asset_id


class Sealed(msgspec.Struct, frozen=True):
    key_id: int
    nonce: bytes
    sealed: bytes


_BOUND: Final = "hmac-sha256-asset:"  # the fingerprints bound to their asset


def _derive(master: bytes, purpose: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(master)


def _canonical(values: Mapping[str, str]) -> bytes:
    return msgspec.json.encode(dict(sorted(values.items())))


class Sealer:
    """Seals and opens one credential's values; the asset id is bound in as associated data, so
    sealed values moved to another credential's row do not open."""

    def __init__(self, settings: CredentialSettings, purpose: str = "credentials") -> None:
        if not settings.encryption_key:
            raise CredentialKeyUnconfiguredError()
        master = base64.urlsafe_b64decode(
            settings.encryption_key + "=" * (-len(settings.encryption_key) % 4)
        )
        if len(master) != 32:
            raise InvalidCredentialKeyError("the credential encryption key must be 32 bytes")
        self.key_id = settings.key_id
        self._aead = AESGCM(_derive(master, f"trainplate/{purpose}/seal".encode()))
        self._fingerprint_key = _derive(master, f"trainplate/{purpose}/fingerprint".encode())

    def fingerprint(self, asset_id: UUID, values: Mapping[str, str]) -> str:
        """What the events record of the asset's values: keyed, so it cannot be guessed offline,
        and bound to the asset, so a caller cannot confirm a guess of another asset's password by
        giving one of its own the guess and comparing."""
        return f"{_BOUND}{self._mac(asset_id.bytes + _canonical(values))}"

    def matches(self, asset_id: UUID, values: Mapping[str, str], fingerprint: str) -> bool:
        """Whether `fingerprint` is the asset's values', in either form: bound to the asset, or
        over the values alone (recorded before fingerprints were bound; still checked, never
        made)."""
        if fingerprint.startswith(_BOUND):
            expected = self.fingerprint(asset_id, values)
        else:
            expected = f"hmac-sha256:{self._mac(_canonical(values))}"
        return hmac.compare_digest(expected, fingerprint)

    def _mac(self, message: bytes) -> str:
        return hmac.new(self._fingerprint_key, message, hashlib.sha256).hexdigest()

    def seal(self, asset_id: UUID, values: Mapping[str, str]) -> Sealed:
        nonce = os.urandom(12)
        return Sealed(
            self.key_id, nonce, self._aead.encrypt(nonce, _canonical(values), asset_id.bytes)
        )

    def open(self, asset_id: UUID, sealed: Sealed) -> dict[str, str]:
        try:
            plain = self._aead.decrypt(sealed.nonce, sealed.sealed, asset_id.bytes)
        except InvalidTag:
            raise SealedUnderAnotherKeyError(asset_id) from None
        return msgspec.json.decode(plain, type=dict[str, str])
