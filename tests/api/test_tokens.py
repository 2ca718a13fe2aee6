"""POST /api/v1/token: the Run:ai login, for every spelling the Run:ai clients use."""

from collections.abc import AsyncIterator, Mapping
from uuid import UUID, uuid4

import asyncpg
import httpx
import pytest
from litestar import Litestar

from domain.commands import CreateApplication
from domain.events import EventMetadata
from domain.values import TENANT_ADMIN
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
from services.errors import ClientIdTakenError
from tests.api.client import client_for
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

AUTH = AuthSettings(signing_key="k" * 48, hash_time_cost=1, hash_memory_kib=8192)
SECRET = "s3cr3t-Value-That-Must-Never-Leak"


@pytest.fixture
async def app_id(clean_pool: asyncpg.Pool) -> UUID:
    keys = SecretKeys(hasher=SecretHasher(AUTH))
    app_store = PostgresStreams(clean_pool, DOMAIN_CODEC, keys=keys)
    registry = PostgresApplicationRegistry(app_store, clean_pool, keys)
    command = CreateApplication(
        application_id=uuid4(),
        name="ci-bot",
        grants=(TENANT_ADMIN,),
        metadata=EventMetadata(actor_subject="test-admin", actor_kind="system"),
    )
    await create_application(command, secret=SECRET, store=app_store, registry=registry)
    return command.application_id


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Litestar]:
    """The app over the test servers. Tests open its client themselves: the lifespan must be
    entered and left in one task."""
    nc = await connect_nats(NatsSettings(url=nats_url), name="token-tests")
    settings = Settings(auth=AUTH, consistency_wait_s=0.1)  # no projector: reads need not wait
    yield create_app(settings, resources=Resources(clean_pool, nc, nc.jetstream()))
    await nc.close()


async def post_token(app: Litestar, body: Mapping[str, object]) -> httpx.Response:
    async with client_for(app) as client:
        return await client.post("/api/v1/token", json=body)


@pytest.mark.parametrize(
    "body",
    [
        {"grantType": "app_token", "AppId": "ci-bot", "AppSecret": SECRET},
        {"grantType": "app_token", "appId": "ci-bot", "appSecret": SECRET},
        {"grantType": "app_token", "appID": "ci-bot", "appSecret": SECRET},
        {"grantType": "client_credentials", "clientID": "ci-bot", "clientSecret": SECRET},
    ],
)
async def test_every_client_spelling_gets_a_signed_token(
    app: Litestar, app_id: UUID, body: dict[str, str]
) -> None:
    response = await post_token(app, body)
    assert response.status_code == 200, response.text
    token = response.json()
    assert set(token) == {"accessToken", "expiresIn"}
    assert token["expiresIn"] == AUTH.token_ttl_s
    claims = TokenIssuer(AUTH).verify(token["accessToken"])
    assert claims["sub"] == str(app_id)
    assert claims["client_id"] == "ci-bot"


async def test_the_response_matches_the_run_ai_token_schema(app: Litestar, app_id: UUID) -> None:
    body = {"grantType": "app_token", "AppId": "ci-bot", "AppSecret": SECRET}
    assert_matches("TokenRequest", body)
    assert_matches("TokenResponse", (await post_token(app, body)).json())


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"grantType": "password", "AppId": "ci-bot", "AppSecret": SECRET}, "/grantType"),
        ({"AppId": "ci-bot", "AppSecret": SECRET}, "/grantType"),
        ({"grantType": "app_token", "AppId": "ci-bot"}, "/appSecret"),
        ({"grantType": "client_credentials", "clientSecret": SECRET}, "/clientID"),
        ({"grantType": "app_token", "AppId": 42, "AppSecret": SECRET}, "/appId"),
    ],
)
async def test_a_malformed_request_is_400_naming_the_field(
    app: Litestar, app_id: UUID, body: dict[str, object], pointer: str
) -> None:
    response = await post_token(app, body)
    assert response.status_code == 400
    problem = response.json()
    assert problem["code"] == 400
    assert [e["pointer"] for e in problem["errors"]] == [pointer]
    assert SECRET not in response.text


@pytest.mark.parametrize(("client_id", "secret"), [("ci-bot", "wrong"), ("nobody", SECRET)])
async def test_bad_credentials_are_401_without_saying_which_part(
    app: Litestar, app_id: UUID, client_id: str, secret: str
) -> None:
    body = {"grantType": "app_token", "AppId": client_id, "AppSecret": secret}
    response = await post_token(app, body)
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["message"] == "invalid client id or secret"
    assert SECRET not in response.text


async def test_without_a_signing_key_no_token_is_issued(
    clean_pool: asyncpg.Pool, nats_url: str, app_id: UUID
) -> None:
    nc = await connect_nats(NatsSettings(url=nats_url), name="token-tests")
    resources = Resources(pool=clean_pool, nc=nc, js=nc.jetstream())
    unsigned = Settings(auth=AuthSettings(hash_time_cost=1, hash_memory_kib=8192))
    try:
        body = {"grantType": "app_token", "AppId": "ci-bot", "AppSecret": SECRET}
        response = await post_token(create_app(unsigned, resources=resources), body)
    finally:
        await nc.close()
    assert response.status_code == 503
    assert "TRAINPLATE_AUTH__SIGNING_KEY" in response.json()["message"]


async def test_the_secret_is_kept_only_as_an_argon2id_hash(
    clean_pool: asyncpg.Pool, app_id: UUID
) -> None:
    stored = await clean_pool.fetch("SELECT data::text AS d, metadata::text AS m FROM events")
    assert stored
    assert all(SECRET not in row["d"] and SECRET not in row["m"] for row in stored)
    secret_hash = await clean_pool.fetchval("SELECT secret_hash FROM application_credentials")
    assert secret_hash.startswith("$argon2id$")
    assert SECRET not in secret_hash


async def test_a_second_application_with_the_same_name_is_refused(
    clean_pool: asyncpg.Pool, app_id: UUID
) -> None:
    keys = SecretKeys(hasher=SecretHasher(AUTH))
    app_store = PostgresStreams(clean_pool, DOMAIN_CODEC, keys=keys)
    registry = PostgresApplicationRegistry(app_store, clean_pool, keys)
    command = CreateApplication(
        application_id=uuid4(),
        name="ci-bot",
        grants=(),
        metadata=EventMetadata(actor_subject="test-admin", actor_kind="system"),
    )
    with pytest.raises(ClientIdTakenError):
        await create_application(command, secret="other", store=app_store, registry=registry)
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == 1
    assert await clean_pool.fetchval("SELECT count(*) FROM application_credentials") == 1


async def test_failed_logins_are_throttled_per_client_with_retry_after(
    app: Litestar, app_id: UUID
) -> None:
    """30 wrong secrets in 4 s once all reached the hash check; now the 11th waits."""
    wrong = {"grantType": "app_token", "AppId": "ci-bot", "AppSecret": "guess"}
    async with client_for(app) as client:
        for _ in range(10):
            assert (await client.post("/api/v1/token", json=wrong)).status_code == 401
        throttled = await client.post("/api/v1/token", json=wrong)
        right = await client.post("/api/v1/token", json={**wrong, "AppSecret": SECRET})
    assert throttled.status_code == 429, throttled.text
    assert int(throttled.headers["retry-after"]) > 0
    assert throttled.json()["code"] == 429
    assert right.status_code == 429  # while throttled, no secret is checked at all
