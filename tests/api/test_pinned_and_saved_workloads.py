"""Over HTTP: `templateVersion` pins the template version a workload runs (linked assets'
versions included) and every workload reads back the version it ran; a workload saved as a
template (`POST /api/v1/trainplate/workloads/{id}/template`), and its refusals named."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from tests.api.support import call, project_all
from tests.api.test_workloads import TEMPLATES, WORKLOADS, setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]


def saved_path(workload_id: str) -> str:
    return f"/api/v1/trainplate/workloads/{workload_id}/template"


async def submitted(app: Litestar, admin: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = await call(app, "POST", WORKLOADS, admin, json=body)
    assert answer.status_code == 202, answer.text
    made: dict[str, Any] = answer.json()
    return made


async def test_a_pinned_workload_runs_that_version_and_every_workload_says_its_version(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    template_id = found["template"]["meta"]["id"]
    compute = {"meta": {"name": "gpu-pytorch"}, "spec": {"gpuDevicesRequest": 4}}
    path = f"/api/v1/asset/compute/{found['linked']['compute']}"
    changed = await call(app, "PUT", path, admin, json=compute)
    assert changed.status_code < 300, changed.text
    await project_all(clean_pool)  # the fan-out: the template's version 2 combines the new one
    edited = await call(app, "PATCH", f"{TEMPLATES}/{template_id}", admin,
                        json={"spec": {"numWorkers": 5}})  # fmt: skip
    assert edited.status_code == 200, edited.text

    pinned = await submitted(app, admin, submission(found, "pinned", templateVersion=1))
    assert pinned["templateVersion"] == 1
    assert pinned["spec"]["numWorkers"] == 2
    assert pinned["spec"]["compute"]["gpuDevicesRequest"] == 8
    second = await submitted(app, admin, submission(found, "second", templateVersion=2))
    assert (second["spec"]["numWorkers"], second["spec"]["compute"]["gpuDevicesRequest"]) == (2, 4)
    current = await submitted(app, admin, submission(found, "current"))
    assert current["templateVersion"] == 3
    assert current["spec"]["numWorkers"] == 5

    await project_all(clean_pool)
    for made, version in ((pinned, 1), (current, 3)):
        got = await call(app, "GET", f"{WORKLOADS}/{made['workloadId']}", admin)
        assert got.status_code == 200, got.text
        assert (got.json()["templateId"], got.json()["templateVersion"]) == (template_id, version)
        any_type = await call(app, "GET", f"/api/v1/workloads/{made['workloadId']}", admin)
        assert any_type.json()["additionalFields"]["templateVersion"] == version


@pytest.mark.parametrize("version", [4, 0, -1, "one", 1.5, 2**63])
async def test_an_unknown_template_version_is_a_400_naming_it_and_writes_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, version: Any
) -> None:
    found = await setup(app, admin)
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    for body in (
        submission(found, templateVersion=version),
        {**submission(found, spec={"image": "x:1", "numWorkers": 1}), "templateId": None,
         "templateVersion": 1},
    ):  # fmt: skip
        refused = await call(app, "POST", WORKLOADS, admin, json=body)
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"] == "/templateVersion", refused.text
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before


async def test_a_workload_saved_as_a_template_runs_as_it_was_submitted(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    tuned = {"numWorkers": 3, "args": "train.py --lr 0.1"}
    ran = await submitted(app, admin, submission(found, spec=tuned))
    saved = await call(app, "POST", saved_path(ran["workloadId"]), admin,
                       json={"name": "ddp-tuned", "description": "from a good run"})  # fmt: skip
    assert saved.status_code == 202, saved.text
    template = saved.json()
    assert template["meta"]["scopeType"] == "project"
    assert str(template["meta"]["projectId"]) == found["project"]["id"]
    assert (template["spec"]["numWorkers"], template["spec"]["args"]) == (3, "train.py --lr 0.1")
    assert saved.headers["etag"] == '"1"'
    again = await submitted(
        app, admin, submission(found, "again", templateId=template["meta"]["id"])
    )
    assert again["spec"] == ran["spec"]
    assert again["templateVersion"] == 1

    wider = await call(app, "POST", saved_path(ran["workloadId"]), admin,
                       json={"name": "ddp-tuned", "scope": {"cluster": "east"}})  # fmt: skip
    assert wider.status_code == 202, wider.text
    assert wider.json()["meta"]["scopeType"] == "cluster"


@pytest.mark.parametrize(
    ("body", "status", "pointer"),
    [
        ({"name": "ddp"}, 409, "/name"),
        ({"name": "x", "scope": {"project": "nope"}}, 400, "/scope"),
        ({"name": "x", "scope": {"tenant": False}}, 400, "/scope"),
        ({"name": "x", "scope": {"project": "llm", "department": "d"}}, 400, "/scope"),
        ({"name": "x", "scope": {"planet": "mars"}}, 400, "/scope/planet"),
        ({"name": ""}, 400, "/name"),
        ({"name": "x", "colour": 1}, 400, "/colour"),
    ],
)
async def test_a_refused_save_names_the_field_and_writes_nothing(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    body: dict[str, Any],
    status: int,
    pointer: str,
) -> None:
    found = await setup(app, admin)
    ran = await submitted(app, admin, submission(found))
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    refused = await call(app, "POST", saved_path(ran["workloadId"]), admin, json=body)
    assert refused.status_code == status, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == [pointer], refused.text
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before


async def test_a_save_of_no_workload_is_a_404_and_the_route_is_in_the_openapi_document(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    missing = saved_path("00000000-0000-0000-0000-000000000009")
    answer = await call(app, "POST", missing, admin, json={"name": "x"})
    assert answer.status_code == 404, answer.text
    assert answer.json()["type"] == "/problems/workload-not-found"
    document = (await call(app, "GET", "/schema/openapi.json", admin)).json()
    assert "post" in document["paths"]["/api/v1/trainplate/workloads/{workload_id}/template"]
    request = document["components"]["schemas"]["DistributedCreationRequest"]
    assert "templateVersion" in request["properties"]
