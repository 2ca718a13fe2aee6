"""What a caller's settings request does, shared by the API's handlers
(infra/http/tenant_settings.py) and the console's settings page."""

from collections.abc import Sequence

from domain.access import permits
from domain.tenant_settings import LIMITS, TenantSettings
from domain.values import ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor
from infra.http.template_schemas import RequestBody
from projections.queries import tenant_setting_reads as queries
from services.errors import InvalidRequestError
from services.tenant_settings import CHANGES_SETTINGS, change_settings


class SettingRequest(RequestBody, frozen=True, kw_only=True):
    key: str
    value: bool | int | str


async def set_from(request: Caller, asked: Sequence[SettingRequest], adapters: Adapters) -> None:
    """Set settings (tenant admins only), all or none: the PUT's one, and those the console's
    settings page changes."""
    changes: list[tuple[str, bool | int]] = []
    for data in asked:
        value = data.value
        if isinstance(value, str):  # Run:ai's wire form: "true", "false", or a number's digits
            if data.key in LIMITS and value.isascii() and value.isdigit():
                value = int(value)
            elif value in ("true", "false"):
                value = value == "true"
            else:
                raise InvalidRequestError("/value", "true or false, or a limit's whole number")
        changes.append((data.key, value))
    await change_settings(changes, metadata=actor(request), streams=adapters.streams)


def may_change(request: Caller) -> bool:
    """Whether the caller holds what changing a setting takes (a tenant admin): only for
    showing the switches read-only to others; `set_from` is what refuses."""
    return permits(request.user.grants, (ScopeRef("tenant"),), CHANGES_SETTINGS)


async def switches(adapters: Adapters) -> TenantSettings:
    """The tenant's settings as the read model holds them: what the API's GETs answer, and what
    the console shows (only what they enable)."""
    return await queries.current(adapters.reads)
