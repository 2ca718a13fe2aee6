"""Node pools over HTTP in Run:ai's shapes: create, list, count, get, PATCH, PUT and delete;
callers out of the cluster's sight answered as for no pool; bad bodies refused naming the field;
and the templates of the cluster, which may name only its pools, and say when one went."""

from typing import Any
from uuid import uuid4

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, project_all, token_for
from tests.api.test_assets import org  # noqa: F401  # the fixture: a cluster, a department, two projects
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

POOLS = "/api/v1/node-pools"
TEMPLATES = "/api/v1/workload-templates/distributed"


def nodepool(name: str, cluster_id: str, **extra: Any) -> dict[str, Any]:
    body = {"name": name, "clusterId": cluster_id, "labelKey": "node-type", "labelValue": name}
    return {**body, **extra}


async def made(app: Litestar, token: str, body: dict[str, Any]) -> dict[str, Any]:
    assert_matches("NodepoolCreateFields", body)
    response = await call(app, "POST", POOLS, token, json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def template(name: str, project: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "meta": {"name": name, "scopeType": "project", "scopeId": project["id"]},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "pt:24", **spec},
    }


async def test_a_node_pool_round_trips_in_run_ai_shapes(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    cluster = org["cluster"]["uuid"]
    swap = {"swapEnabled": True, "cpuSwapMemorySize": "100G"}
    created = await made(app, admin, nodepool("a100", cluster, gpuResourceOptimization=swap))
    assert (created["name"], created["clusterName"], created["isDefault"]) == (
        "a100",
        "east",
        False,
    )
    assert created["gpuResourceOptimization"] == swap
    await made(app, admin, nodepool("default", cluster))
    again = await call(app, "POST", POOLS, admin, json=nodepool("a100", cluster))
    assert again.status_code == 409, again.text
    await project_all(clean_pool)

    listed = (await call(app, "GET", POOLS, admin)).json()["nodepools"]
    assert [(p["name"], p["isDefault"]) for p in listed] == [("a100", False), ("default", True)]
    page = await call(
        app, "GET", POOLS, admin, params={"sortBy": "name", "sortOrder": "desc", "limit": 1}
    )
    assert [p["name"] for p in page.json()["nodepools"]] == ["default"]
    swapping = {"filterBy": "swapEnabled==true"}
    assert [
        p["name"]
        for p in (await call(app, "GET", POOLS, admin, params=swapping)).json()["nodepools"]
    ] == ["a100"]
    assert (await call(app, "GET", f"{POOLS}/count", admin, params=swapping)).json() == {"count": 1}
    got = await call(app, "GET", f"{POOLS}/{created['id']}", admin)
    assert got.status_code == 200, got.text
    assert got.json()["labelValue"] == "a100"

    one = f"{POOLS}/{created['id']}"
    patched = await call(app, "PATCH", one, admin, json={"labelValue": "a100-80g"})
    assert patched.status_code == 200, patched.text
    assert (patched.json()["labelValue"], patched.json()["gpuResourceOptimization"]) == (
        "a100-80g",
        swap,
    )
    put = await call(app, "PUT", one, admin, json={"overProvisioningRatio": 2})
    assert put.status_code == 200, put.text
    assert put.json()["labelKey"] == "node-type"  # a PUT keeps the label it leaves out
    assert put.json()["overProvisioningRatio"] == 2
    assert "gpuResourceOptimization" not in put.json()  # and unsets the rest
    assert (await call(app, "DELETE", one, admin)).status_code == 204
    await project_all(clean_pool)
    assert (await call(app, "GET", one, admin)).status_code == 404
    assert (await call(app, "DELETE", one, admin)).status_code == 404


async def test_bad_bodies_and_ids_are_refused_naming_the_field(
    app: Litestar,
    admin: str,
    org: dict[str, Any],  # noqa: F811
) -> None:
    cluster = org["cluster"]["uuid"]
    for body, pointer in [
        (nodepool("A100 GPUs", cluster, labelValue="a100"), "/name"),
        (nodepool("a100", str(uuid4())), "/clusterId"),
        (nodepool("a100", cluster, labelKey="bad key"), "/labelKey"),
        (nodepool("a100", cluster, overProvisioningRatio=9), "/overProvisioningRatio"),
        (nodepool("a100", cluster, colour="red"), ""),
    ]:
        refused = await call(app, "POST", POOLS, admin, json=body)
        assert refused.status_code == 400, (body, refused.text)
        assert pointer in [e["pointer"] for e in refused.json().get("errors", [])] or not pointer
    assert (await call(app, "GET", f"{POOLS}/not-an-id", admin)).status_code in (400, 404)
    assert (
        await call(app, "GET", POOLS, admin, params={"filterBy": "colour==red"})
    ).status_code == 400
    missing = await call(app, "PATCH", f"{POOLS}/{uuid4()}", admin, json={"labelValue": "x"})
    assert missing.status_code == 404


async def test_a_caller_out_of_the_cluster_s_sight_sees_no_pool_and_manages_none(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    cluster = org["cluster"]["uuid"]
    created = await made(app, admin, nodepool("a100", cluster))
    await project_all(clean_pool)
    llm = org["projects"][0]["id"]
    researcher = await token_for(
        clean_pool, "researcher", (Grant(role="editor", scope_kind="project", scope_id=llm),)
    )
    assert len((await call(app, "GET", POOLS, researcher)).json()["nodepools"]) == 1
    denied = await call(app, "POST", POOLS, researcher, json=nodepool("h100", cluster))
    assert denied.status_code == 403, denied.text
    west = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "west"})).json()
    stranger = await token_for(
        clean_pool, "stranger", (Grant(role="admin", scope_kind="cluster", scope_id=west["uuid"]),)
    )
    await project_all(clean_pool)
    assert (await call(app, "GET", POOLS, stranger)).json()["nodepools"] == []
    one = f"{POOLS}/{created['id']}"
    assert (await call(app, "GET", one, stranger)).status_code == 404
    assert (await call(app, "DELETE", one, stranger)).status_code == 404


