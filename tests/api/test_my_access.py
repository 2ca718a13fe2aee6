"""What may I do: a caller with no admin role reads its own access rules, the permissions its
roles carry and the scopes where each action is permitted, exactly as its requests are judged."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from tests.api.support import call, project_all
from tests.api.test_access_rules import EDITOR, login
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

ME = "/api/v1/authorization/me/access-rules"
RULES = "/api/v1/authorization/access-rules"
PERMISSIONS = "/api/v1/authorization/permissions"
SCOPES = "/api/v1/authorization/permitted-scopes"


async def org_and_bot(app: Litestar, admin: str) -> dict[str, Any]:
    """A cluster, a department with project llm, project vision under the cluster, and a
    service account `bot` that holds nothing yet."""
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    body = {"name": "research", "clusterId": cluster["uuid"]}
    department = (await call(app, "POST", "/api/v1/org-unit/departments", admin, json=body)).json()
    projects = {}
    for name, parent in (("llm", department["id"]), ("vision", None)):
        body = {"name": name, "clusterId": cluster["uuid"], "parentId": parent}
        made = await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)
        projects[name] = made.json()
    account = await call(app, "POST", "/api/v1/service-accounts", admin, json={"name": "bot"})
    bot = await login(app, "bot", account.json()["clientSecret"])
    return {
        "cluster": cluster,
        "department": department,
        "projects": projects,
        "bot_id": account.json()["id"],
        "bot": bot,
    }


async def grant(app: Litestar, admin: str, subject: str, role_id: int, project: str) -> int:
    body = {
        "subjectId": subject,
        "subjectType": "service-account",
        "roleId": role_id,
        "scopeId": project,
        "scopeType": "project",
    }
    made = await call(app, "POST", RULES, admin, json=body)
    assert made.status_code == 201, made.text
    rule: int = made.json()["id"]
    return rule


async def test_a_service_account_reads_its_own_rules_and_what_they_permit(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await org_and_bot(app, admin)
    bot, llm = found["bot"], found["projects"]["llm"]["id"]
    rule = await grant(app, admin, found["bot_id"], EDITOR, llm)
    await project_all(clean_pool)

    mine = await call(app, "GET", ME, bot)
    assert mine.status_code == 200, mine.text
    assert_matches("MeAccessRulesResponse", mine.json())
    page = mine.json()["accessRules"]
    assert (page["totalRecords"], page["displayRecords"]) == (1, 1)
    (only,) = page["accessRules"]
    assert_matches("MeAccessRule", only)
    assert (only["id"], only["roleName"], only["scopeType"], only["scopeName"]) == (
        rule,
        "editor",
        "project",
        "llm",
    )
    assert only["subjectId"] == found["bot_id"]
    count = await call(app, "GET", f"{ME}/count", bot)
    assert count.json() == {"count": 1}
    assert (await call(app, "GET", f"{ME}/count", bot, params={"search": "LLM"})).json() == {
        "count": 1
    }
    assert (await call(app, "GET", f"{ME}/count", bot, params={"search": "vision"})).json() == {
        "count": 0
    }
    paged = await call(app, "GET", ME, bot, params={"offset": 1, "limit": 1})
    assert paged.json()["accessRules"]["totalRecords"] == 1
    assert paged.json()["accessRules"]["accessRules"] == []

    held = await call(app, "GET", PERMISSIONS, bot)
    assert held.status_code == 200, held.text
    assert_matches("Permissions", held.json())
    actions = {p["resourceType"]: p["actions"] for p in held.json()}
    assert actions["environments"] == ["create", "read", "update", "delete"]
    assert actions["project"] == ["read"]
    assert actions["workloads"] == ["create", "read", "delete"]
    assert actions["access_rules"] == ["read"]
    assert "service-account" not in actions

    asked = {"resourceType": "environments", "action": "create"}
    scopes = await call(app, "POST", SCOPES, bot, json=asked)
    assert scopes.status_code == 200, scopes.text
    assert_matches("PermittedScopesActions", scopes.json())
    create, read = scopes.json()["create"], scopes.json()["read"]
    assert (create["tenants"], create["clusters"], create["departments"]) == ([], [], [])
    assert create["projects"] == [llm]
    # Reading reaches what the lists show: the project and the units above it.
    assert read == {
        "system": False,
        "tenants": ["1"],
        "clusters": [found["cluster"]["uuid"]],
        "departments": [found["department"]["id"]],
        "projects": [llm],
    }
    accounts = await call(app, "POST", SCOPES, bot, json={"resourceType": "apps"})
    assert all(not any(v for v in s.values()) for s in accounts.json().values())


async def test_an_admin_made_so_at_creation_holds_a_rule_without_an_id(
    app: Litestar, admin: str
) -> None:
    mine = await call(app, "GET", ME, admin)
    (only,) = mine.json()["accessRules"]["accessRules"]
    assert_matches("MeAccessRule", only)
    assert "id" not in only
    assert (only["roleName"], only["scopeType"], only["scopeId"], only["scopeName"]) == (
        "admin",
        "tenant",
        "",
        "tenant",
    )
    scopes = await call(app, "POST", SCOPES, admin, json={"resourceType": "service-account"})
    assert scopes.json()["delete"]["tenants"] == ["1"]


async def test_a_grant_and_a_revocation_count_from_the_next_request_on(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """What the caller holds is the write side's, as every check's: the access rules read model
    (no projector follows the log here after the org is made) is not waited for."""
    found = await org_and_bot(app, admin)
    await project_all(clean_pool)
    bot = found["bot"]
    assert (await call(app, "GET", f"{ME}/count", bot)).json() == {"count": 0}
    assert (await call(app, "GET", PERMISSIONS, bot)).json() == []
    rule = await grant(app, admin, found["bot_id"], 3, found["projects"]["vision"]["id"])
    mine = (await call(app, "GET", ME, bot)).json()["accessRules"]["accessRules"]
    assert [(r["roleName"], r["scopeName"]) for r in mine] == [("submitter", "vision")]
    assert "id" not in mine[0]  # its rule is not in the read model yet
    await project_all(clean_pool)
    mine = (await call(app, "GET", ME, bot)).json()["accessRules"]["accessRules"]
    assert [r["id"] for r in mine] == [rule]
    scopes = await call(app, "POST", SCOPES, bot, json={"resourceType": "workloads"})
    assert scopes.json()["create"]["projects"] == [found["projects"]["vision"]["id"]]
    assert (await call(app, "DELETE", f"{RULES}/{rule}", admin)).status_code == 204
    assert (await call(app, "GET", f"{ME}/count", bot)).json() == {"count": 0}


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"resourceType": "spaceships"}, "/resourceType"),
        ({"resourceType": "workloads", "action": "sync"}, "/action"),
        ({}, "/resourceType"),
        ({"resourceType": "workloads", "verb": "create"}, ""),
    ],
)
async def test_a_bad_question_is_refused_naming_the_field(
    app: Litestar, admin: str, body: dict[str, Any], pointer: str
) -> None:
    refused = await call(app, "POST", SCOPES, admin, json=body)
    assert refused.status_code == 400, refused.text
    assert refused.json()["code"] == 400
    if pointer:
        assert refused.json()["errors"][0]["pointer"] == pointer


async def test_the_access_rules_count_as_the_list_shows_them(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await org_and_bot(app, admin)
    for role_id, project in ((EDITOR, "llm"), (4, "vision")):
        await grant(app, admin, found["bot_id"], role_id, found["projects"][project]["id"])
    await project_all(clean_pool)
    for params, expected in (
        ({}, 2),
        ({"filterBy": "roleName==editor"}, 1),
        ({"filterBy": "roleId>=3"}, 1),
        ({"filterBy": "scopeName=^v,scopeType==project"}, 1),
        ({"filterBy": "createdAt>=2020-01-01T00:00:00Z"}, 2),
        ({"filterBy": "deletedAt>=2020-01-01T00:00:00Z"}, 0),
        ({"search": "LL"}, 1),
    ):
        count = await call(app, "GET", f"{RULES}/count", admin, params=params)
        assert count.status_code == 200, count.text
        assert count.json() == {"count": expected}, params
        listed = await call(app, "GET", RULES, admin, params=params)
        assert listed.json()["totalRecords"] == expected, params
    # The bot sees the rules on the scopes it sees, as the list shows them.
    assert (await call(app, "GET", f"{RULES}/count", found["bot"])).json() == {"count": 2}
    refused = await call(app, "GET", f"{RULES}/count", admin, params={"filterBy": "colour==red"})
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["pointer"] == "/filterBy/0"
