"""PostgresCredentialVault: credential (and registry) events with their sealed values beside them.

The sealed row is written in the creating event's transaction and deleted in the deleting
event's, so no credential exists without its values and no values outlive their credential.
"""

from collections.abc import Mapping, Sequence
from uuid import UUID

import asyncpg

from domain.events import Event, EventMetadata
from domain.specs import SecretRef
from infra.postgres.connections import translated
from infra.postgres.eventstore import PostgresEventStore
from infra.postgres.named_streams import hold_name
from infra.postgres.stream_uses import hold_unused, hold_uses
from infra.security.sealing import CredentialKeyUnconfiguredError, Sealed, Sealer
from services.ports import AppendResult, InUse, NameClaim, Stream, Uses


class PostgresCredentialVault:
    def __init__(
        self, pool: asyncpg.Pool, store: PostgresEventStore, sealer: Sealer | None
    ) -> None:
        self._pool = pool
        self._store = store
        self._sealer = sealer  # None: no key configured; credentials cannot be created

    async def load(self, stream_id: UUID) -> Stream:
        return await self._store.load(stream_id)

    def reference(self, values: Mapping[str, str]) -> SecretRef:
        sealer = self._require_sealer()
        return SecretRef(key_id=sealer.key_id, fingerprint=sealer.fingerprint(values))

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
    ) -> AppendResult:
        sealed = None if not values else self._require_sealer().seal(asset_id, values)
        async with translated("append"), self._pool.acquire() as conn, conn.transaction():
            await hold_name(conn, asset_id, name)
            if unused is not None:
                await hold_unused(conn, asset_id, unused)
            if uses is not None:
                await hold_uses(conn, asset_id, uses)
            if sealed is not None:  # new values, or (a registry's new password) in place of old
                await conn.execute(
                    "INSERT INTO credential_secrets (asset_id, key_id, nonce, sealed)"
                    " VALUES ($1, $2, $3, $4) ON CONFLICT (asset_id) DO UPDATE SET"
                    " key_id = excluded.key_id, nonce = excluded.nonce, sealed = excluded.sealed",
                    asset_id,
                    sealed.key_id,
                    sealed.nonce,
                    sealed.sealed,
                )
            if name is None:
                await conn.execute("DELETE FROM credential_secrets WHERE asset_id = $1", asset_id)
            return await self._store.append_within(
                conn, asset_id, events, expected_version=expected_version, metadata=metadata
            )

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
