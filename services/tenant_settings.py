"""Tenant settings: tenant admins turn them on and off; every use case that a setting governs
reads them with its other inputs.

Tenant settings, layer by layer: domain/tenant_settings.py the rules, services/tenant_settings.py
the use cases, projections/tenant_settings.py the read model, infra/http/tenant_settings.py the
HTTP routes.
"""

from typing import Final

from domain import tenant_settings
from domain.events import EventMetadata
from domain.tenant_settings import TenantSettings
from domain.values import TENANT, Role
from services import access
from services.ports import StreamLoader, Streams


async def current(streams: StreamLoader) -> TenantSettings:
    return tenant_settings.fold((await streams.load(tenant_settings.STREAM)).events)


# The role that changes a tenant setting, held on the tenant.
CHANGES_SETTINGS: Final[Role] = "admin"


async def change_setting(
    key: str, value: bool, *, metadata: EventMetadata, streams: Streams
) -> TenantSettings:
    await access.require(
        metadata, (TENANT,), CHANGES_SETTINGS, "change tenant settings", streams=streams
    )
    stream = await streams.load(tenant_settings.STREAM)
    state = tenant_settings.fold(stream.events)
    events = tenant_settings.change(state, key, value)
    if events:
        await streams.append(
            tenant_settings.STREAM,
            events,
            expected_version=stream.version,
            metadata=metadata,
            name=None,
        )
    return tenant_settings.fold((*stream.events, *events))
