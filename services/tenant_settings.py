"""Tenant settings: tenant admins turn them on and off; every use case that a setting governs
reads them with its other inputs.

Tenant settings, layer by layer: domain/tenant_settings.py the rules, services/tenant_settings.py
the use cases, infra/http/tenant_settings.py the HTTP routes.
"""

from domain import tenant_settings
from domain.events import EventMetadata
from domain.tenant_settings import TenantSettings
from domain.values import TENANT
from services import access
from services.ports import NamedStreams, StreamLoader


async def current(streams: StreamLoader) -> TenantSettings:
    return tenant_settings.fold((await streams.load(tenant_settings.STREAM)).events)


async def change_setting(
    key: str, value: bool, *, metadata: EventMetadata, streams: NamedStreams
) -> TenantSettings:
    await access.require(metadata, (TENANT,), "admin", "change tenant settings", streams=streams)
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
