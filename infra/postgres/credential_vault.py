"""PostgresCredentialVault: credential (and registry) streams with their sealed values beside them.

A wrapper of the one append port: the sealed row is written in the unit of work of the creating
event's append and deleted in the deleting event's, so no credential exists without its values
and no values outlive their credential.
"""

from collections.abc import Mapping, Sequence
from typing import Final
from uuid import UUID

import asyncpg

from domain.events import Event, EventMetadata
from domain.specs import SecretRef
from infra.postgres.connections import translated
from infra.postgres.streams import PostgresStreams
from infra.security.sealing import CredentialKeyUnconfiguredError, Sealed, Sealer
from services.ports import AppendResult, InUse, NameClaim, Stream, Uses

# New values, or (a registry's new password) in place of the old.
_KEEP_SEALED: Final = (
    "INSERT INTO credential_secrets (asset_id, key_id, nonce, sealed) VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (asset_id) DO UPDATE SET"
    " key_id = excluded.key_id, nonce = excluded.nonce, sealed = excluded.sealed"
)
_DESTROY: Final = "DELETE FROM credential_secrets WHERE asset_id = $1"


class PostgresCredentialVault:
    def __init__(self, streams: PostgresStreams, pool: asyncpg.Pool, sealer: Sealer | None) -> None:
        self._streams = streams
        self._pool = pool
        self._sealer = sealer  # None: no key configured; credentials cannot be created

    async def load(self, stream_id: UUID) -> Stream:
        return await self._streams.load(stream_id)

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        return await self._streams.load_many(stream_ids, remembered=remembered)

    def reference(self, asset_id: UUID, values: Mapping[str, str]) -> SecretRef:
        sealer = self._require_sealer()
        return SecretRef(key_id=sealer.key_id, fingerprint=sealer.fingerprint(asset_id, values))

    def holds(self, asset_id: UUID, values: Mapping[str, str], secret: SecretRef) -> bool:
        return self._require_sealer().matches(asset_id, values, secret.fingerprint)

    async def append(
        self,
        asset_id: UUID,
        events: Sequence[Event],
        *,
        expected_version: int,
        metadata: EventMetadata,
        name: NameClaim | None,
        values: Mapping[str, str] | None = None,
        uses: Uses | None = None,
        unused: InUse | None = None,
        checked: Mapping[UUID, int] | None = None,
    ) -> AppendResult:
        sealed = None if not values else self._require_sealer().seal(asset_id, values)
        async with self._streams.transaction() as tx:
            result = await tx.append(
                asset_id,
                events,
                expected_version=expected_version,
                metadata=metadata,
                name=name,
                uses=uses,
                unused=unused,
                checked=checked,
            )
            if sealed is not None:
                await tx.connection.execute(
                    _KEEP_SEALED, asset_id, sealed.key_id, sealed.nonce, sealed.sealed
                )
            if name is None:
                await tx.connection.execute(_DESTROY, asset_id)
        return result

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
        if self._sealer is None:
            raise CredentialKeyUnconfiguredError()
        return self._sealer
