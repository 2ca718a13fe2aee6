"""PostgresCredentialVault: the values of credential (and registry) streams, sealed, beside them.
The store writes them with the append (`keep_values`, `destroy_values`, in its transaction), so
neither exists without the other; the vault only reads them."""

from collections.abc import Mapping
from typing import Final
from uuid import UUID

import asyncpg

from domain.specs import SecretRef
from infra.postgres.connections import Connection, translated
from infra.postgres.units_of_work import RowWrite, SecretKeys
from infra.security.sealing import Sealed, Sealer

# New values, or (a registry's new password) in place of the old.
_KEEP_SEALED: Final = (
    "INSERT INTO credential_secrets (asset_id, key_id, nonce, sealed) VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (asset_id) DO UPDATE SET"
    " key_id = excluded.key_id, nonce = excluded.nonce, sealed = excluded.sealed"
)
_DESTROY: Final = "DELETE FROM credential_secrets WHERE asset_id = $1"


def keep_values(keys: SecretKeys, asset_id: UUID, values: Mapping[str, str]) -> RowWrite:
    """The values sealed now, before the append's transaction, and kept in it."""
    sealed = keys.require(keys.sealer).seal(asset_id, values)

    async def write(conn: Connection) -> None:
        await conn.execute(_KEEP_SEALED, asset_id, sealed.key_id, sealed.nonce, sealed.sealed)

    return write


def destroy_values(asset_id: UUID) -> RowWrite:
    async def write(conn: Connection) -> None:
        await conn.execute(_DESTROY, asset_id)

    return write


class PostgresCredentialVault:
    def __init__(self, pool: asyncpg.Pool, keys: SecretKeys) -> None:
        self._pool = pool
        self._keys = keys  # no sealer: no key configured; credentials cannot be created

    def reference(self, asset_id: UUID, values: Mapping[str, str]) -> SecretRef:
        sealer = self._require_sealer()
        return SecretRef(key_id=sealer.key_id, fingerprint=sealer.fingerprint(asset_id, values))

    def holds(self, asset_id: UUID, values: Mapping[str, str], secret: SecretRef) -> bool:
        return self._require_sealer().matches(asset_id, values, secret.fingerprint)

    async def open(self, asset_id: UUID) -> dict[str, str] | None:
        """The credential's values, for the one place that must hand them on (a workload's
        cluster secret); None when it has none (or was deleted)."""
        async with translated("open"):
            row = await self._pool.fetchrow(
                "SELECT key_id, nonce, sealed FROM credential_secrets WHERE asset_id = $1",
                asset_id,
            )
        if row is None:
            return None
        return self._require_sealer().open(
            asset_id, Sealed(row["key_id"], row["nonce"], row["sealed"])
        )

    def _require_sealer(self) -> Sealer:
        return self._keys.require(self._keys.sealer)
