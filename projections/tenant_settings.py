"""Read model of the tenant's settings: one row per setting ever changed, with its value, for
reads (`GET /v1/k8s/setting`, the console's switches); writes decide on the settings stream
(services/tenant_settings.py). Also: domain/tenant_settings.py, infra/http/tenant_settings.py."""

from typing import Final

from domain.events import RecordedEvent, TenantLimitChanged, TenantSettingChanged
from domain.tenant_settings import TenantSettings
from projections.executor import Executor

NAME: Final = "tenant_settings"


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice (a row keeps the stream version that set it)."""
    match recorded.event:
        case TenantSettingChanged() as e:
            await conn.execute(
                "INSERT INTO tenant_settings (key, value, version) VALUES ($1, $2, $3)"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value,"
                " version = EXCLUDED.version WHERE tenant_settings.version < EXCLUDED.version",
                e.key, e.value, recorded.version,
            )  # fmt: skip
        case TenantLimitChanged() as e:
            await conn.execute(
                "INSERT INTO tenant_settings (key, value, number, version)"
                " VALUES ($1, true, $2, $3)"
                " ON CONFLICT (key) DO UPDATE SET number = EXCLUDED.number,"
                " version = EXCLUDED.version WHERE tenant_settings.version < EXCLUDED.version",
                e.key, e.value, recorded.version,
            )  # fmt: skip
        case _:
            pass  # not an event this read model cares about


async def current(conn: Executor) -> TenantSettings:
    """The settings as the read model holds them (one not set: its default)."""
    rows = await conn.fetch("SELECT key, value, number FROM tenant_settings")
    return TenantSettings(
        {row["key"]: row["value"] for row in rows if row["number"] is None},
        {row["key"]: row["number"] for row in rows if row["number"] is not None},
    )
