"""What a write answers says when and by whom the thing was created and updated as its events
record it (the database's clock): the same values a read shows once the read models have it,
and the creator stays the creator when someone else updates it, even while the read models
have not caught up (no projector runs here before the writes' answers are checked)."""

from datetime import datetime
from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import TENANT_ADMIN
from tests.api.support import call, project_all, token_for
from tests.api.test_in_use import ENVIRONMENTS, SUPPORTS, TEMPLATES
from tests.api.test_workloads import WORKLOADS, setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]


def times(meta: dict[str, Any]) -> tuple[str, str, str, str]:
    return meta["createdBy"], meta["createdAt"], meta["updatedBy"], meta["updatedAt"]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_assets_and_templates_answer_their_recorded_times_and_authors(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    other = await token_for(clean_pool, "other-admin", (TENANT_ADMIN,))
    environment = {
        "meta": {"name": "pt", "scope": "tenant", "workloadSupportedTypes": SUPPORTS},
        "spec": {"image": "nvcr.io/nvidia/pytorch:24.05-py3"},
    }
    made = await call(app, "POST", ENVIRONMENTS, admin, json=environment)
    assert made.status_code == 202, made.text
    env_id = made.json()["meta"]["id"]
    creator, created_at, updater, updated_at = times(made.json()["meta"])
    assert (creator, created_at) == (updater, updated_at)
    # Someone else updates it before any read model holds it.
    update = {"meta": {"name": "pt"}, "spec": {"image": "nvcr.io/nvidia/pytorch:24.06-py3"}}
    changed = await call(app, "PUT", f"{ENVIRONMENTS}/{env_id}", other, json=update)
    assert changed.status_code == 202, changed.text
    now = times(changed.json()["meta"])
    assert now[:2] == (creator, created_at)
    assert now[2] != creator
    assert at(now[3]) > at(created_at)

    spec: dict[str, Any] = {"distributedFramework": "PyTorch", "numWorkers": 2}
    body = {
        "meta": {"name": "ddp", "scopeType": "tenant"},
        "spec": spec,
        "assets": {"environment": env_id},
    }
    first = await call(app, "POST", TEMPLATES, admin, json=body)
    assert first.status_code == 202, first.text
    template_id = first.json()["meta"]["id"]
    replacing = {**body, "meta": {"name": "ddp"}, "spec": {**spec, "numWorkers": 3}}
    second = await call(app, "PUT", f"{TEMPLATES}/{template_id}", other, json=replacing)
    assert second.status_code == 200, second.text
    patched = await call(
        app, "PATCH", f"{TEMPLATES}/{template_id}", other, json={"spec": {"numWorkers": 4}}
    )
    assert patched.status_code == 200, patched.text
    assert times(patched.json()["meta"])[:2] == times(first.json()["meta"])[:2]
    assert times(patched.json()["meta"])[2] == times(second.json()["meta"])[2] != creator

    await project_all(clean_pool)
    got = await call(app, "GET", f"{ENVIRONMENTS}/{env_id}", admin)
    assert times(got.json()["meta"]) == now
    read = await call(app, "GET", f"{TEMPLATES}/{template_id}", admin)
    assert times(read.json()["meta"]) == times(patched.json()["meta"])


async def test_a_submission_answers_its_recorded_creation(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    submitted = await call(app, "POST", WORKLOADS, admin, json=submission(found))
    assert submitted.status_code == 202, submitted.text
    await project_all(clean_pool)
    got = await call(app, "GET", f"{WORKLOADS}/{submitted.json()['workloadId']}", admin)
    assert got.json()["createdAt"] == submitted.json()["createdAt"]
    assert got.json()["createdBy"] == submitted.json()["createdBy"]


async def test_org_units_service_accounts_and_access_rules_answer_their_recorded_times(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    other = await token_for(clean_pool, "other-admin", (TENANT_ADMIN,))
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    departments = "/api/v1/org-unit/departments"
    made = await call(
        app, "POST", departments, admin, json={"name": "ml", "clusterId": cluster["uuid"]}
    )
    assert made.status_code == 201, made.text
    department = made.json()
    update = {"description": "the ML department"}
    changed = await call(app, "PUT", f"{departments}/{department['id']}", other, json=update)
    assert changed.status_code == 200, changed.text
    assert times(changed.json())[:2] == times(department)[:2]
    assert times(changed.json())[2] != times(department)[0]

    account = await call(app, "POST", "/api/v1/service-accounts", admin, json={"name": "ci-bot"})
    bot_id = account.json()["id"]
    path = f"/api/v1/service-accounts/{bot_id}"
    disabled = await call(app, "PATCH", path, other, json={"enabled": False})
    assert disabled.status_code == 200, disabled.text
    assert at(disabled.json()["updatedAt"]) > at(disabled.json()["createdAt"])
    rule = {
        "subjectId": bot_id,
        "subjectType": "service-account",
        "roleId": 1,
        "scopeId": cluster["uuid"],
        "scopeType": "cluster",
    }
    granted = await call(app, "POST", "/api/v1/authorization/access-rules", admin, json=rule)
    assert granted.status_code == 201, granted.text
    # Granted again by someone else: the rule as it was first granted.
    again = await call(app, "POST", "/api/v1/authorization/access-rules", other, json=rule)
    assert (again.json()["createdAt"], again.json()["createdBy"]) == (
        granted.json()["createdAt"],
        granted.json()["createdBy"],
    )

    await project_all(clean_pool)
    got = await call(app, "GET", f"{departments}/{department['id']}", admin)
    assert times(got.json()) == times(changed.json())
    read = await call(app, "GET", path, admin)
    assert (read.json()["createdAt"], read.json()["updatedAt"]) == (
        disabled.json()["createdAt"],
        disabled.json()["updatedAt"],
    )
    rules = await call(
        app, "GET", "/api/v1/authorization/access-rules", admin, params={"subjectId": bot_id}
    )
    (listed,) = rules.json()["accessRules"]
    assert (listed["createdAt"], listed["createdBy"]) == (
        granted.json()["createdAt"],
        granted.json()["createdBy"],
    )
