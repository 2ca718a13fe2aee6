"""The port the access cache asks of the read models: the org tree. It wraps one query of
projections/ (the read side owns its SQL), so that a lost connection reaches the caller as
StoreUnavailableError."""

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