async def test_a_template_names_only_its_cluster_s_pools_and_says_when_one_went(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    cluster, llm = org["cluster"]["uuid"], org["projects"][0]
    unchecked = await call(
        app, "POST", TEMPLATES, admin, json=template("before", llm, nodePools=["a100"])
    )
    assert unchecked.status_code == 202, unchecked.text  # no pool registered: none checked
    v100 = await made(app, admin, nodepool("v100", cluster))
    refused = await call(
        app, "POST", TEMPLATES, admin, json=template("t", llm, nodePools=["v100", "a100"])
    )
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/spec/nodePools/1"]
    fits = await call(app, "POST", TEMPLATES, admin, json=template("fits", llm, nodePools=["v100"]))
    assert fits.status_code == 202, fits.text
    await project_all(clean_pool)
    got = (await call(app, "GET", f"{TEMPLATES}/{fits.json()['meta']['id']}", admin)).json()
    assert got["runnable"]["isRunnable"] is True
    before = (await call(app, "GET", f"{TEMPLATES}/{unchecked.json()['meta']['id']}", admin)).json()
    assert before["runnable"]["isRunnable"] is False  # the cluster has pools now, not its one
    assert "'a100'" in before["runnable"]["issue"]

    assert (await call(app, "DELETE", f"{POOLS}/{v100['id']}", admin)).status_code == 204
    await project_all(clean_pool)
    got = (await call(app, "GET", f"{TEMPLATES}/{fits.json()['meta']['id']}", admin)).json()
    assert got["runnable"]["isRunnable"] is True  # no pool left: nothing checked
    await made(app, admin, nodepool("h100", cluster))
    await project_all(clean_pool)
    got = (await call(app, "GET", f"{TEMPLATES}/{fits.json()['meta']['id']}", admin)).json()
    assert got["runnable"] == {
        "isRunnable": False,
        "issue": "/spec/nodePools/0: the cluster has no node pool 'v100'",
    }
    listed = await call(app, "GET", TEMPLATES, admin, params={"filterBy": "runnable==false"})
    assert {t["meta"]["name"] for t in listed.json()["entries"]} == {"before", "fits"}
