"""`/api/v1/service-accounts`: applications as Run:ai presents them, for tenant admins (also under
`/api/v1/apps`, infra/http/apps.py). Writes answer from the write side (the secret shown once, on
creation); reads, from the application catalogue, wait for the caller's writes as every read."""

import secrets
from datetime import datetime
from typing import Final
from uuid import UUID

import msgspec
from litestar import delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from domain import applications
from domain.commands import (
    CreateApplication,
    DeleteApplication,
    RotateApplicationSecret,
    SetApplicationEnabled,
)
from domain.values import TENANT
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, creation_id
from infra.http.openapi_document import ServiceAccountName
from projections.application_catalogue import ApplicationSummary
from projections.queries import service_account_reads as queries
from services.access import require_held
from services.applications import (
    create_application,
    delete_application,
    rotate_application_secret,
    set_application_enabled,
)


class ServiceAccountCreationRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: ServiceAccountName


class ServiceAccountPostResponse(msgspec.Struct, frozen=True, rename="camel"):
    id: str
    name: str
    client_id: str
    client_secret: str


class ServiceAccount(msgspec.Struct, frozen=True, rename="camel"):
    id: str
    name: str
    client_id: str
    created_by: str
    created_at: datetime
    updated_at: datetime
    enabled: bool
    last_login: datetime | None


# What the routes of both names do (here and infra/http/apps.py); only their bodies differ.


async def register(request: Caller, name: str, adapters: Adapters) -> tuple[UUID, str]:
    """A new application's id and its secret, which only this answer shows (and, under an
    Idempotency-Key, its retries: services/applications.py)."""
    application_id, keyed = creation_id(request, "service-account")
    command = CreateApplication(
        application_id=application_id,
        name=name,
        grants=(),  # roles come from access rules, granted separately
        metadata=actor(request),
        keyed=keyed,
    )
    registration = await create_application(
        command,
        secret=secrets.token_urlsafe(32),
        store=adapters.streams,
        registry=adapters.registry,
    )
    return command.application_id, registration.secret


async def listed(request: Caller, adapters: Adapters) -> list[ServiceAccount]:
    # A read: the caller's grants as authentication read them, not its stream again.
    require_held(request.user.grants, (TENANT,), "admin", "list service accounts")
    return [_wire(a) for a in await queries.every(adapters.reads)]


async def found(request: Caller, account_id: UUID, adapters: Adapters) -> ServiceAccount:
    require_held(request.user.grants, (TENANT,), "admin", "read service accounts")
    summary = await queries.one(adapters.reads, account_id)
    if summary is None:
        raise applications.ApplicationNotFoundError(account_id)
    return _wire(summary)


async def removed(request: Caller, account_id: UUID, adapters: Adapters) -> None:
    """The credential is destroyed with it, so its secret logs in no more."""
    command = DeleteApplication(application_id=account_id, metadata=actor(request))
    await delete_application(command, store=adapters.streams)


async def new_secret(request: Caller, account_id: UUID, adapters: Adapters) -> str:
    """The new secret, shown in this answer only; the old one logs in no more."""
    secret = secrets.token_urlsafe(32)
    command = RotateApplicationSecret(application_id=account_id, metadata=actor(request))
    await rotate_application_secret(command, secret=secret, store=adapters.streams)
    return secret


async def enabled_or_not(
    request: Caller, account_id: UUID, enabled: bool, adapters: Adapters
) -> ServiceAccount:
    """Disable or enable: a disabled account cannot log in, and its tokens carry no roles."""
    command = SetApplicationEnabled(
        application_id=account_id, enabled=enabled, metadata=actor(request)
    )
    changed = await set_application_enabled(command, store=adapters.streams)
    state, created = changed.state, changed.stamps.created
    return ServiceAccount(
        id=str(state.id),
        name=state.name,
        client_id=state.client_id,
        created_by=created.by,
        created_at=created.at,
        updated_at=changed.stamps.updated.at,
        enabled=state.enabled,
        last_login=None,
    )


def _wire(summary: ApplicationSummary) -> ServiceAccount:
    return ServiceAccount(
        id=str(summary.application_id),
        name=summary.name,
        client_id=summary.client_id,
        created_by=summary.created_by,
        created_at=summary.created_at,
        updated_at=summary.updated_at or summary.created_at,
        enabled=summary.enabled,
        last_login=None,
    )


@post("/api/v1/service-accounts", status_code=201, tags=["Service Accounts"])
async def create_service_account(
    request: Caller,
    data: JSONBody[ServiceAccountCreationRequest],
    adapters: NamedDependency[Adapters],
) -> ServiceAccountPostResponse:
    account_id, secret = await register(request, data.name, adapters)
    return ServiceAccountPostResponse(
        id=str(account_id), name=data.name, client_id=data.name, client_secret=secret
    )


@get("/api/v1/service-accounts", tags=["Service Accounts"])
async def list_service_accounts(
    request: Caller,
    adapters: NamedDependency[Adapters],
) -> list[ServiceAccount]:
    return await listed(request, adapters)


@get("/api/v1/service-accounts/{service_account_id:uuid}", tags=["Service Accounts"])
async def get_service_account(
    request: Caller,
    service_account_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> ServiceAccount:
    return await found(request, service_account_id, adapters)


@delete("/api/v1/service-accounts/{service_account_id:uuid}", tags=["Service Accounts"])
async def delete_service_account(
    request: Caller,
    service_account_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> None:
    """204; the credential is destroyed with it, so its secret logs in no more."""
    await removed(request, service_account_id, adapters)


class RegenerateServiceAccountSecretResponse(msgspec.Struct, frozen=True, rename="camel"):
    client_secret: str


@post(
    "/api/v1/service-accounts/{service_account_id:uuid}/secret",
    status_code=200,
    tags=["Service Accounts"],
)
async def regenerate_service_account_secret(
    request: Caller,
    service_account_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> RegenerateServiceAccountSecretResponse:
    """The new secret is shown in this response only; the old one logs in no more."""
    return RegenerateServiceAccountSecretResponse(
        await new_secret(request, service_account_id, adapters)
    )


class ServiceAccountPatchRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    enabled: bool


@patch("/api/v1/service-accounts/{service_account_id:uuid}", tags=["Service Accounts"])
async def patch_service_account(
    request: Caller,
    service_account_id: FromPath[UUID],
    data: JSONBody[ServiceAccountPatchRequest],
    adapters: NamedDependency[Adapters],
) -> ServiceAccount:
    """Disable or enable: a disabled account cannot log in, and its tokens carry no roles."""
    return await enabled_or_not(request, service_account_id, data.enabled, adapters)


SERVICE_ACCOUNT_ROUTES: Final = (
    create_service_account,
    list_service_accounts,
    get_service_account,
    delete_service_account,
    regenerate_service_account_secret,
    patch_service_account,
)
