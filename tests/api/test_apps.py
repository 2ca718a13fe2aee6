"""/api/v1/apps: service accounts under their older name, in Run:ai's application bodies; one
thing seen through both names."""

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, project_all, token_for
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

APPS = "/api/v1/apps"


async def logs_in(app: Litestar, name: str, secret: str) -> int:
    body = {"grantType": "app_token", "AppId": name, "AppSecret": secret}
    return (await call(app, "POST", "/api/v1/token", None, json=body)).status_code


async def test_an_application_lives_and_dies_under_its_older_name(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    body = {"name": "legacy-bot"}
    assert_matches("ApplicationCreationRequest", body)
    created = await call(app, "POST", APPS, admin, json=body)
    assert created.status_code == 201, created.text
    assert_matches("ApplicationPostResponse", created.json())
    made = created.json()
    assert (made["name"], made["clientId"]) == ("legacy-bot", "legacy-bot")
    assert await logs_in(app, "legacy-bot", made["secret"]) == 200
    path = f"{APPS}/{made['id']}"

    await project_all(clean_pool)
    listed = await call(app, "GET", APPS, admin)
    assert listed.status_code == 200, listed.text
    assert_matches("Applications", listed.json())
    assert made["id"] in [a["id"] for a in listed.json()]
    got = await call(app, "GET", path, admin)
    assert_matches("Application", got.json())
    same = await call(app, "GET", f"/api/v1/service-accounts/{made['id']}", admin)
    assert same.json() == got.json()  # one application, two names

    disabled = await call(app, "PATCH", path, admin, json={"enabled": False})
    assert disabled.status_code == 200, disabled.text
    assert disabled.json()["enabled"] is False
    assert await logs_in(app, "legacy-bot", made["secret"]) == 401
    assert (await call(app, "PATCH", path, admin, json={"enabled": True})).status_code == 200

    renewed = await call(app, "POST", f"{path}/secret", admin)
    assert renewed.status_code == 200, renewed.text
    assert set(renewed.json()) == {"secret"}
    assert await logs_in(app, "legacy-bot", made["secret"]) == 401
    assert await logs_in(app, "legacy-bot", renewed.json()["secret"]) == 200

    assert (await call(app, "DELETE", path, admin)).status_code == 204
    assert await logs_in(app, "legacy-bot", renewed.json()["secret"]) == 401
    await project_all(clean_pool)
    gone = await call(app, "GET", path, admin)
    assert gone.status_code == 404, gone.text


async def test_only_tenant_admins_manage_applications_and_names_follow_the_rule(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    editor = await token_for(
        clean_pool, "editor", (Grant(role="editor", scope_kind="tenant", scope_id="tenant"),)
    )
    refused = await call(app, "POST", APPS, editor, json={"name": "sneaky"})
    assert refused.status_code == 403, refused.text
    assert (await call(app, "GET", APPS, editor)).status_code == 403
    bad = await call(app, "POST", APPS, admin, json={"name": "Not_A_Name"})
    assert bad.status_code == 400, bad.text
    assert bad.json()["errors"][0]["pointer"] == "/name"
    taken = await call(app, "POST", APPS, admin, json={"name": "editor"})
    assert taken.status_code == 409, taken.text
    missing = await call(app, "POST", f"{APPS}/0b7c4f7e-2a1d-4c3b-9e8f-6a5d4c3b2a10/secret", admin)
    assert missing.status_code == 404, missing.text
    not_an_id = await call(app, "GET", f"{APPS}/not-an-id", admin)
    assert not_an_id.status_code == 404, not_an_id.text
    assert not_an_id.json()["code"] == not_an_id.status_code
