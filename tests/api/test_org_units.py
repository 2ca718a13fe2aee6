"""Clusters, departments and projects: admins build the tree; grants reach down it."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, project_all, token_for
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

RESOURCES = [{"nodePool": {"id": "22", "name": "default"}, "gpu": {"deserved": 4}}]


async def tree(app: Litestar, admin: str) -> dict[str, Any]:
    """A cluster with a department holding a project."""
    cluster = await call(app, "POST", "/api/v1/clusters", admin, json={"name": "gpu-east"})
    assert cluster.status_code == 201, cluster.text
    cluster_id = cluster.json()["uuid"]
    department = await call(
        app,
        "POST",
        "/api/v1/org-unit/departments",
        admin,
        json={"name": "research", "clusterId": cluster_id, "resources": RESOURCES},
    )
    assert department.status_code == 201, department.text
    project = await call(
        app,
        "POST",
        "/api/v1/org-unit/projects",
        admin,
        json={
            "name": "llm",
            "clusterId": cluster_id,
            "parentId": department.json()["id"],
            "resources": RESOURCES,
        },
    )
    assert project.status_code == 201, project.text
    return {"cluster": cluster.json(), "department": department.json(), "project": project.json()}


async def test_an_admin_builds_the_tree_in_run_ai_shapes(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await tree(app, admin)
    assert_matches("ClusterCreationRequest", {"name": "gpu-east"})
    assert_matches("DisplayedCluster", made["cluster"])
    assert_matches("Department", made["department"])
    assert_matches("Project", made["project"])
    assert made["project"]["parentId"] == made["department"]["id"]
    assert made["department"]["totalResources"]["gpuQuota"] == 4

    await project_all(clean_pool)
    clusters = await call(app, "GET", "/api/v1/clusters", admin)
    assert [c["name"] for c in clusters.json()] == ["gpu-east"]
    departments = (await call(app, "GET", "/api/v1/org-unit/departments", admin)).json()
    assert [d["name"] for d in departments["departments"]] == ["research"]
    project_id = made["project"]["id"]
    project = await call(app, "GET", f"/api/v1/org-unit/projects/{project_id}", admin)
    assert project.status_code == 200
    assert_matches("Project", project.json())
    assert project.json()["resources"] == RESOURCES


async def test_unknown_parents_are_refused_naming_the_field_and_nothing_is_written(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await tree(app, admin)
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    cases = [
        ("/api/v1/org-unit/departments", {"name": "x", "clusterId": made["project"]["id"]}),
        (
            "/api/v1/org-unit/departments",
            {"name": "x", "clusterId": "00000000-0000-4000-8000-000000000000"},
        ),
        (
            "/api/v1/org-unit/projects",
            {"name": "x", "clusterId": made["cluster"]["uuid"], "parentId": "999"},
        ),
    ]
    for path, body in cases:
        response = await call(app, "POST", path, admin, json=body)
        assert response.status_code == 400, response.text
        assert response.json()["errors"][0]["pointer"] in ("/clusterId", "/parentId")
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before


async def test_names_are_unique_per_cluster(app: Litestar, admin: str) -> None:
    made = await tree(app, admin)
    again = await call(
        app,
        "POST",
        "/api/v1/org-unit/departments",
        admin,
        json={"name": "research", "clusterId": made["cluster"]["uuid"]},
    )
    assert again.status_code == 409, again.text
    assert again.json()["errors"][0]["pointer"] == "/name"
    other = await call(app, "POST", "/api/v1/clusters", admin, json={"name": "gpu-west"})
    elsewhere = await call(
        app,
        "POST",
        "/api/v1/org-unit/departments",
        admin,
        json={"name": "research", "clusterId": other.json()["uuid"]},
    )
    assert elsewhere.status_code == 201, elsewhere.text


async def test_a_department_admin_sees_its_branch_and_manages_only_below_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await tree(app, admin)
    department_id = made["department"]["id"]
    grant = Grant(role="admin", scope_kind="department", scope_id=department_id)
    lead = await token_for(clean_pool, "research-lead", (grant,))
    outsider = await token_for(
        clean_pool,
        "outsider",
        (Grant(role="viewer", scope_kind="project", scope_id="424242"),),
    )
    other = await call(app, "POST", "/api/v1/clusters", admin, json={"name": "gpu-west"})
    await project_all(clean_pool)

    # Sees its department, the project below it and the cluster above it; not the other cluster.
    clusters = (await call(app, "GET", "/api/v1/clusters", lead)).json()
    assert [c["name"] for c in clusters] == ["gpu-east"]
    hidden = await call(app, "GET", f"/api/v1/clusters/{other.json()['uuid']}", lead)
    assert hidden.status_code == 404
    projects = (await call(app, "GET", "/api/v1/org-unit/projects", outsider)).json()
    assert projects == {"projects": []}

    # May create projects in its department, not departments in the cluster.
    body = {"name": "vision", "clusterId": made["cluster"]["uuid"], "parentId": department_id}
    created = await call(app, "POST", "/api/v1/org-unit/projects", lead, json=body)
    assert created.status_code == 201, created.text
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    denied = await call(
        app,
        "POST",
        "/api/v1/org-unit/departments",
        lead,
        json={"name": "ops", "clusterId": made["cluster"]["uuid"]},
    )
    assert denied.status_code == 403, denied.text
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before


async def test_update_and_delete_follow_the_tree(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await tree(app, admin)
    project_path = f"/api/v1/org-unit/projects/{made['project']['id']}"
    department_path = f"/api/v1/org-unit/departments/{made['department']['id']}"
    updated = await call(
        app, "PUT", project_path, admin, json={"description": "pre-training", "resources": []}
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["description"] == "pre-training"

    refused = await call(app, "DELETE", department_path, admin)
    assert refused.status_code == 409, refused.text
    assert f"project {made['project']['name']}" in refused.json()["detail"]
    assert (await call(app, "DELETE", project_path, admin)).status_code == 204
    await project_all(clean_pool)
    assert (await call(app, "GET", project_path, admin)).status_code == 404
    assert (await call(app, "DELETE", department_path, admin)).status_code == 204
    assert (await call(app, "DELETE", department_path, admin)).status_code == 204  # idempotent
    # The freed name can be used again.
    again = await call(
        app,
        "POST",
        "/api/v1/org-unit/departments",
        admin,
        json={"name": "research", "clusterId": made["cluster"]["uuid"]},
    )
    assert again.status_code == 201, again.text


async def test_the_lists_select_by_the_gpu_quota_they_show_and_take_no_sort_or_page(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    halves = [{"gpu": {"deserved": 0.5}}, {"gpu": {"deserved": 0.5}}]
    for name, resources in (("big", RESOURCES), ("halves", halves), ("none", [])):
        body = {"name": name, "clusterId": cluster["uuid"], "resources": resources}
        made = await call(app, "POST", "/api/v1/org-unit/departments", admin, json=body)
        assert made.status_code == 201, made.text
    await project_all(clean_pool)
    outsider = await token_for(clean_pool, "nobody", ())

    async def listed(params: dict[str, str], token: str = admin) -> list[str]:
        path = "/api/v1/org-unit/departments"
        found = await call(app, "GET", path, token, params=params)
        counted = await call(app, "GET", f"{path}/count", token, params=params)
        assert (found.status_code, counted.status_code) == (200, 200), found.text
        names = [d["name"] for d in found.json()["departments"]]
        assert counted.json() == {"count": len(names)}
        return names

    assert await listed({"filterBy": "totalGpuQuota>=1"}) == ["big", "halves"]
    assert await listed({"filterBy": "totalGpuQuota==1"}) == ["halves"]
    # Text operators read the number as the list shows it (4.0, 1.0); none reads as "".
    assert await listed({"filterBy": "totalGpuQuota=$.0"}) == ["big", "halves"]
    assert await listed({"filterBy": "totalGpuQuota<=1"}) == ["halves", "none"]
    assert await listed({"filterBy": "totalGpuQuota!@1"}) == ["big", "none"]
    # Run:ai's sortBy, sortOrder, offset and limit are not taken: every unit, by id.
    page = {"sortBy": "name", "sortOrder": "desc", "offset": "1", "limit": "1"}
    assert await listed(page) == ["big", "halves", "none"]
    assert await listed({}, outsider) == []
    for token in (admin, outsider):  # refused whether or not the caller sees a unit
        path = "/api/v1/org-unit/departments"
        refused = await call(app, "GET", path, token, params={"filterBy": "gpuAllocated>=1"})
        assert refused.status_code == 400, refused.text
