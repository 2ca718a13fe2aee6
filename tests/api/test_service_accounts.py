"""/api/v1/service-accounts: tenant admins create, list and read service accounts."""

from collections.abc import AsyncIterator
from uuid import UUID, uuid4

import asyncpg
import httpx
import pytest
from litestar import Litestar

from domain.commands import CreateApplication
from domain.events import EventMetadata
from domain.values import TENANT_ADMIN, Grant
from infra.bootstrap import Resources, connect_nats
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.streams import PostgresStreams
from infra.postgres.units_of_work import SecretKeys
from infra.security.access_tokens import TokenIssuer
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from infra.server.app import create_app
from infra.settings import AuthSettings, NatsSettings, Settings
from services.applications import create_application
from tests.api.client import client_for
from tests.integration.test_projector import catch_up, runner
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

AUTH = AuthSettings(signing_key="k" * 48, hash_time_cost=1, hash_memory_kib=8192)
ACCOUNTS = "/api/v1/service-accounts"


async def application(pool: asyncpg.Pool, name: str, grants: tuple[Grant, ...]) -> str:
    """Register an application and return a bearer token for it."""
    keys = SecretKeys(hasher=SecretHasher(AUTH))
    app_store = PostgresStreams(pool, DOMAIN_CODEC, keys=keys)
    registry = PostgresApplicationRegistry(app_store, pool, keys)
    app_id = uuid4()
    metadata = EventMetadata(actor_subject="setup", actor_kind="system")
    command = CreateApplication(application_id=app_id, name=name, grants=grants, metadata=metadata)
    await create_application(command, secret=f"{name}-secret", store=app_store, registry=registry)
    return TokenIssuer(AUTH).issue(app_id, name).access_token


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Litestar]:
    await clean_pool.execute("TRUNCATE application_catalogue")
    nc = await connect_nats(NatsSettings(url=nats_url), name="service-account-tests")
    settings = Settings(auth=AUTH, consistency_wait_s=0.1)  # no projector: reads need not wait
    yield create_app(settings, resources=Resources(clean_pool, nc, nc.jetstream()))
    await nc.close()


async def request(
    app: Litestar, method: str, path: str, token: str | None, **kw: object
) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with client_for(app) as client:
        return await client.request(method, path, headers=headers, **kw)  # type: ignore[arg-type]


