"""History, as-of and diff of templates changed by users and by the linked-asset fan-out, and of
assets."""

import asyncio
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, project_all, token_for
from tests.api.test_templates import org

pytestmark = [pytest.mark.api, pytest.mark.integration]

TEMPLATES = "/api/v1/workload-templates"


async def setup(app: Litestar, admin: str, clean_pool: asyncpg.Pool) -> dict[str, Any]:
    """v1 created linking an environment; v2 a user's PATCH; v3 the fan-out of an env update."""
    units = await org(app, admin)
    env_body = {
        "meta": {"name": "env", "scope": "tenant",
                 "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"}},
        "spec": {"image": "img:1"},
    }  # fmt: skip
    env = (await call(app, "POST", "/api/v1/asset/environment", admin, json=env_body)).json()
    env_id = env["meta"]["id"]
    body = {
        "meta": {"name": "ddp", "scopeType": "project", "scopeId": units["project"]["id"]},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        "assets": {"environment": env_id},
    }
    made = await call(app, "POST", f"{TEMPLATES}/distributed", admin, json=body)
    template_id = made.json()["meta"]["id"]
    await asyncio.sleep(0.05)
    between = datetime.now(UTC).isoformat()
    await asyncio.sleep(0.05)
    patched = await call(
        app, "PATCH", f"{TEMPLATES}/distributed/{template_id}", admin,
        json={"spec": {"numWorkers": 3}},
    )  # fmt: skip
    assert patched.status_code == 200, patched.text
    env_update = {"meta": {"name": "env"}, "spec": {"image": "img:2"}}
    updated = await call(app, "PUT", f"/api/v1/asset/environment/{env_id}", admin, json=env_update)
    assert updated.status_code == 202, updated.text  # Run:ai answers an asset PUT with 202
    await project_all(clean_pool)  # the fan-out records img:2's version in the template
    return {**units, "template": template_id, "environment": env_id, "between": between}


async def test_every_version_with_who_when_and_why(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await setup(app, admin, clean_pool)
    answer = await call(app, "GET", f"{TEMPLATES}/{made['template']}/history", admin)
    assert answer.status_code == 200, answer.text
    versions = answer.json()["versions"]
    assert [(v["version"], v["type"]) for v in versions] == [
        (1, "template.created.v1"),
        (2, "template.updated.v1"),
        (3, "template.linked_asset_updated.v1"),
    ]
    assert versions[0]["actorKind"] == "application"
    assert versions[2]["actor"] == "linked-asset-fanout"
    env_history = await call(app, "GET", f"/api/v1/asset/{made['environment']}/history", admin)
    env_update = env_history.json()["versions"][1]
    # Why v3 happened: the environment's update (the audit API finds it by that id).
    audit = await call(app, "GET", "/api/v1/audit/events", admin,
                       params={"streamId": made["environment"]})  # fmt: skip
    update_event = audit.json()["events"][1]
    assert versions[2]["cause"] == update_event["id"]
    assert env_update["type"] == "environment.updated.v1"


async def test_as_of_a_version_or_a_moment_rebuilds_the_combined_spec_of_then(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await setup(app, admin, clean_pool)
    path = f"{TEMPLATES}/{made['template']}/as-of"
    first = await call(app, "GET", path, admin, params={"version": 1})
    assert first.status_code == 200, first.text
    assert first.headers["etag"] == '"1"'
    assert (first.json()["spec"]["numWorkers"], first.json()["combinedSpec"]["image"]) == (
        2,
        "img:1",
    )
    then = (await call(app, "GET", path, admin, params={"time": made["between"]})).json()
    assert then["spec"]["numWorkers"] == 2
    second = (await call(app, "GET", path, admin, params={"version": 2})).json()
    assert (second["spec"]["numWorkers"], second["combinedSpec"]["image"]) == (3, "img:1")
    latest = (await call(app, "GET", path, admin)).json()
    assert (latest["spec"]["numWorkers"], latest["combinedSpec"]["image"]) == (3, "img:2")
    beyond = await call(app, "GET", path, admin, params={"version": 9})
    assert beyond.status_code == 400


async def test_a_diff_names_each_changed_field_including_what_a_linked_asset_changed(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await setup(app, admin, clean_pool)
    path = f"{TEMPLATES}/{made['template']}/diff"
    by_user = (await call(app, "GET", path, admin, params={"from": 1, "to": 2})).json()
    assert {(c["field"], c["before"], c["after"]) for c in by_user["changes"]} == {
        ("/spec/numWorkers", 2, 3),
        ("/combinedSpec/numWorkers", 2, 3),
    }
    by_asset = (await call(app, "GET", path, admin, params={"from": 2})).json()
    assert by_asset["toVersion"] == 3
    assert by_asset["changes"] == [
        {"field": "/combinedSpec/image", "before": "img:1", "after": "img:2"},
        {"field": "/combinedMasterSpec/image", "before": "img:1", "after": "img:2"},
    ]
    asset = f"/api/v1/asset/{made['environment']}"
    env_diff = (await call(app, "GET", f"{asset}/diff", admin, params={"from": 1})).json()
    assert env_diff["changes"] == [{"field": "/spec/image", "before": "img:1", "after": "img:2"}]
    env_then = (await call(app, "GET", f"{asset}/as-of", admin, params={"version": 1})).json()
    assert (env_then["kind"], env_then["spec"]["image"]) == ("environment", "img:1")


async def test_history_is_as_visible_as_the_template(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await setup(app, admin, clean_pool)
    other = (
        await call(app, "POST", "/api/v1/org-unit/projects", admin,
                   json={"name": "other", "clusterId": made["cluster"]["uuid"]})
    ).json()  # fmt: skip
    outsider = await token_for(
        clean_pool, "outsider", (Grant(role="viewer", scope_kind="project", scope_id=other["id"]),)
    )
    for suffix in ("history", "as-of", "diff?from=1"):
        answer = await call(app, "GET", f"{TEMPLATES}/{made['template']}/{suffix}", outsider)
        assert answer.status_code == 404, (suffix, answer.text)
