"""The ports the use cases ask of the read models: the org tree, what uses an asset, and the
registry credentials a scope shares. Each wraps one query of projections/ (the read side owns its
SQL), so that a lost connection reaches the caller as StoreUnavailableError."""

from uuid import UUID

import asyncpg

from domain.values import TENANT, ScopeRef
from infra.postgres.connections import translated
from projections import asset_catalogue, org_units


class PostgresOrgTree:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def lineages(self) -> dict[ScopeRef, tuple[ScopeRef, ...]]:
        async with translated("org_tree"), self._pool.acquire() as conn:
            units = await org_units.list_units(conn)
        found = {ScopeRef(u.kind, u.id): u.lineage for u in units}
        found[TENANT] = (TENANT,)
        return found


class PostgresRegistryCredentials:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def shared_in(self, lineage: tuple[ScopeRef, ...]) -> list[UUID]:
        async with translated("registry_credentials"), self._pool.acquire() as conn:
            return await asset_catalogue.registry_credentials_shared_in(conn, lineage)
