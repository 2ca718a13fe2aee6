"""Nothing of a scope reaches a caller who may not see it, as a hostile member of another project
would probe: through a shared asset's usage and impact preview, name availability, or a write
whose refusal would tell the template exists. An object out of sight answers as a missing one."""

from typing import Any
from uuid import uuid4

import asyncpg
import pytest
from litestar import Litestar

from domain.values import TENANT_ADMIN, Grant
from tests.api.support import call, project_all, token_for

pytestmark = [pytest.mark.api, pytest.mark.integration]

TEMPLATES = "/api/v1/workload-templates/distributed"
SECRET_NAME = "b-secret-pretraining-run"


@pytest.fixture
async def world(app: Litestar, clean_pool: asyncpg.Pool) -> dict[str, Any]:
    """Projects a and b; a tenant environment; in b, a template linking it. A viewer of a."""
    admin = await token_for(clean_pool, "root-admin", (TENANT_ADMIN,))
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "c"})).json()
    projects: dict[str, Any] = {}
    for name in ("a", "b"):
        body = {"name": name, "clusterId": cluster["uuid"]}
        unit = await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)
        projects[name] = unit.json()
    environment = {
        "meta": {"name": "shared", "scope": "tenant", "workloadSupportedTypes": {
            "distributed": True, "distFramework": "PyTorch"}},
        "spec": {"image": "pt:2"},
    }  # fmt: skip
    made = await call(app, "POST", "/api/v1/asset/environment", admin, json=environment)
    assert made.status_code == 202, made.text
    environment_id = made.json()["meta"]["id"]
    secret = {
        "meta": {"name": SECRET_NAME, "scopeType": "project", "scopeId": projects["b"]["id"]},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        "assets": {"environment": environment_id},
    }
    made = await call(app, "POST", TEMPLATES, admin, json=secret)
    assert made.status_code == 202, made.text
    viewer = await token_for(
        clean_pool,
        "a-viewer",
        (Grant(role="viewer", scope_kind="project", scope_id=projects["a"]["id"]),),
    )
    await project_all(clean_pool)
    return {
        "admin": admin,
        "viewer": viewer,
        "projects": projects,
        "environment": environment_id,
        "template": made.json()["meta"]["id"],
    }


async def test_a_shared_assets_usage_shows_only_the_templates_the_caller_may_see(
    app: Litestar, world: dict[str, Any]
) -> None:
    path = f"/api/v1/asset/environment/{world['environment']}"
    as_admin = await call(app, "GET", path, world["admin"], params={"usageInfo": "true"})
    assert SECRET_NAME in as_admin.text  # it is there to be seen
    as_viewer = await call(app, "GET", path, world["viewer"], params={"usageInfo": "true"})
    assert as_viewer.status_code == 200, as_viewer.text
    assert SECRET_NAME not in as_viewer.text
    assert world["template"] not in as_viewer.text
    listed = await call(
        app, "GET", "/api/v1/asset/environment", world["viewer"], params={"usageInfo": "true"}
    )
    assert listed.status_code == 200
    assert SECRET_NAME not in listed.text
    assert world["template"] not in listed.text


async def test_an_impact_preview_names_only_the_templates_the_caller_may_see(
    app: Litestar, world: dict[str, Any]
) -> None:
    path = f"/api/v1/asset/environment/{world['environment']}/impact"
    update = {"meta": {"name": "shared"}, "spec": {"image": "pt:3"}}
    as_admin = await call(app, "POST", path, world["admin"], json=update)
    assert [t["name"] for t in as_admin.json()["templates"]] == [SECRET_NAME]
    as_viewer = await call(app, "POST", path, world["viewer"], json=update)
    assert as_viewer.status_code == 200, as_viewer.text
    assert as_viewer.json() == {"templates": []}


async def test_name_availability_in_a_scope_out_of_sight_answers_as_for_no_scope(
    app: Litestar, world: dict[str, Any]
) -> None:
    path = "/api/v1/workload-templates/name-availability"
    asked = {"templateName": SECRET_NAME, "scopeType": "project"}
    taken = {**asked, "scopeId": world["projects"]["b"]["id"]}
    assert (await call(app, "GET", path, world["admin"], params=taken)).status_code == 409
    hidden = await call(app, "GET", path, world["viewer"], params=taken)
    missing = await call(app, "GET", path, world["viewer"], params={**asked, "scopeId": "999"})
    assert (hidden.status_code, missing.status_code) == (400, 400)
    assert SECRET_NAME not in hidden.text
    own = {**asked, "scopeId": world["projects"]["a"]["id"]}
    assert (await call(app, "GET", path, world["viewer"], params=own)).status_code == 204


@pytest.mark.parametrize("method", ["PATCH", "PUT", "DELETE"])
async def test_a_write_to_a_template_out_of_sight_answers_as_for_no_template(
    app: Litestar, world: dict[str, Any], method: str
) -> None:
    bad = {"spec": {"numWorkers": "many"}, "nonsense": True}
    hidden = await call(app, method, f"{TEMPLATES}/{world['template']}", world["viewer"], json=bad)
    missing = await call(app, method, f"{TEMPLATES}/{uuid4()}", world["viewer"], json=bad)
    assert hidden.status_code == missing.status_code == 404, hidden.text
    assert hidden.json()["type"] == missing.json()["type"]
    assert SECRET_NAME not in hidden.text


