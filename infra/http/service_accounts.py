"""`/api/v1/service-accounts`: applications as Run:ai presents them. Tenant admins only.

Writes answer from the write side (the secret is shown once, in the creation response); reads come
from the application catalogue read model, so they may trail a write by the projector's lag.
"""

import secrets
from datetime import datetime
from uuid import UUID, uuid4

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
from infra.http.callers import Caller, actor
from projections import application_catalogue
from services import access
from services.applications import (
    create_application,
    delete_application,
    rotate_application_secret,
    set_application_enabled,
)
from services.ports import ApplicationRegistry


class ServiceAccountCreationRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str


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


async def _require_tenant_admin(caller: Caller, registry: ApplicationRegistry, action: str) -> None:
    """Through services/access, as every other authorisation: the caller's grants come from its
    own stream (an application's or an external user's, whatever its subject looks like)."""
    await access.require(actor(caller), (TENANT,), "admin", action, streams=registry)


@post("/api/v1/service-accounts", status_code=201, tags=["Service Accounts"])
async def create_service_account(
    request: Caller,
    data: JSONBody[ServiceAccountCreationRequest],
    adapters: NamedDependency[Adapters],
) -> ServiceAccountPostResponse:
    await _require_tenant_admin(request, adapters.registry, "create service accounts")
    secret = secrets.token_urlsafe(32)
    command = CreateApplication(
        application_id=uuid4(),
        name=data.name,
        grants=(),  # roles come from access rules, granted separately
        metadata=actor(request),
    )
    await create_application(command, secret=secret, registry=adapters.registry)
    return ServiceAccountPostResponse(
        id=str(command.application_id), name=data.name, client_id=data.name, client_secret=secret
    )


@get("/api/v1/service-accounts", tags=["Service Accounts"])
async def list_service_accounts(
    request: Caller,
    adapters: NamedDependency[Adapters],
) -> list[ServiceAccount]:
    await _require_tenant_admin(request, adapters.registry, "list service accounts")
    async with adapters.resources.pool.acquire() as conn:
        return [_wire(a) for a in await application_catalogue.list_applications(conn)]


@get("/api/v1/service-accounts/{service_account_id:uuid}", tags=["Service Accounts"])
async def get_service_account(
    request: Caller,
    service_account_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> ServiceAccount:
    await _require_tenant_admin(request, adapters.registry, "read service accounts")
    async with adapters.resources.pool.acquire() as conn:
        found = await application_catalogue.get_application(conn, service_account_id)
    if found is None:
        raise applications.ApplicationNotFoundError(service_account_id)
    return _wire(found)


@delete("/api/v1/service-accounts/{service_account_id:uuid}", tags=["Service Accounts"])
async def delete_service_account(
    request: Caller,
    service_account_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> None:
    """204; the credential is destroyed with it, so its secret logs in no more."""
    await _require_tenant_admin(request, adapters.registry, "delete service accounts")
    metadata = actor(request)
    command = DeleteApplication(application_id=service_account_id, metadata=metadata)
    await delete_application(command, registry=adapters.registry)


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
    await _require_tenant_admin(request, adapters.registry, "regenerate service account secrets")
    secret = secrets.token_urlsafe(32)
    metadata = actor(request)
    command = RotateApplicationSecret(application_id=service_account_id, metadata=metadata)
    await rotate_application_secret(command, secret=secret, registry=adapters.registry)
    return RegenerateServiceAccountSecretResponse(secret)


def _wire(summary: application_catalogue.ApplicationSummary) -> ServiceAccount:
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
    await _require_tenant_admin(request, adapters.registry, "update service accounts")
    command = SetApplicationEnabled(
        application_id=service_account_id, enabled=data.enabled, metadata=actor(request)
    )
    changed = await set_application_enabled(command, store=adapters.store)
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
