"""The tenant's settings as their read model holds them."""

from domain.tenant_settings import TenantSettings
from projections import tenant_settings
from projections.queries import Reads


async def current(reads: Reads) -> TenantSettings:
    async with reads.connection("tenant_settings") as conn:
        return await tenant_settings.current(conn)
