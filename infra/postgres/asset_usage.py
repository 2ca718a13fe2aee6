"""PostgresAssetUsage: which assets use an asset, from the asset catalogue read model."""

from typing import Final
from uuid import UUID

import asyncpg

from infra.postgres.connections import translated

# A template uses the assets it links or loads; an environment uses a credential through its
# variables' `credential.assetId`; S3, Git and secret-volume data sources through the id fields
# of their specs.
_USERS: Final = """
SELECT 'template' AS kind, name FROM template_catalogue WHERE $1::text::uuid = ANY (asset_ids)
UNION ALL
SELECT kind, name FROM asset_catalogue
 WHERE jsonb_path_exists(spec, '$.environmentVariables[*].credential.assetId ? (@ == $id)',
                         jsonb_build_object('id', $1::text))
    OR $1 IN (spec->>'accessKeyAssetId', spec->>'credentialId', spec->>'passwordAssetId',
              spec->>'credentialAssetId')
 ORDER BY kind, name
"""


class PostgresAssetUsage:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def users_of(self, asset_id: UUID) -> list[str]:
        async with translated("asset_usage"):
            rows = await self._pool.fetch(_USERS, str(asset_id))
        return [f"{row['kind']} {row['name']}" for row in rows]
