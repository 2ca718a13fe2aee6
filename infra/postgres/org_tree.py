"""PostgresOrgTree: the OrgTree port over the org_units read model."""

import asyncpg

from domain.values import TENANT, ScopeRef
from infra.postgres.connections import translated
from projections import org_units


class PostgresOrgTree:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def lineages(self) -> dict[ScopeRef, tuple[ScopeRef, ...]]:
        async with translated("org_tree"), self._pool.acquire() as conn:
            units = await org_units.list_units(conn)
        found = {ScopeRef(u.kind, u.id): u.lineage for u in units}
        found[TENANT] = (TENANT,)
        return found

    async def children(self, scope: ScopeRef) -> int:
        async with translated("org_tree"), self._pool.acquire() as conn:
            return await org_units.children(conn, scope)
