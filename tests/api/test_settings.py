"""Tenant settings: Run:ai's shapes, recorded as events, and what each changes for templates,
compute resources and workloads."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, project_all, token_for
from tests.api.test_templates import IMAGE, org
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

SETTINGS = "/v1/k8s/setting"
TEMPLATES = "/api/v1/workload-templates/distributed"


async def turn(app: Litestar, token: str, key: str, value: Any) -> int:
    answer = await call(app, "PUT", SETTINGS, token, json={"key": key, "value": value})
    return answer.status_code


def template(project: dict[str, Any], name: str, **spec: Any) -> dict[str, Any]:
    return {
        "meta": {"name": name, "scopeType": "project", "scopeId": project["id"]},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 1, "image": IMAGE, **spec},
    }


async def test_settings_read_and_change_in_run_ai_shapes_by_tenant_admins_only(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    listed = await call(app, "GET", SETTINGS, admin)
    assert listed.status_code == 200
    for setting in listed.json():
        assert_matches("Setting", setting)
    values = {s["key"]: s["value"] for s in listed.json()}
    assert values["workloads.dataVolumes"] == "true"
    assert values["resources.gpuResourceOptimization"] == "false"
    assert values["workloads.distributedFrameworks.JAX"] == "true"
    body = {"key": "workloads.dataVolumes", "value": False}
    assert_matches("TenantSettingCreationRequest", body)
    changed = await call(app, "PUT", SETTINGS, admin, json=body)
    assert (changed.status_code, changed.json()) == (200, {"msg": "done"})
    await project_all(clean_pool)  # the projector's part: the GETs read the read model
    one = await call(app, "GET", f"{SETTINGS}/workloads.dataVolumes", admin)
    assert one.json() is False
    count = "SELECT count(*) FROM events WHERE type = 'tenant.setting_changed.v1'"
    assert await clean_pool.fetchval(count) == 1
    assert await turn(app, admin, "workloads.dataVolumes", "false") == 200  # no change: no event
    assert await clean_pool.fetchval(count) == 1
    unknown = await call(app, "PUT", SETTINGS, admin, json={"key": "x.y", "value": True})
    assert unknown.status_code == 400
    assert unknown.json()["errors"][0]["pointer"] == "/key"
    assert await turn(app, admin, "workloads.dataVolumes", "maybe") == 400
    viewer = await token_for(
        clean_pool, "viewer", (Grant(role="admin", scope_kind="project", scope_id="1"),)
    )
    assert await turn(app, viewer, "workloads.dataVolumes", True) == 403
    assert await clean_pool.fetchval(count) == 1


async def test_what_each_setting_refuses_names_the_field_and_writes_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    units = await org(app, admin)
    project, cluster = units["project"], units["cluster"]["uuid"]
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    limit = {"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 0.5,
             "gpuPortionLimit": 0.75}  # fmt: skip
    with_limit = template(project, "a", compute=limit)
    volume = {"dataVolume": [{"id": "7d1e5f4a-8c6b-4a2d-9e3f-1b0c9d8e7f6a", "mountPath": "/data"}]}
    refused = await call(app, "POST", TEMPLATES, admin, json=with_limit)
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"][0]["pointer"] == "/spec/compute/gpuPortionLimit"
    assert "resources.gpuResourceOptimization" in refused.json()["message"]
    compute = {"meta": {"name": "half", "scope": "tenant"}, "spec": limit}
    refused = await call(app, "POST", "/api/v1/asset/compute", admin, json=compute)
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"][0]["pointer"] == "/spec/gpuPortionLimit"
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before

    assert await turn(app, admin, "resources.gpuResourceOptimization", True) == 200
    assert (await call(app, "POST", TEMPLATES, admin, json=with_limit)).status_code == 202
    assert (
        await call(app, "POST", "/api/v1/asset/compute", admin, json=compute)
    ).status_code == 202

    # On (the default), a data volume still comes from assets only, never set inline.
    on = await call(app, "POST", TEMPLATES, admin, json=template(project, "b", storage=volume))
    assert on.status_code == 400, on.text
    assert on.json()["errors"][0]["pointer"] == "/spec/storage/dataVolume/0"
    assert await turn(app, admin, "workloads.dataVolumes", False) == 200
    off = template(project, "b2", storage=volume)
    refused = await call(app, "POST", TEMPLATES, admin, json=off)
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"][0]["pointer"] == "/spec/storage/dataVolume"

    assert await turn(app, admin, f"clusters.{cluster}.distributedFrameworks.PyTorch", False) == 200
    refused = await call(app, "POST", TEMPLATES, admin, json=template(project, "c"))
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"][0]["pointer"] == "/spec/distributedFramework"
    assert f"on cluster {cluster}" in refused.json()["message"]
    tenant_wide = {**template(project, "d"), "meta": {"name": "d", "scopeType": "tenant"}}
    assert (await call(app, "POST", TEMPLATES, admin, json=tenant_wide)).status_code == 202
    # The same framework for a workload of that cluster's project is refused too.
    submission = {"name": "run", "projectId": project["id"], "clusterId": cluster,
                  "spec": template(project, "e")["spec"]}  # fmt: skip
    refused = await call(app, "POST", "/api/v1/workloads/distributed", admin, json=submission)
    assert refused.status_code == 400, refused.text
    assert refused.json()["errors"][0]["pointer"] == "/spec/distributedFramework"

    assert await turn(app, admin, "workloads.flexibleTemplates", False) == 200
    refused = await call(
        app, "POST", TEMPLATES, admin, json=template(project, "f", distributedFramework="TF")
    )
    assert refused.status_code == 400, refused.text
    assert "workloads.flexibleTemplates" in refused.json()["message"]


async def test_the_ngc_catalog_is_off_by_default_and_governs_an_ngc_catalog_image_source(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    project = (await org(app, admin))["project"]
    values = {s["key"]: s for s in (await call(app, "GET", SETTINGS, admin)).json()}
    assert values["workloads.ngcCatalog"]["value"] == "false"
    assert values["workloads.ngcCatalog"]["label"] == "NGC catalog"
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    ngc = template(project, "ngc", imageSource="ngcCatalog")
    refused = await call(app, "POST", TEMPLATES, admin, json=ngc)
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/spec/imageSource"]
    assert "workloads.ngcCatalog" in refused.json()["message"]
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before
    custom = await call(
        app, "POST", TEMPLATES, admin, json=template(project, "own", imageSource="custom")
    )
    assert custom.status_code == 202, custom.text
    assert await turn(app, admin, "workloads.ngcCatalog", True) == 200
    accepted = await call(app, "POST", TEMPLATES, admin, json=ngc)
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["spec"]["imageSource"] == "ngcCatalog"


async def test_flexible_workload_submission_is_on_by_default_and_off_refuses_templates(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    units = await org(app, admin)
    project, cluster = units["project"], units["cluster"]["uuid"]
    values = {s["key"]: s for s in (await call(app, "GET", SETTINGS, admin)).json()}
    assert values["workloads.flexibleWorkloadSubmission"]["value"] == "true"
    made = await call(app, "POST", TEMPLATES, admin, json=template(project, "ddp"))
    assert made.status_code == 202, made.text
    assert await turn(app, admin, "workloads.flexibleWorkloadSubmission", False) == 200
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    refused = await call(app, "POST", TEMPLATES, admin, json=template(project, "ddp2"))
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/meta"]
    assert "workloads.flexibleWorkloadSubmission" in refused.json()["message"]
    submission = {"name": "run", "projectId": project["id"], "clusterId": cluster,
                  "templateId": made.json()["meta"]["id"]}  # fmt: skip
    refused = await call(app, "POST", "/api/v1/workloads/distributed", admin, json=submission)
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/templateId"]
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before
    # The original form: a whole spec, no template.
    whole = {k: v for k, v in submission.items() if k != "templateId"}
    whole["spec"] = template(project, "x")["spec"]
    accepted = await call(app, "POST", "/api/v1/workloads/distributed", admin, json=whole)
    assert accepted.status_code == 202, accepted.text


async def test_workers_are_bounded_by_a_tenant_limit_naming_the_field(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """`workloads.maxWorkers` (1,000 unless set): templates created, replaced or patched and
    workloads submitted with more workers are refused, naming the field, writing nothing."""
    units = await org(app, admin)
    project, cluster = units["project"], units["cluster"]["uuid"]
    listed = {s["key"]: s for s in (await call(app, "GET", SETTINGS, admin)).json()}
    assert_matches("Setting", listed["workloads.maxWorkers"])
    assert (listed["workloads.maxWorkers"]["value"], listed["workloads.maxWorkers"]["type"]) == (
        "1000",
        "Integer",
    )
    made = await call(app, "POST", TEMPLATES, admin, json=template(project, "ten", numWorkers=10))
    assert made.status_code == 202, made.text
    path = f"{TEMPLATES}/{made.json()['meta']['id']}"
    whole = {"name": "run", "projectId": project["id"], "clusterId": cluster,
             "spec": template(project, "x", numWorkers=19_000)["spec"]}  # fmt: skip
    from_template = {"name": "run", "projectId": project["id"], "clusterId": cluster,
                     "templateId": made.json()["meta"]["id"]}  # fmt: skip
    elastic = {"spec": {"maxReplicas": 5_000}}
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    for method, url, body, pointer in [
        ("POST", TEMPLATES, template(project, "big", numWorkers=19_000), "/spec/numWorkers"),
        ("PUT", path, {"meta": {"name": "ten"}, "spec": whole["spec"]}, "/spec/numWorkers"),
        ("PATCH", path, {"spec": {"numWorkers": 25_000}}, "/spec/numWorkers"),
        ("PATCH", path, elastic, "/spec/maxReplicas"),
        ("POST", "/api/v1/workloads/distributed", whole, "/spec/numWorkers"),
        ("POST", "/api/v1/workloads/distributed",
         {**from_template, "spec": {"numWorkers": 1_001}}, "/spec/numWorkers"),
    ]:  # fmt: skip
        refused = await call(app, method, url, admin, json=body)
        assert refused.status_code == 400, (method, url, refused.text)
        assert [e["pointer"] for e in refused.json()["errors"]] == [pointer]
        assert "workloads.maxWorkers" in refused.json()["message"]
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before

    # The limit is the tenant's: its own bounds are Run:ai's 1 to 10,000.
    for bad in (0, 10_001, True, "many", "-3"):
        assert await turn(app, admin, "workloads.maxWorkers", bad) == 400, bad
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before
    assert await turn(app, admin, "workloads.maxWorkers", "8") == 200  # Run:ai's wire: a string
    await project_all(clean_pool)
    listed = {s["key"]: s for s in (await call(app, "GET", SETTINGS, admin)).json()}
    assert listed["workloads.maxWorkers"]["value"] == "8"
    # Lowered, it refuses the template's ten workers when submitted, and takes eight.
    refused = await call(app, "POST", "/api/v1/workloads/distributed", admin, json=from_template)
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == ["/spec/numWorkers"]
    eight = {**from_template, "spec": {"numWorkers": 8}}
    accepted = await call(app, "POST", "/api/v1/workloads/distributed", admin, json=eight)
    assert accepted.status_code == 202, accepted.text
