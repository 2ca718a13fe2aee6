"""PostgresRegistryCredentials: the docker-registry credentials a workload's pods may pull with,
from the asset catalogue read model."""

from uuid import UUID

import asyncpg
import msgspec

from domain.values import AssetMeta, ScopeRef
from infra.postgres.connections import translated

_decode_meta = msgspec.json.Decoder(AssetMeta).decode


class PostgresRegistryCredentials:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def shared_in(self, lineage: tuple[ScopeRef, ...]) -> list[UUID]:
        async with translated("registry_credentials"):
            rows = await self._pool.fetch(
                "SELECT asset_id, meta::text AS meta FROM asset_catalogue"
                " WHERE kind = 'dockerRegistry' ORDER BY asset_id"
            )
        found = []
        for row in rows:
            meta = _decode_meta(row["meta"])
            if not meta.private and meta.scope_ref in lineage:
                found.append(row["asset_id"])
        return found