ASSETS_OF_B = {
    "environment": {"image": "pt:2"},
    "compute": {"gpuDevicesRequest": 1},
    "datasource/nfs": {"server": "nfs.b", "path": "/b", "mountPath": "/data"},
    "credentials/password": {"user": "u", "password": "p"},
}


@pytest.mark.parametrize("family", list(ASSETS_OF_B))
async def test_an_update_of_an_asset_out_of_sight_answers_as_for_no_asset(
    app: Litestar, world: dict[str, Any], family: str
) -> None:
    path = f"/api/v1/asset/{family}"
    meta = {"name": SECRET_NAME, "scope": "project", "projectId": int(world["projects"]["b"]["id"])}
    made = await call(
        app, "POST", path, world["admin"], json={"meta": meta, "spec": ASSETS_OF_B[family]}
    )
    assert made.status_code == 202, made.text
    bad = {"meta": {"name": 7}, "spec": {"image": ["not", "a", "string"]}, "nonsense": True}
    hidden = await call(
        app, "PUT", f"{path}/{made.json()['meta']['id']}", world["viewer"], json=bad
    )
    missing = await call(app, "PUT", f"{path}/{uuid4()}", world["viewer"], json=bad)
    assert hidden.status_code == missing.status_code == 404, hidden.text
    assert hidden.json()["type"] == missing.json()["type"]
    assert SECRET_NAME not in hidden.text
    # the body is still checked for whoever may see it
    assert (
        await call(app, "PUT", f"{path}/{made.json()['meta']['id']}", world["admin"], json=bad)
    ).status_code == 400


async def test_a_write_to_a_template_at_another_kinds_id_answers_as_for_no_template(
    app: Litestar, world: dict[str, Any]
) -> None:
    path = f"{TEMPLATES}/{world['environment']}"
    answer = await call(app, "PATCH", path, world["admin"], json={"meta": {"name": "x"}})
    assert answer.status_code == 404, answer.text


def _probes(world: dict[str, Any], project: str) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """Writes that name a project: the same request at b (out of the viewer's sight) and at a
    project that does not exist must be refused alike."""
    env = {"image": "pt:2"}
    return {
        "template": ("POST", TEMPLATES, {
            "meta": {"name": "t", "scopeType": "project", "scopeId": project},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        }),
        "environment": ("POST", "/api/v1/asset/environment", {
            "meta": {"name": "e", "scope": "project", "projectId": int(project)}, "spec": env,
        }),
        "credential": ("POST", "/api/v1/asset/credentials/password", {
            "meta": {"name": "p", "scope": "project", "projectId": int(project)},
            "spec": {"user": "u", "password": "p"},
        }),
        "access rule": ("POST", "/api/v1/authorization/access-rules", {
            "subjectId": "someone", "subjectType": "user", "roleId": 1,
            "scopeId": project, "scopeType": "project",
        }),
        "workload": ("POST", "/api/v1/workloads/distributed", {
            "name": "w", "projectId": project, "clusterId": str(uuid4()),
            "templateId": world["template"],
        }),
        "project delete": ("DELETE", f"/api/v1/org-unit/projects/{project}", {}),
    }  # fmt: skip


@pytest.mark.parametrize("probe", list(_probes({"template": ""}, "1")))
async def test_a_write_naming_a_scope_out_of_sight_answers_as_for_no_scope(
    app: Litestar, world: dict[str, Any], clean_pool: asyncpg.Pool, probe: str
) -> None:
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    method, path, body = _probes(world, world["projects"]["b"]["id"])[probe]
    hidden = await call(app, method, path, world["viewer"], json=body or None)
    method, path, body = _probes(world, "999")[probe]
    missing = await call(app, method, path, world["viewer"], json=body or None)
    assert hidden.status_code == missing.status_code, (hidden.text, missing.text)
    assert hidden.status_code in (400, 404), hidden.text
    assert hidden.json()["type"] == missing.json()["type"]
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before


async def test_access_rules_out_of_sight_are_neither_listed_nor_revocable(
    app: Litestar, world: dict[str, Any], clean_pool: asyncpg.Pool
) -> None:
    rules = "/api/v1/authorization/access-rules"
    grant = {
        "subjectId": "b-member", "subjectType": "user", "roleId": 1,
        "scopeId": world["projects"]["b"]["id"], "scopeType": "project",
    }  # fmt: skip
    made = await call(app, "POST", rules, world["admin"], json=grant)
    assert made.status_code == 201, made.text
    await project_all(clean_pool)
    listed = await call(app, "GET", rules, world["viewer"])
    assert listed.status_code == 200, listed.text
    assert "b-member" not in listed.text
    rule_id = made.json()["id"]
    hidden = await call(app, "GET", f"{rules}/{rule_id}", world["viewer"])
    assert hidden.status_code == 404, hidden.text
    revoked = await call(app, "DELETE", f"{rules}/{rule_id}", world["viewer"])
    missing = await call(app, "DELETE", f"{rules}/{rule_id + 1000}", world["viewer"])
    assert revoked.status_code == missing.status_code == 404, revoked.text
    assert revoked.json()["type"] == missing.json()["type"]
