"""Liveness and readiness over HTTP, with the app wired to the real servers."""

from collections.abc import AsyncIterator
from pathlib import Path
from uuid import uuid4

import asyncpg
import pytest

from domain.values import TENANT_ADMIN
from infra.bootstrap import Resources, connect_nats, create_pool
from infra.cli.embedded import EmbeddedPostgres
from infra.postgres.migrate import apply_migrations, available_migrations
from infra.security.access_tokens import TokenIssuer
from infra.server.app import create_app
from infra.settings import DatabaseSettings, NatsSettings, Settings
from tests.api.client import client_for
from tests.api.support import AUTH, CREDENTIALS, api_app, call, project_all, token_for

pytestmark = [pytest.mark.api, pytest.mark.integration]

ENVIRONMENT = {"meta": {"name": "e", "scope": "tenant"}, "spec": {"image": "i"}}


@pytest.fixture
async def resources(pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Resources]:
    nc = await connect_nats(NatsSettings(url=nats_url), name="api-tests")
    yield Resources(pool=pool, nc=nc, js=nc.jetstream())
    if not nc.is_closed:
        await nc.close()


async def test_healthz_answers_without_touching_anything(resources: Resources) -> None:
    async with client_for(create_app(Settings(), resources=resources)) as client:
        response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_readyz_reports_database_migrations_and_broker(resources: Resources) -> None:
    async with client_for(create_app(Settings(), resources=resources)) as client:
        response = await client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert set(body["checks"]) == {"database", "migrations", "broker", "followers"}
    assert all(check["ready"] for check in body["checks"].values())


async def test_readyz_is_503_and_names_the_broker_when_nats_is_gone(resources: Resources) -> None:
    await resources.nc.close()
    async with client_for(create_app(Settings(), resources=resources)) as client:
        response = await client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "not ready"
    assert body["checks"]["broker"] == {"ready": False, "detail": "not connected"}
    assert body["checks"]["database"]["ready"] is True


async def test_readyz_is_503_and_names_the_database_when_it_is_down(
    server_dir: Path, nats_url: str
) -> None:
    with EmbeddedPostgres(server_dir / "pg") as server:
        pool = await create_pool(DatabaseSettings(url=server.url), application_name="readyz-test")
        nc = await connect_nats(NatsSettings(url=nats_url), name="readyz-test")
        resources = Resources(pool=pool, nc=nc, js=nc.jetstream())
        app = create_app(Settings(), resources=resources)
        try:
            async with client_for(app) as client:
                before = await client.get("/readyz")
                server.stop(mode="immediate")
                after = await client.get("/readyz")
        finally:
            await nc.close()
            pool.terminate()
    assert before.json()["checks"]["migrations"] == {
        "ready": False,
        "detail": f"pending: {[m.version for m in available_migrations()]}",
    }
    assert after.status_code == 503
    checks = after.json()["checks"]
    assert checks["database"]["ready"] is False
    assert checks["database"]["detail"].startswith("database unreachable")
    assert checks["broker"]["ready"] is True


async def test_metrics_say_how_far_each_follower_trails_the_log_without_a_token(
    clean_pool: asyncpg.Pool, nats_url: str
) -> None:
    async with api_app(clean_pool, nats_url) as app:
        admin = await token_for(clean_pool, "root-admin", (TENANT_ADMIN,))
        made = await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})
        assert made.status_code in (200, 201, 202), made.text
        before = (await call(app, "GET", "/metrics", None)).text
        await project_all(clean_pool)
        after = await call(app, "GET", "/metrics", None)
    assert after.status_code == 200
    assert after.headers["content-type"].startswith("text/plain")
    lag = 'trainplate_follower_lag_events{follower="org_units"}'
    assert f"{lag} 2.0" in before  # the admin application, then the cluster
    assert f"{lag} 0.0" in after.text
    assert 'trainplate_follower_lag_seconds{follower="relay"}' in after.text
    assert 'trainplate_follower_position{follower="workload_catalogue"}' in after.text


async def test_every_endpoint_answers_503_with_retry_after_while_the_database_is_down(
    server_dir: Path, nats_url: str
) -> None:
    with EmbeddedPostgres(server_dir / "pg") as server:
        pool = await create_pool(DatabaseSettings(url=server.url), application_name="down-test")
        async with pool.acquire() as conn:
            await apply_migrations(conn)
        nc = await connect_nats(NatsSettings(url=nats_url), name="down-test")
        app = create_app(
            Settings(auth=AUTH, credentials=CREDENTIALS),
            resources=Resources(pool=pool, nc=nc, js=nc.jetstream()),
        )
        token = TokenIssuer(AUTH).issue(uuid4(), "someone").access_token  # needs no database
        try:
            server.stop(mode="immediate")
            answers = {
                (method, path): await call(app, method, path, token, json=body)
                for method, path, body in [
                    ("GET", "/api/v1/asset/environment", None),
                    ("GET", "/api/v1/workload-templates", None),
                    ("GET", "/api/v1/org-unit/projects", None),
                    ("GET", "/api/v1/workloads", None),
                    ("GET", "/api/v1/authorization/access-rules", None),
                    ("POST", "/api/v1/asset/environment", ENVIRONMENT),
                    ("POST", "/api/v1/clusters", {"name": "c"}),
                ]
            }
        finally:
            await nc.close()
            pool.terminate()
    for request, answer in answers.items():
        assert answer.status_code == 503, (request, answer.text)
        assert answer.headers["retry-after"] == "2", request
        assert answer.json()["code"] == 503
