"""PostgresAssetUsage: which assets use an asset, from the asset catalogue read model."""

from typing import Final
from uuid import UUID

import asyncpg

from infra.connections import translated

# An environment uses a credential through its variables' `credential.assetId`.
_USERS: Final = """
SELECT kind, name FROM asset_catalogue
 WHERE kind = 'environment'
   AND jsonb_path_exists(spec, '$.environmentVariables[*].credential.assetId ? (@ == $id)',
                         jsonb_build_object('id', $1::text))
 ORDER BY name
"""


class PostgresAssetUsage:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def users_of(self, asset_id: UUID) -> list[str]:
        async with translated("asset_usage"):
            rows = await self._pool.fetch(_USERS, str(asset_id))
        return [f"{row['kind']} {row['name']}" for row in rows]
