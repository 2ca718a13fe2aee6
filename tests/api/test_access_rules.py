"""Roles and access rules: an admin gives a service account a role on a scope, and takes it back."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import TENANT_ADMIN, Grant
from tests.api.support import call, project_all, token_for
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

RULES = "/api/v1/authorization/access-rules"
EDITOR = 2


async def login(app: Litestar, client_id: str, secret: str) -> str:
    body = {"grantType": "client_credentials", "clientID": client_id, "clientSecret": secret}
    response = await call(app, "POST", "/api/v1/token", None, json=body)
    assert response.status_code == 200, response.text
    token: str = response.json()["accessToken"]
    return token


def environment(name: str, project: dict[str, Any]) -> dict[str, Any]:
    return {
        "meta": {"name": name, "scope": "project", "projectId": int(project["id"])},
        "spec": {"image": "pt:2"},
    }


async def test_the_roles_are_run_ai_roles_with_their_permissions(app: Litestar, admin: str) -> None:
    roles = await call(app, "GET", "/api/v1/authorization/roles", admin)
    assert roles.status_code == 200
    assert_matches("RolesV1", roles.json())
    assert [r["name"] for r in roles.json()] == ["admin", "editor", "submitter", "viewer"]


async def test_a_rule_gives_a_service_account_a_role_until_it_is_deleted(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    llm, vision = [
        (
            await call(
                app,
                "POST",
                "/api/v1/org-unit/projects",
                admin,
                json={"name": name, "clusterId": cluster["uuid"]},
            )
        ).json()
        for name in ("llm", "vision")
    ]
    account = await call(app, "POST", "/api/v1/service-accounts", admin, json={"name": "ci-bot"})
    bot_id, secret = account.json()["id"], account.json()["clientSecret"]
    bot = await login(app, "ci-bot", secret)
    # With no role anywhere, the project is out of the bot's sight: as if it did not exist.
    refused = await call(app, "POST", "/api/v1/asset/environment", bot, json=environment("e", llm))
    assert refused.status_code == 400, refused.text
    assert refused.json()["type"].endswith("/unknown-scope")

    body = {
        "subjectId": bot_id,
        "subjectType": "service-account",
        "roleId": EDITOR,
        "scopeId": llm["id"],
        "scopeType": "project",
    }
    assert_matches("AccessRuleCreationFields", body)
    created = await call(app, "POST", RULES, admin, json=body)
    assert created.status_code == 201, created.text
    assert_matches("AccessRule", created.json())
    again = await call(app, "POST", RULES, admin, json=body)
    assert again.json()["id"] == created.json()["id"]  # the same grant is given once

    made = await call(app, "POST", "/api/v1/asset/environment", bot, json=environment("e", llm))
    assert made.status_code == 202, made.text
    elsewhere = await call(
        app, "POST", "/api/v1/asset/environment", bot, json=environment("e", vision)
    )
    # a project out of the caller's sight answers as one that does not exist
    assert elsewhere.status_code == 400, elsewhere.text
    assert elsewhere.json()["type"].endswith("/unknown-scope")

    await project_all(clean_pool)
    listed = await call(app, "GET", RULES, admin, params={"subjectId": bot_id})
    assert listed.status_code == 200
    assert [r["scopeName"] for r in listed.json()["accessRules"]] == ["llm"]
    assert listed.json()["totalRecords"] == 1
    assert_matches("AccessRule", listed.json()["accessRules"][0])
    # The bot sees its own project's rule but may not revoke it: that takes an admin.
    refused = await call(app, "DELETE", f"{RULES}/{created.json()['id']}", bot)
    assert refused.status_code == 403
    assert (await call(app, "DELETE", f"{RULES}/{created.json()['id']}", admin)).status_code == 204
    revoked = await call(app, "POST", "/api/v1/asset/environment", bot, json=environment("f", llm))
    assert revoked.status_code == 400  # with its only role gone, the project is out of sight


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        ({"subjectType": "group"}, "/subjectType"),
        ({"subjectId": "not-a-uuid"}, "/subjectId"),
        ({"subjectId": "0b7c4f7e-2a1d-4c3b-9e8f-6a5d4c3b2a10"}, "/subjectId"),
        ({"roleId": 99}, "/roleId"),
        ({"scopeType": "project", "scopeId": "4242"}, "/scopeId"),
    ],
)
async def test_bad_rules_name_the_field(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, change: dict[str, Any], pointer: str
) -> None:
    account = await call(app, "POST", "/api/v1/service-accounts", admin, json={"name": "bot"})
    body = {
        "subjectId": account.json()["id"],
        "subjectType": "app",
        "roleId": EDITOR,
        "scopeId": "",
        "scopeType": "tenant",
        **change,
    }
    response = await call(app, "POST", RULES, admin, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["errors"][0]["pointer"] == pointer
    count = "SELECT count(*) FROM events WHERE type = 'application.role_granted.v1'"
    assert await clean_pool.fetchval(count) == 0


async def test_only_admins_of_the_scope_grant_roles(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    editor = await token_for(
        clean_pool, "editor", (Grant(role="editor", scope_kind="tenant", scope_id="tenant"),)
    )
    admin = await token_for(clean_pool, "admin", (TENANT_ADMIN,))
    account = await call(app, "POST", "/api/v1/service-accounts", admin, json={"name": "bot"})
    body = {
        "subjectId": account.json()["id"],
        "subjectType": "app",
        "roleId": 1,
        "scopeId": "",
        "scopeType": "tenant",
    }
    assert (await call(app, "POST", RULES, editor, json=body)).status_code == 403


async def test_a_rule_granted_a_moment_ago_is_revoked_at_once(app: Litestar, admin: str) -> None:
    account = await call(app, "POST", "/api/v1/service-accounts", admin, json={"name": "bot"})
    body = {
        "subjectId": account.json()["id"],
        "subjectType": "service-account",
        "roleId": EDITOR,
        "scopeType": "tenant",
        "scopeId": "tenant",
    }
    rule = (await call(app, "POST", RULES, admin, json=body)).json()["id"]
    assert (await call(app, "DELETE", f"{RULES}/{rule}", admin)).status_code == 204
    again = await call(app, "DELETE", f"{RULES}/{rule}", admin)
    assert again.status_code == 404, again.text
