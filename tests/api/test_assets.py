"""Environment and compute assets over HTTP: Run:ai's shapes, validation, scopes and grants."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, project_all, token_for
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

ENVIRONMENTS = "/api/v1/asset/environment"
COMPUTES = "/api/v1/asset/compute"


@pytest.fixture
async def org(app: Litestar, admin: str) -> dict[str, Any]:
    """A cluster, a department and two projects in it."""
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    department = (
        await call(
            app,
            "POST",
            "/api/v1/org-unit/departments",
            admin,
            json={"name": "research", "clusterId": cluster["uuid"]},
        )
    ).json()
    projects = []
    for name in ("llm", "vision"):
        body = {"name": name, "clusterId": cluster["uuid"], "parentId": department["id"]}
        created = await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)
        projects.append(created.json())
    return {"cluster": cluster, "department": department, "projects": projects}


def environment(name: str, scope: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "meta": {
            "name": name,
            **scope,
            "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"},
        },
        "spec": {
            "image": "nvcr.io/nvidia/pytorch:24.05-py3",
            "imagePullPolicy": "IfNotPresent",
            "environmentVariables": [{"name": "NCCL_DEBUG", "value": "INFO"}],
            **spec,
        },
    }


def compute(name: str, scope: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "meta": {"name": name, **scope},
        "spec": {"gpuDevicesRequest": 1, "cpuCoreRequest": 4, "cpuMemoryRequest": "16G", **spec},
    }


def in_project(project: dict[str, Any]) -> dict[str, Any]:
    return {"scope": "project", "projectId": int(project["id"]), "clusterId": project["clusterId"]}


TENANT = {"scope": "tenant"}


async def test_environment_lifecycle_in_run_ai_shapes(
    app: Litestar, admin: str, org: dict[str, Any], clean_pool: asyncpg.Pool
) -> None:
    body = environment("pytorch-ddp", in_project(org["projects"][0]))
    assert_matches("EnvironmentCreationRequest", body)
    created = await call(app, "POST", ENVIRONMENTS, admin, json=body)
    assert created.status_code == 202, created.text
    assert_matches("EnvironmentAsset", created.json())
    meta = created.json()["meta"]
    assert meta["departmentId"] == org["department"]["id"]
    assert meta["projectId"] == int(org["projects"][0]["id"])
    path = f"{ENVIRONMENTS}/{meta['id']}"

    await project_all(clean_pool)
    got = await call(app, "GET", path, admin, params={"usageInfo": "true"})
    assert got.status_code == 200, got.text
    assert_matches("EnvironmentAsset", got.json())
    assert got.json()["spec"] == created.json()["spec"]
    assert got.json()["usedBy"]["templates"] == []

    update = {"meta": {"name": "pytorch-ddp", "description": "v2"}, "spec": {"image": "pt:2"}}
    assert_matches("EnvironmentUpdateRequest", update)
    updated = await call(app, "PUT", path, admin, json=update)
    assert updated.status_code == 202, updated.text
    assert updated.json()["spec"] == {"image": "pt:2"}
    assert updated.json()["meta"]["updateCount"] == 2
    await project_all(clean_pool)
    listed = await call(app, "GET", ENVIRONMENTS, admin)
    assert_matches("EnvironmentListResponse", listed.json())
    assert [e["meta"]["description"] for e in listed.json()["entries"]] == ["v2"]

    assert (await call(app, "DELETE", path, admin)).status_code == 202
    await project_all(clean_pool)
    assert (await call(app, "GET", path, admin)).status_code == 404
    assert (await call(app, "DELETE", path, admin)).status_code == 202  # idempotent


async def test_compute_lifecycle_in_run_ai_shapes(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    body = compute("one-gpu", TENANT, cpuCoreLimit=8, cpuMemoryLimit="32G")
    assert_matches("ComputeCreationRequest", body)
    created = await call(app, "POST", COMPUTES, admin, json=body)
    assert created.status_code == 202, created.text
    assert_matches("ComputeAsset", created.json())
    path = f"{COMPUTES}/{created.json()['meta']['id']}"
    half = {"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 0.5}
    updated = await call(app, "PUT", path, admin, json={"meta": {"name": "half"}, "spec": half})
    assert updated.status_code == 202, updated.text
    await project_all(clean_pool)
    got = await call(app, "GET", path, admin)
    assert_matches("ComputeAsset", got.json())
    assert got.json()["spec"] == half
    assert got.json()["meta"]["name"] == "half"
    assert_matches("ComputeListResponse", (await call(app, "GET", COMPUTES, admin)).json())
    assert (await call(app, "DELETE", path, admin)).status_code == 202
    await project_all(clean_pool)
    assert (await call(app, "GET", COMPUTES, admin)).json() == {"entries": []}


@pytest.mark.parametrize(
    ("path", "body", "pointer"),
    [
        (ENVIRONMENTS, environment("e", TENANT, image=""), "/spec/image"),
        (
            ENVIRONMENTS,
            environment("e", TENANT, imagePullPolicy="Sometimes"),
            "/spec/imagePullPolicy",
        ),
        (ENVIRONMENTS, environment("e", TENANT, tty=True), "/spec/tty"),
        (
            ENVIRONMENTS,
            environment(
                "e",
                TENANT,
                connections=[
                    {
                        "name": "tb",
                        "internalToolInfo": {
                            "toolType": "tensorboard",
                            "connectionType": "NodePort",
                            "containerPort": 70000,
                        },
                    }
                ],
            ),
            "/spec/connections/0/internalToolInfo/containerPort",
        ),
        (ENVIRONMENTS, environment("e", {"scope": "project"}), "/meta/projectId"),
        (ENVIRONMENTS, environment("e", {"scope": "project", "projectId": 999}), "/meta/projectId"),
        (
            ENVIRONMENTS,
            {"meta": {"name": "e", "scope": "tenant", "colour": "red"}, "spec": {}},
            "/meta/colour",
        ),
        (
            ENVIRONMENTS,
            environment(
                "e",
                TENANT,
                environmentVariables=[
                    {
                        "name": "TOKEN",
                        "credential": {
                            "assetId": "0b7c4f7e-2a1d-4c3b-9e8f-6a5d4c3b2a10",
                            "key": "k",
                        },
                    }
                ],
            ),
            "/spec/environmentVariables/0/credential/assetId",
        ),
        (COMPUTES, compute("c", TENANT, cpuCoreLimit=1), "/spec/cpuCoreLimit"),
        (COMPUTES, compute("c", TENANT, cpuMemoryRequest="lots"), "/spec/cpuMemoryRequest"),
        (COMPUTES, compute("c", TENANT, gpuRequestType="memory"), "/spec/gpuMemoryRequest"),
        (COMPUTES, compute("c", TENANT, gpuPortionRequest=1.5), "/spec/gpuPortionRequest"),
        (COMPUTES, compute("", TENANT), "/meta/name"),
        (COMPUTES, compute("c", {"scope": "system"}), "/meta/scope"),
    ],
)
async def test_invalid_bodies_name_the_field_and_write_nothing(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    path: str,
    body: dict[str, Any],
    pointer: str,
) -> None:
    response = await call(app, "POST", path, admin, json=body)
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["code"] == 400
    assert problem["message"]
    assert pointer in [e["pointer"] for e in problem["errors"]], problem
    assert (
        await clean_pool.fetchval("SELECT count(*) FROM events WHERE stream_type <> 'application'")
        == 0
    )


async def test_names_are_unique_per_kind_and_scope(
    app: Litestar, admin: str, org: dict[str, Any]
) -> None:
    first, second = (in_project(p) for p in org["projects"])
    assert (
        await call(app, "POST", ENVIRONMENTS, admin, json=environment("pt", first))
    ).status_code == 202
    clash = await call(app, "POST", ENVIRONMENTS, admin, json=environment("pt", first))
    assert clash.status_code == 409, clash.text
    assert clash.json()["errors"][0]["pointer"] == "/meta/name"
    elsewhere = await call(app, "POST", ENVIRONMENTS, admin, json=environment("pt", second))
    assert elsewhere.status_code == 202
    other_kind = await call(app, "POST", COMPUTES, admin, json=compute("pt", first))
    assert other_kind.status_code == 202


async def test_list_filters_follow_the_scope_tree(
    app: Litestar, admin: str, org: dict[str, Any], clean_pool: asyncpg.Pool
) -> None:
    llm, vision = org["projects"]
    department = {"scope": "department", "departmentId": org["department"]["id"]}
    for name, scope in (
        ("everywhere", TENANT),
        ("research-wide", department),
        ("llm-only", in_project(llm)),
        ("vision-only", in_project(vision)),
    ):
        created = await call(app, "POST", ENVIRONMENTS, admin, json=environment(name, scope))
        assert created.status_code == 202, created.text
    await project_all(clean_pool)

    async def names(**params: Any) -> list[str]:
        listed = await call(app, "GET", ENVIRONMENTS, admin, params=params)
        assert listed.status_code == 200, listed.text
        return sorted(e["meta"]["name"] for e in listed.json()["entries"])

    assert await names(projectId=llm["id"]) == ["everywhere", "llm-only", "research-wide"]
    assert await names(projectId=llm["id"], scope="project") == ["llm-only"]
    assert await names(departmentId=org["department"]["id"]) == ["everywhere", "research-wide"]
    assert await names(departmentId=org["department"]["id"], includeDescendants="true") == [
        "everywhere",
        "llm-only",
        "research-wide",
        "vision-only",
    ]
    assert await names(scope="tenant") == ["everywhere"]
    assert await names(name="llm-only") == ["llm-only"]
    assert await names(distributedFramework="PyTorch", isDistributed="true") != []
    assert await names(distributedFramework="MPI") == []
    both = await call(
        app, "GET", ENVIRONMENTS, admin, params={"scope": "project", "includeDescendants": "true"}
    )
    assert both.status_code == 400


async def test_grants_limit_what_a_caller_sees_and_changes(
    app: Litestar, admin: str, org: dict[str, Any], clean_pool: asyncpg.Pool
) -> None:
    llm, vision = org["projects"]
    editor = await token_for(
        clean_pool, "llm-editor", (Grant(role="editor", scope_kind="project", scope_id=llm["id"]),)
    )
    viewer = await token_for(
        clean_pool, "llm-viewer", (Grant(role="viewer", scope_kind="project", scope_id=llm["id"]),)
    )
    theirs = await call(
        app, "POST", ENVIRONMENTS, admin, json=environment("vision-env", in_project(vision))
    )
    shared = await call(app, "POST", ENVIRONMENTS, admin, json=environment("shared", TENANT))
    await project_all(clean_pool)

    mine = await call(
        app, "POST", ENVIRONMENTS, editor, json=environment("llm-env", in_project(llm))
    )
    assert mine.status_code == 202, mine.text
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    denied = await call(
        app, "POST", ENVIRONMENTS, editor, json=environment("x", in_project(vision))
    )
    # a project out of the caller's sight answers as one that does not exist
    assert denied.status_code == 400, denied.text
    assert denied.json()["type"].endswith("/unknown-scope")
    assert (
        await call(app, "POST", ENVIRONMENTS, viewer, json=environment("y", in_project(llm)))
    ).status_code == 403
    assert (
        await call(app, "POST", ENVIRONMENTS, editor, json=environment("z", TENANT))
    ).status_code == 403
    assert (
        await call(app, "DELETE", f"{ENVIRONMENTS}/{shared.json()['meta']['id']}", editor)
    ).status_code == 403
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before

    await project_all(clean_pool)
    seen = (await call(app, "GET", ENVIRONMENTS, viewer)).json()["entries"]
    assert sorted(e["meta"]["name"] for e in seen) == ["llm-env", "shared"]
    hidden = await call(app, "GET", f"{ENVIRONMENTS}/{theirs.json()['meta']['id']}", viewer)
    assert hidden.status_code == 404
    no_token = await call(app, "GET", ENVIRONMENTS, None)
    assert no_token.status_code == 401
