"""A thing in use cannot be deleted, and a deleted thing cannot come into use, decided where each
write is made: a script that links an asset and deletes it at once is refused, a deletion racing
template creations never leaves a template built on a deleted asset, and an org unit is not
deleted while it holds anything. No projector runs here, so nothing a read model knows could
decide it."""

import asyncio
from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from tests.api.client import client_for
from tests.api.support import call
from tests.api.test_workloads import WORKLOADS, setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]

TEMPLATES = "/api/v1/workload-templates/distributed"
ENVIRONMENTS = "/api/v1/asset/environment"
SUPPORTS = {"distributed": True, "distFramework": "PyTorch"}


async def created(app: Litestar, admin: str, path: str, body: dict[str, Any]) -> str:
    response = await call(app, "POST", path, admin, json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["meta"]["id"])


async def environment(app: Litestar, admin: str, name: str) -> str:
    body = {
        "meta": {"name": name, "scope": "tenant", "workloadSupportedTypes": SUPPORTS},
        "spec": {"image": "nvcr.io/nvidia/pytorch:24.05-py3"},
    }
    return await created(app, admin, ENVIRONMENTS, body)


def template(name: str, **assets: Any) -> dict[str, Any]:
    return {
        "meta": {"name": name, "scopeType": "tenant"},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        "assets": assets,
    }


async def test_assets_linked_or_loaded_a_moment_ago_cannot_be_deleted(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    env = await environment(app, admin, "pt")
    gpu = await created(app, admin, "/api/v1/asset/compute", {
        "meta": {"name": "gpu", "scope": "tenant"}, "spec": {"gpuDevicesRequest": 8},
    })  # fmt: skip
    data = await created(app, admin, "/api/v1/asset/datasource/nfs", {
        "meta": {"name": "corpus", "scope": "tenant"},
        "spec": {"server": "nfs.example.com", "path": "/exports", "mountPath": "/data"},
    })  # fmt: skip
    body = template("llm", environment=env, compute=gpu, datasources=[{"id": data, "kind": "nfs"}])
    made = await created(app, admin, TEMPLATES, body)
    paths = [
        f"{ENVIRONMENTS}/{env}",
        f"/api/v1/asset/compute/{gpu}",
        f"/api/v1/asset/datasource/nfs/{data}",
    ]
    for path in paths:
        refused = await call(app, "DELETE", path, admin)
        assert refused.status_code == 409, refused.text
        assert "template llm" in refused.json()["detail"]
    deletions = "SELECT count(*) FROM events WHERE type LIKE '%.deleted.v1'"
    assert await clean_pool.fetchval(deletions) == 0  # nothing written by a refusal

    # A template that drops a link frees that asset at once; deleting the template frees all.
    unlinked = template("llm", environment=env, datasources=[{"id": data, "kind": "nfs"}])
    unlinked["meta"] = {"name": "llm"}  # a PUT names no scope: it never moves
    replaced = await call(app, "PUT", f"{TEMPLATES}/{made}", admin, json=unlinked)
    assert replaced.status_code == 200, replaced.text
    assert (await call(app, "DELETE", paths[1], admin)).status_code == 202
    assert (await call(app, "DELETE", paths[0], admin)).status_code == 409
    assert (await call(app, "DELETE", f"{TEMPLATES}/{made}", admin)).status_code < 300
    for path in (paths[0], paths[2]):
        deleted = await call(app, "DELETE", path, admin)
        assert deleted.status_code == 202, deleted.text


async def test_a_deletion_right_after_a_link_is_refused_every_time(
    app: Litestar, admin: str
) -> None:
    refusals = 0
    for attempt in range(100):
        env = await environment(app, admin, f"pt-{attempt}")
        await created(app, admin, TEMPLATES, template(f"t-{attempt}", environment=env))
        refusals += (await call(app, "DELETE", f"{ENVIRONMENTS}/{env}", admin)).status_code == 409
    assert refusals == 100


async def test_a_deletion_racing_linkers_never_leaves_a_template_on_a_deleted_asset(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    headers = {"authorization": f"Bearer {admin}"}
    for trial in range(100):
        env = await environment(app, admin, f"pt-{trial}")
        async with client_for(app) as client:  # one app, requests in flight together
            linkers = [
                client.post(
                    TEMPLATES, headers=headers, json=template(f"t{trial}-{i}", environment=env)
                )
                for i in range(20)
            ]
            deletion = client.delete(f"{ENVIRONMENTS}/{env}", headers=headers)
            # The deletion goes out among the linkers (at a place each trial), not after them.
            at = trial % 21
            answers = await asyncio.gather(*linkers[:at], deletion, *linkers[at:])
        deleted = answers[at]
        made = [a for i, a in enumerate(answers) if i != at and a.status_code == 202]
        refused = [a for i, a in enumerate(answers) if i != at and a.status_code != 202]
        for answer in refused:
            assert answer.status_code == 400, answer.text
            assert "/assets/environment" in answer.text
        if deleted.status_code == 202:
            assert made == [], "a template was created on an environment deleted before it"
        else:
            assert deleted.status_code == 409, deleted.text
            assert made, "the deletion was refused though nothing uses the environment"
        uses = await clean_pool.fetchval("SELECT count(*) FROM stream_uses WHERE used_id = $1", env)
        assert uses == len(made)


async def test_a_project_holding_a_template_an_asset_or_a_workload_cannot_be_deleted(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)  # a project holding a template, its assets at the tenant
    project_path = f"/api/v1/org-unit/projects/{found['project']['id']}"
    template_path = f"{TEMPLATES}/{found['template']['meta']['id']}"
    scope = {"scope": "project", "projectId": found["project"]["id"]}
    env = await created(app, admin, ENVIRONMENTS, {
        "meta": {"name": "local", **scope}, "spec": {"image": "pt:2"},
    })  # fmt: skip
    submitted = await call(app, "POST", WORKLOADS, admin, json=submission(found))
    assert submitted.status_code == 202, submitted.text
    workload_path = f"{WORKLOADS}/{submitted.json()['workloadId']}"

    holds = [
        ("workload ddp-run", workload_path),
        ("template ddp", template_path),
        ("environment local", f"{ENVIRONMENTS}/{env}"),
    ]
    for index, (what, path) in enumerate(holds):
        refused = await call(app, "DELETE", project_path, admin)
        assert refused.status_code == 409, refused.text
        for still, _ in holds[index:]:
            assert still in refused.json()["detail"]
        assert (await call(app, "DELETE", path, admin)).status_code < 300, what
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    assert (await call(app, "DELETE", project_path, admin)).status_code == 204
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before + 1
