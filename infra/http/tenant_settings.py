"""Tenant settings in Run:ai's shapes: `GET /v1/k8s/setting` (all), `PUT /v1/k8s/setting`
(`{"key", "value"}`, tenant admins), `GET /v1/k8s/setting/{settingKey}` (its boolean).

Tenant settings, layer by layer: domain/tenant_settings.py the rules, services/tenant_settings.py
the use cases, projections/tenant_settings.py the read model, infra/http/tenant_settings.py the
HTTP routes.
"""

from collections.abc import Sequence
from typing import Final

import msgspec
from litestar import get, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from domain.access import permits
from domain.tenant_settings import FIXED, LIMITS, Described, TenantSettings, info_of
from domain.values import ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor
from infra.http.template_schemas import RequestBody
from projections.queries import tenant_setting_reads as queries
from services.errors import InvalidRequestError
from services.tenant_settings import CHANGES_SETTINGS, change_settings

BASE: Final = "/v1/k8s/setting"


class Setting(msgspec.Struct, frozen=True, kw_only=True):
    key: str
    value: str
    active: bool
    type: str
    category: str
    label: str
    description: str
    source: str
    stage: str


class SettingRequest(RequestBody, frozen=True, kw_only=True):
    key: str
    value: bool | int | str


class SettingResponse(msgspec.Struct, frozen=True):
    msg: str = "done"


def _wire(key: str, value: bool) -> Setting:
    return _described(key, info_of(key), "true" if value else "false", active=value)


def _wire_limit(key: str, value: int) -> Setting:
    return _described(key, LIMITS[key], str(value), active=True, type_="Integer")


def _described(
    key: str, info: Described, value: str, *, active: bool, type_: str = "Boolean"
) -> Setting:
    return Setting(
        key=key,
        value=value,
        active=active,
        type=type_,
        category=info.category,
        label=info.label,
        description=info.description,
        source="Tenant",
        stage=info.stage,
    )


@get(BASE, tags=["Settings"])
async def list_settings(
    adapters: NamedDependency[Adapters],
) -> list[Setting]:
    """Every fixed setting, and every per-cluster one that was ever set."""
    settings = await switches(adapters)
    keys = [*FIXED, *sorted(k for k in settings.values if k not in FIXED)]
    limits = [_wire_limit(key, settings.limit(key)) for key in LIMITS]
    return [*(_wire(key, settings.get(key)) for key in keys), *limits]


@get(f"{BASE}/{{setting_key:str}}", tags=["Settings"])
async def get_setting(
    setting_key: FromPath[str],
    adapters: NamedDependency[Adapters],
) -> bool:
    """Whether it is on; a limit, always in force, is: its number is the list's `value`."""
    settings = await switches(adapters)
    return settings.limit(setting_key) > 0 if setting_key in LIMITS else settings.get(setting_key)


@put(BASE, tags=["Settings"])
async def put_setting(
    request: Caller,
    data: JSONBody[SettingRequest],
    adapters: NamedDependency[Adapters],
) -> SettingResponse:
    await set_from(request, [data], adapters)
    return SettingResponse()


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


SETTING_ROUTES: Final = (list_settings, get_setting, put_setting)


async def switches(adapters: Adapters) -> TenantSettings:
    """The tenant's settings as the read model holds them: what the API's GETs answer, and what
    the console shows (only what they enable)."""
    return await queries.current(adapters.reads)
