"""The counts of workloads, departments and projects: what the list shows for the same query,
so a caller counts only what its grants let it see."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, project_all, token_for
from tests.api.test_workloads import WORKLOADS, setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]

DEPARTMENTS = "/api/v1/org-unit/departments"
PROJECTS = "/api/v1/org-unit/projects"


async def counted(
    app: Litestar, token: str, path: str, key: str, params: dict[str, Any]
) -> tuple[int, int]:
    """The count, and how many the list shows for the same query."""
    count = await call(app, "GET", f"{path}/count", token, params=params)
    assert count.status_code == 200, count.text
    listed = await call(app, "GET", path, token, params=params)
    assert listed.status_code == 200, listed.text
    return count.json()["count"], len(listed.json()[key])


async def test_org_units_count_what_the_lists_show(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    departments = {}
    for name in ("research", "ops"):
        body = {"name": name, "clusterId": cluster["uuid"]}
        made = await call(app, "POST", DEPARTMENTS, admin, json=body)
        departments[name] = made.json()["id"]
    for name, parent in (("llm", "research"), ("vision", "ops"), ("edge", None)):
        body = {
            "name": name,
            "clusterId": cluster["uuid"],
            "parentId": departments.get(parent or ""),
        }
        assert (await call(app, "POST", PROJECTS, admin, json=body)).status_code == 201
    await project_all(clean_pool)
    grant = Grant(role="viewer", scope_kind="department", scope_id=departments["research"])
    viewer = await token_for(clean_pool, "research-viewer", (grant,))

    for token, path, key, params, expected in (
        (admin, DEPARTMENTS, "departments", {}, 2),
        (admin, DEPARTMENTS, "departments", {"filterBy": "name==ops"}, 1),
        (admin, DEPARTMENTS, "departments", {"filterBy": "createdAt<=2020-01-01T00:00:00Z"}, 0),
        (admin, PROJECTS, "projects", {}, 3),
        (admin, PROJECTS, "projects", {"filterBy": "parentName==research"}, 1),
        (admin, PROJECTS, "projects", {"filterBy": f"parentId=={cluster['uuid']}"}, 1),
        (admin, PROJECTS, "projects", {"filterBy": f"departmentId=={departments['ops']}"}, 1),
        (admin, PROJECTS, "projects", {"filterBy": "name!=edge,phase==Ready"}, 2),
        (admin, PROJECTS, "projects", {"search": "LL"}, 1),
        (viewer, DEPARTMENTS, "departments", {}, 1),
        (viewer, PROJECTS, "projects", {}, 1),
        (viewer, PROJECTS, "projects", {"filterBy": "name==vision"}, 0),
    ):
        assert await counted(app, token, path, key, params) == (expected, expected), params

    for path in (DEPARTMENTS, PROJECTS):
        refused = await call(
            app, "GET", f"{path}/count", admin, params={"filterBy": "gpuAllocated>=1"}
        )
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"] == "/filterBy/0"


async def test_workloads_count_what_the_list_shows(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    made = {}
    for name in ("ddp-a", "ddp-b", "llama"):
        submitted = await call(app, "POST", WORKLOADS, admin, json=submission(found, name=name))
        assert submitted.status_code == 202, submitted.text
        made[name] = submitted.json()["workloadId"]
    assert (await call(app, "DELETE", f"{WORKLOADS}/{made['llama']}", admin)).status_code == 202
    await project_all(clean_pool)
    project = found["project"]["id"]
    viewer = await token_for(
        clean_pool, "viewer", (Grant(role="viewer", scope_kind="project", scope_id=project),)
    )
    outsider = await token_for(clean_pool, "outsider", ())
    template = found["template"]["meta"]["id"]

    for token, params, expected in (
        (admin, {}, 2),
        (admin, {"deleted": "true"}, 1),
        (admin, {"filterBy": "name=^ddp"}, 2),
        (admin, {"filterBy": "name==ddp-a,phase==Creating"}, 1),
        (admin, {"filterBy": f"templateId=={template}"}, 2),
        (admin, {"filterBy": f"projectId=={project},projectName==llm"}, 2),
        (admin, {"filterBy": "createdAt>=2020-01-01T00:00:00Z"}, 2),
        (admin, {"filterBy": "completedAt>=2020-01-01T00:00:00Z"}, 0),
        (admin, {"search": "A"}, 1),  # ddp-a: llama is deleted
        (admin, {"search": "-b"}, 1),
        (viewer, {}, 2),
        (outsider, {}, 0),
    ):
        assert await counted(app, token, "/api/v1/workloads", "workloads", params) == (
            expected,
            expected,
        ), params

    refused = await call(
        app, "GET", "/api/v1/workloads/count", admin, params={"filterBy": "allocatedGPU>=2"}
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"][0]["pointer"] == "/filterBy/0"
