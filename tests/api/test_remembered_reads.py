"""A template's or an asset's creation, or a workload's submission, may be decided on what its
API process read for an earlier one (the caller's roles, the template, the assets it links), and
is written only if those streams have not moved on since: a change made through another API
process in between is what the creation is checked against and built from, and a refusal is
never made on what may be old. Two apps over one database, each kept running across its
requests, stand for two API processes."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar

from tests.api.client import client_for
from tests.api.support import api_app, call, sent
from tests.api.test_access_rules import EDITOR, RULES
from tests.api.test_in_use import ENVIRONMENTS, SUPPORTS, TEMPLATES, template
from tests.api.test_templates import assets, org
from tests.api.test_templates import template as in_project
from tests.api.test_workloads import WORKLOADS

pytestmark = [pytest.mark.api, pytest.mark.integration]

IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3"


@asynccontextmanager
async def two_processes(
    app: Litestar, pool: asyncpg.Pool, nats_url: str
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Clients of two API processes over the same database, each kept running throughout."""
    async with (
        api_app(pool, nats_url) as other,
        client_for(app) as one,
        client_for(other) as two,
    ):
        yield one, two


async def made(client: httpx.AsyncClient, token: str, path: str, body: dict[str, Any]) -> str:
    answer = await sent(client, "POST", path, token, json=body)
    assert answer.status_code == 202, answer.text
    return str(answer.json()["meta"]["id"])


async def environment(client: httpx.AsyncClient, admin: str) -> str:
    meta = {"name": "pt", "scope": "tenant", "workloadSupportedTypes": SUPPORTS}
    return await made(client, admin, ENVIRONMENTS, {"meta": meta, "spec": {"image": IMAGE}})


async def written(pool: asyncpg.Pool, name: str) -> int:
    """How many events carry `name` in their meta (what a refused creation would have written)."""
    query = "SELECT count(*) FROM events WHERE data->'meta'->>'name' = $1"
    return int(await pool.fetchval(query, name))


async def test_an_asset_changed_through_another_process_is_what_the_next_template_is_built_from(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, nats_url: str
) -> None:
    async with two_processes(app, clean_pool, nats_url) as (one, two):
        env = await environment(one, admin)
        await made(one, admin, TEMPLATES, template("first", environment=env))  # `one` read it
        changed = {"meta": {"name": "pt"}, "spec": {"image": "nvcr.io/nvidia/pytorch:25.01-py3"}}
        updated = await sent(two, "PUT", f"{ENVIRONMENTS}/{env}", admin, json=changed)
        assert updated.status_code == 202, updated.text

        second = await sent(one, "POST", TEMPLATES, admin, json=template("second", environment=env))

        assert second.status_code == 202, second.text
        assert second.json()["combinedSpec"]["image"] == "nvcr.io/nvidia/pytorch:25.01-py3"


async def test_an_asset_deleted_through_another_process_is_not_linked_by_the_next_template(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, nats_url: str
) -> None:
    async with two_processes(app, clean_pool, nats_url) as (one, two):
        env = await environment(one, admin)
        first = await made(one, admin, TEMPLATES, template("first", environment=env))
        assert (await sent(one, "DELETE", f"{TEMPLATES}/{first}", admin)).is_success  # frees it
        assert (await sent(two, "DELETE", f"{ENVIRONMENTS}/{env}", admin)).status_code == 202

        refused = await sent(
            one, "POST", TEMPLATES, admin, json=template("second", environment=env)
        )

        assert refused.status_code == 400, refused.text
        assert "/assets/environment" in refused.text
        assert await written(clean_pool, "second") == 0


async def editor_bot(client: httpx.AsyncClient, admin: str) -> tuple[str, str, str]:
    """A service account made editor of a new project: its token, the project's id and the
    access rule's id."""
    cluster = (await sent(client, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    project = await sent(
        client, "POST", "/api/v1/org-unit/projects", admin,
        json={"name": "llm", "clusterId": cluster["uuid"]},
    )  # fmt: skip
    project_id = str(project.json()["id"])
    account = await sent(client, "POST", "/api/v1/service-accounts", admin, json={"name": "bot"})
    rule = await sent(client, "POST", RULES, admin, json={
        "subjectId": account.json()["id"], "subjectType": "service-account", "roleId": EDITOR,
        "scopeId": project_id, "scopeType": "project",
    })  # fmt: skip
    assert rule.status_code == 201, rule.text
    grant = {"grantType": "client_credentials", "clientID": "bot",
             "clientSecret": account.json()["clientSecret"]}  # fmt: skip
    token = (await sent(client, "POST", "/api/v1/token", None, json=grant)).json()["accessToken"]
    return str(token), project_id, str(rule.json()["id"])


@pytest.mark.parametrize("kind", ["template", "environment"])
async def test_a_role_revoked_through_another_process_creates_nothing_more(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, nats_url: str, kind: str
) -> None:
    async with two_processes(app, clean_pool, nats_url) as (one, two):
        bot, project_id, rule = await editor_bot(one, admin)

        def creation(name: str) -> tuple[str, dict[str, Any]]:
            if kind == "environment":
                meta = {"name": name, "scope": "project", "projectId": project_id}
                return ENVIRONMENTS, {"meta": meta, "spec": {"image": IMAGE}}
            body = template(name)
            body["meta"] = {"name": name, "scopeType": "project", "scopeId": project_id}
            return TEMPLATES, body

        path, body = creation("allowed")
        allowed = await sent(one, "POST", path, bot, json=body)
        assert allowed.status_code == 202, allowed.text  # `one` read the bot's roles for it
        revoked = await sent(two, "DELETE", f"{RULES}/{rule}", admin)
        assert revoked.status_code == 204, revoked.text

        path, body = creation("refused")
        refused = await sent(one, "POST", path, bot, json=body)

        assert refused.status_code in (400, 403), refused.text
        assert await written(clean_pool, "refused") == 0


async def test_a_template_changed_through_another_process_is_what_the_next_workload_runs(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, nats_url: str
) -> None:
    units = await org(app, admin)
    linked = await assets(app, admin)
    made = await call(
        app, "POST", TEMPLATES, admin, json=in_project("ddp", units["project"], linked)
    )
    assert made.status_code == 202, made.text
    template_id = made.json()["meta"]["id"]
    body = {"projectId": units["project"]["id"], "clusterId": units["cluster"]["uuid"],
            "templateId": template_id}  # fmt: skip
    async with two_processes(app, clean_pool, nats_url) as (one, two):
        first = await sent(one, "POST", WORKLOADS, admin, json={**body, "name": "first"})
        assert first.status_code == 202, first.text  # `one` read the template and its assets
        assert first.json()["spec"]["numWorkers"] == 2
        patched = await sent(two, "PATCH", f"{TEMPLATES}/{template_id}", admin,
                             json={"spec": {"numWorkers": 6}})  # fmt: skip
        assert patched.status_code == 200, patched.text

        second = await sent(one, "POST", WORKLOADS, admin, json={**body, "name": "second"})

        assert second.status_code == 202, second.text
        assert second.json()["spec"]["numWorkers"] == 6
