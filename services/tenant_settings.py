"""Tenant settings: tenant admins turn them on and off and set the limits; each use case a
setting governs reads them with its other inputs. Also: domain/tenant_settings.py,
projections/tenant_settings.py, infra/http/tenant_settings.py."""

from collections.abc import Sequence
from typing import Final

from domain import tenant_settings
from domain.events import Event, EventMetadata
from domain.tenant_settings import TenantSettings
from domain.values import TENANT, Role
from services import access
from services.ports.event_store import Append, EventStore, StreamLoader
from services.races import decided_again


async def current(streams: StreamLoader) -> TenantSettings:
    return tenant_settings.fold((await streams.load(tenant_settings.STREAM)).events)


# The role that changes a tenant setting, held on the tenant.
CHANGES_SETTINGS: Final[Role] = "admin"


@decided_again
async def change_settings(
    changes: Sequence[tuple[str, bool | int]], *, metadata: EventMetadata, streams: EventStore
) -> TenantSettings:
    """Turn each setting on or off (or set a limit), in order, in one append: one refused (a
    key naming no setting, a value it cannot take) writes none of them. A setting already as
    asked is not written again."""
    await access.require(
        metadata, (TENANT,), CHANGES_SETTINGS, "change tenant settings", streams=streams
    )
    stream = await streams.load(tenant_settings.STREAM)
    events: list[Event] = []
    for key, value in changes:
        state = tenant_settings.fold((*stream.events, *events))
        events.extend(tenant_settings.change(state, key, value))
    if events:
        await streams.append(
            Append(
                tenant_settings.STREAM,
                events,
                expected_version=stream.version,
                metadata=metadata,
                name=None,
            )
        )
    return tenant_settings.fold((*stream.events, *events))
