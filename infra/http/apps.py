"""`/api/v1/apps`: applications under the older name runapy's `ApplicationsApi` calls, through
infra/http/service_accounts.py's functions; only a new or regenerated secret's member differs:
`secret`, not `clientSecret`."""

from typing import Final
from uuid import UUID

import msgspec
from litestar import delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from infra.http import service_accounts
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.service_accounts import (
    ServiceAccount,
    ServiceAccountCreationRequest,
    ServiceAccountPatchRequest,
)

PATH: Final = "/api/v1/apps"
ONE: Final = f"{PATH}/{{app_id:uuid}}"


class ApplicationPostResponse(msgspec.Struct, frozen=True, rename="camel"):
    id: str
    name: str
    secret: str
    client_id: str


class ApplicationSecret(msgspec.Struct, frozen=True):
    secret: str


@post(PATH, status_code=201, tags=["Applications"])
async def create_app(
    request: Caller,
    data: JSONBody[ServiceAccountCreationRequest],
    adapters: NamedDependency[Adapters],
) -> ApplicationPostResponse:
    app_id, secret = await service_accounts.register(request, data.name, adapters)
    return ApplicationPostResponse(
        id=str(app_id), name=data.name, secret=secret, client_id=data.name
    )


@get(PATH, tags=["Applications"])
async def list_apps(request: Caller, adapters: NamedDependency[Adapters]) -> list[ServiceAccount]:
    return await service_accounts.listed(request, adapters)


@get(ONE, tags=["Applications"])
async def get_app(
    request: Caller, app_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> ServiceAccount:
    return await service_accounts.found(request, app_id, adapters)


@patch(ONE, tags=["Applications"])
async def patch_app(
    request: Caller,
    app_id: FromPath[UUID],
    data: JSONBody[ServiceAccountPatchRequest],
    adapters: NamedDependency[Adapters],
) -> ServiceAccount:
    """Disable or enable; the application as it now is."""
    return await service_accounts.enabled_or_not(request, app_id, data.enabled, adapters)


@delete(ONE, tags=["Applications"])
async def delete_app(
    request: Caller, app_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> None:
    await service_accounts.removed(request, app_id, adapters)


@post(f"{ONE}/secret", status_code=200, tags=["Applications"])
async def regenerate_app_secret(
    request: Caller, app_id: FromPath[UUID], adapters: NamedDependency[Adapters]
) -> ApplicationSecret:
    return ApplicationSecret(await service_accounts.new_secret(request, app_id, adapters))


APP_ROUTES: Final = (create_app, list_apps, get_app, patch_app, delete_app, regenerate_app_secret)