async def test_an_admin_creates_a_service_account_that_can_log_in(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    admin = await application(clean_pool, "root-admin", (TENANT_ADMIN,))
    created = await request(app, "POST", "/api/v1/service-accounts", admin, json={"name": "ci-bot"})
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == {"id", "name", "clientId", "clientSecret"}
    assert (body["name"], body["clientId"]) == ("ci-bot", "ci-bot")
    login = {
        "grantType": "client_credentials",
        "clientID": "ci-bot",
        "clientSecret": body["clientSecret"],
    }
    token = await request(app, "POST", "/api/v1/token", None, json=login)
    assert token.status_code == 200
    stored = await clean_pool.fetch("SELECT data::text AS d, metadata::text AS m FROM events")
    assert all(body["clientSecret"] not in r["d"] + r["m"] for r in stored)


async def test_lists_and_gets_come_from_the_catalogue(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    admin = await application(clean_pool, "root-admin", (TENANT_ADMIN,))
    created = await request(app, "POST", "/api/v1/service-accounts", admin, json={"name": "ci-bot"})
    await catch_up(clean_pool, runner(clean_pool))
    listed = await request(app, "GET", "/api/v1/service-accounts", admin)
    assert listed.status_code == 200
    required = {
        "name",
        "createdBy",
        "createdAt",
        "updatedAt",
        "enabled",
        "lastLogin",
        "id",
        "clientId",
    }
    assert [a["name"] for a in listed.json()] == ["ci-bot", "root-admin"]
    assert all(required <= set(a) for a in listed.json())
    one = await request(app, "GET", f"/api/v1/service-accounts/{created.json()['id']}", admin)
    assert one.status_code == 200
    assert one.json()["createdBy"] == str(UUID(TokenIssuer(AUTH).verify(admin)["sub"]))  # type: ignore[arg-type]
    missing = await request(app, "GET", f"/api/v1/service-accounts/{uuid4()}", admin)
    assert missing.status_code == 404
    assert missing.json()["code"] == 404


async def test_a_caller_without_the_admin_role_is_refused_and_nothing_is_written(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    viewer = await application(
        clean_pool, "watcher", (Grant(role="viewer", scope_kind="tenant", scope_id="tenant"),)
    )
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    refused = await request(
        app, "POST", "/api/v1/service-accounts", viewer, json={"name": "sneaky"}
    )
    assert refused.status_code == 403
    assert refused.json()["code"] == 403
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before
    assert (await request(app, "GET", "/api/v1/service-accounts", viewer)).status_code == 403
    assert (await request(app, "GET", "/api/v1/service-accounts", None)).status_code == 401


@pytest.mark.parametrize(
    ("body", "status", "pointer"),
    [
        ({"name": "Not Valid"}, 400, "/name"),
        ({"name": "ci-bot", "extra": 1}, 400, "/extra"),
        ({}, 400, "/name"),
        ({"name": "root-admin"}, 409, "/name"),
    ],
)
async def test_bad_requests_name_the_field_and_write_nothing(
    app: Litestar,
    clean_pool: asyncpg.Pool,
    body: dict[str, object],
    status: int,
    pointer: str | None,
) -> None:
    admin = await application(clean_pool, "root-admin", (TENANT_ADMIN,))
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    response = await request(app, "POST", "/api/v1/service-accounts", admin, json=body)
    assert response.status_code == status, response.text
    problem = response.json()
    assert problem["code"] == status
    if pointer:
        assert pointer in [e["pointer"] for e in problem["errors"]]
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before


async def test_without_a_credential_key_a_keyed_create_is_refused_and_nothing_is_written(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    """Its secret could not be kept sealed for its retries (this app has no credential key)."""
    admin = await application(clean_pool, "root-admin", (TENANT_ADMIN,))
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    headers = {"authorization": f"Bearer {admin}", "idempotency-key": "k-1"}
    async with client_for(app) as client:
        keyed = await client.post(ACCOUNTS, headers=headers, json={"name": "ci-bot"})
    assert keyed.status_code == 503, keyed.text
    assert "encryption key" in keyed.json()["message"]
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before
    unkeyed = await request(app, "POST", ACCOUNTS, admin, json={"name": "ci-bot"})
    assert unkeyed.status_code == 201, unkeyed.text


async def test_deleting_destroys_the_credential_and_is_idempotent(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    admin = await application(clean_pool, "root-admin", (TENANT_ADMIN,))
    created = (await request(app, "POST", ACCOUNTS, admin, json={"name": "ci-bot"})).json()
    gone = await request(app, "DELETE", f"{ACCOUNTS}/{created['id']}", admin)
    assert gone.status_code == 204
    login = {
        "grantType": "client_credentials",
        "clientID": "ci-bot",
        "clientSecret": created["clientSecret"],
    }
    assert (await request(app, "POST", "/api/v1/token", None, json=login)).status_code == 401
    assert (
        await clean_pool.fetchval(
            "SELECT count(*) FROM application_credentials WHERE client_id = 'ci-bot'"
        )
        == 0
    )
    types = [
        r[0] for r in await clean_pool.fetch("SELECT type FROM events ORDER BY global_position")
    ]
    assert types[-1] == "application.deleted.v1"
    again = await request(app, "DELETE", f"{ACCOUNTS}/{created['id']}", admin)
    assert again.status_code == 204
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == len(types)
    await catch_up(clean_pool, runner(clean_pool))
    listed = await request(app, "GET", ACCOUNTS, admin)
    assert [a["name"] for a in listed.json()] == ["root-admin"]
    unknown = await request(app, "DELETE", f"{ACCOUNTS}/{uuid4()}", admin)
    assert unknown.status_code == 404


async def test_regenerating_the_secret_retires_the_old_one(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    admin = await application(clean_pool, "root-admin", (TENANT_ADMIN,))
    created = (await request(app, "POST", ACCOUNTS, admin, json={"name": "ci-bot"})).json()
    first = {"grantType": "app_token", "AppId": "ci-bot", "AppSecret": created["clientSecret"]}
    before = (await request(app, "POST", "/api/v1/token", None, json=first)).json()["accessToken"]
    # Any authenticated call shows whether the token still speaks for the account.
    assert (await request(app, "GET", "/api/v1/asset/environment", before)).status_code == 200
    fresh = await request(app, "POST", f"{ACCOUNTS}/{created['id']}/secret", admin)
    assert fresh.status_code == 200
    assert set(fresh.json()) == {"clientSecret"}
    new_secret = fresh.json()["clientSecret"]
    assert new_secret != created["clientSecret"]

    def login(secret: str) -> dict[str, str]:
        return {"grantType": "app_token", "AppId": "ci-bot", "AppSecret": secret}

    old = await request(app, "POST", "/api/v1/token", None, json=login(created["clientSecret"]))
    assert old.status_code == 401
    new = await request(app, "POST", "/api/v1/token", None, json=login(new_secret))
    assert new.status_code == 200
    # Tokens issued with the old secret are revoked with it, at once; the new one works.
    revoked = await request(app, "GET", "/api/v1/asset/environment", before)
    assert revoked.status_code == 401
    assert "revoked" in revoked.json()["detail"]
    after = new.json()["accessToken"]
    assert (await request(app, "GET", "/api/v1/asset/environment", after)).status_code == 200
    stored = await clean_pool.fetch("SELECT type, data::text AS d FROM events")
    assert "application.secret_rotated.v1" in [row["type"] for row in stored]
    assert all(new_secret not in row["d"] for row in stored)
    unknown = await request(app, "POST", f"{ACCOUNTS}/{uuid4()}/secret", admin)
    assert unknown.status_code == 404


async def test_a_disabled_account_cannot_log_in_or_act_until_enabled_again(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    admin = await application(clean_pool, "root-admin", (TENANT_ADMIN,))
    created = await request(app, "POST", ACCOUNTS, admin, json={"name": "ci-bot"})
    account_id, secret = created.json()["id"], created.json()["clientSecret"]
    grant = {
        "subjectId": account_id,
        "subjectType": "service-account",
        "roleId": 1,
        "scopeId": "",
        "scopeType": "tenant",
    }
    assert (
        await request(app, "POST", "/api/v1/authorization/access-rules", admin, json=grant)
    ).status_code == 201
    login = {"grantType": "client_credentials", "clientID": "ci-bot", "clientSecret": secret}
    token = (await request(app, "POST", "/api/v1/token", None, json=login)).json()["accessToken"]
    assert (await request(app, "GET", ACCOUNTS, token)).status_code == 200

    disabled = await request(
        app, "PATCH", f"{ACCOUNTS}/{account_id}", admin, json={"enabled": False}
    )
    assert disabled.status_code == 200, disabled.text
    assert_matches("ServiceAccount", disabled.json())
    assert disabled.json()["enabled"] is False
    assert (await request(app, "POST", "/api/v1/token", None, json=login)).status_code == 401
    refused = await request(app, "GET", ACCOUNTS, token)
    assert refused.status_code == 401  # its token was revoked with the disabling
    assert "revoked" in refused.json()["detail"]

    await catch_up(clean_pool, runner(clean_pool))
    listed = (await request(app, "GET", f"{ACCOUNTS}/{account_id}", admin)).json()
    assert listed["enabled"] is False
    enabled = await request(app, "PATCH", f"{ACCOUNTS}/{account_id}", admin, json={"enabled": True})
    assert enabled.json()["enabled"] is True
    assert (await request(app, "GET", ACCOUNTS, token)).status_code == 401  # revoked for good
    again = await request(app, "POST", "/api/v1/token", None, json=login)
    assert again.status_code == 200
    assert (await request(app, "GET", ACCOUNTS, again.json()["accessToken"])).status_code == 200
    bad = await request(app, "PATCH", f"{ACCOUNTS}/{account_id}", admin, json={"enabled": "no"})
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["pointer"] == "/enabled"
