"""Tenant settings in Run:ai's shapes: `GET /v1/k8s/setting`, `PUT` it (tenant admins) and
`GET /v1/k8s/setting/{settingKey}`. Also: domain/tenant_settings.py, services/tenant_settings.py,
projections/tenant_settings.py."""

from typing import Final

import msgspec
from litestar import get, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from domain.tenant_settings import FIXED, LIMITS, Described, info_of
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.setting_actions import SettingRequest, set_from, switches

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


SETTING_ROUTES: Final = (list_settings, get_setting, put_setting)
