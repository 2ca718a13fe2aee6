"""Distributed templates over HTTP: Run:ai's shapes, linking, rules, ETags and defaults."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from tests.api.support import call, project_all
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

TEMPLATES = "/api/v1/workload-templates/distributed"
IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3"


async def org(app: Litestar, admin: str) -> dict[str, Any]:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    body = {"name": "llm", "clusterId": cluster["uuid"]}
    project = (await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)).json()
    return {"cluster": cluster, "project": project}


async def assets(app: Litestar, admin: str, framework: str = "PyTorch") -> dict[str, str]:
    environment = {
        "meta": {
            "name": f"env-{framework.lower()}",
            "scope": "tenant",
            "workloadSupportedTypes": {"distributed": True, "distFramework": framework},
        },
        "spec": {"image": IMAGE, "environmentVariables": [{"name": "NCCL_DEBUG", "value": "INFO"}]},
    }
    compute = {
        "meta": {"name": f"gpu-{framework.lower()}", "scope": "tenant"},
        "spec": {"gpuDevicesRequest": 8, "cpuCoreRequest": 32, "cpuMemoryRequest": "256G"},
    }
    env = await call(app, "POST", "/api/v1/asset/environment", admin, json=environment)
    gpu = await call(app, "POST", "/api/v1/asset/compute", admin, json=compute)
    assert env.status_code == gpu.status_code == 202, (env.text, gpu.text)
    return {"environment": env.json()["meta"]["id"], "compute": gpu.json()["meta"]["id"]}


def template(
    name: str, project: dict[str, Any], linked: dict[str, str], **spec: Any
) -> dict[str, Any]:
    return {
        "meta": {"name": name, "scopeType": "project", "scopeId": project["id"]},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, **spec},
        "assets": linked,
    }


async def test_create_read_update_patch_delete_with_linked_assets(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    project = (await org(app, admin))["project"]
    linked = await assets(app, admin)
    body = template(
        "ddp",
        project,
        linked,
        tolerations=[
            {"name": "gpu", "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ],
    )
    assert_matches("DistributedTemplateCreationRequest", body)
    created = await call(app, "POST", TEMPLATES, admin, json=body)
    assert created.status_code == 202, created.text
    assert created.headers["etag"] == '"1"'
    made = created.json()
    assert_matches("DistributedTemplate", made)
    assert made["meta"]["workloadType"] == "Distributed"
    assert made["meta"]["projectId"] == int(project["id"])
    assert made["runnable"] == {"isRunnable": True, "issue": None}
    combined = made["combinedSpec"]
    assert combined["image"] == IMAGE
    assert combined["compute"]["gpuDevicesRequest"] == 8
    assert combined["environmentVariables"] == [{"name": "NCCL_DEBUG", "value": "INFO"}]
    assert combined["tolerations"][0]["name"] == "gpu"
    assert made["combinedMasterSpec"]["image"] == IMAGE
    path = f"{TEMPLATES}/{made['meta']['id']}"

    await project_all(clean_pool)
    got = await call(app, "GET", path, admin)
    assert got.status_code == 200, got.text
    assert_matches("DistributedTemplate", got.json())
    assert got.json()["combinedSpec"] == combined
    any_type = await call(app, "GET", f"/api/v1/workload-templates/{made['meta']['id']}", admin)
    assert any_type.status_code == 200

    update = {
        "meta": {"name": "ddp", "description": "four workers"},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 4},
        "assets": linked,
    }
    assert_matches("DistributedTemplateUpdateRequest", update)
    stale = await call(app, "PUT", path, admin, json=update, headers={"if-match": '"7"'})
    assert stale.status_code == 412, stale.text
    replaced = await call(app, "PUT", path, admin, json=update, headers={"if-match": '"1"'})
    assert replaced.status_code == 200, replaced.text
    assert replaced.headers["etag"] == '"2"'
    assert replaced.json()["spec"]["numWorkers"] == 4
    assert "tolerations" not in replaced.json()["spec"]  # a PUT replaces the whole body

    patched = await call(
        app,
        "PATCH",
        path,
        admin,
        json={"spec": {"minReplicas": 2, "maxReplicas": 8}, "fieldsToClear": ["assets.compute"]},
    )
    assert patched.status_code == 200, patched.text
    assert_matches(
        "DistributedTemplatePatchRequest",
        {"spec": {"minReplicas": 2}, "fieldsToClear": ["assets.compute"]},
    )
    assert patched.json()["spec"]["numWorkers"] == 4
    assert patched.json()["spec"]["maxReplicas"] == 8
    assert "compute" not in patched.json()["assets"]
    assert "compute" not in patched.json()["combinedSpec"]

    linked_edit = await call(app, "PATCH", path, admin, json={"spec": {"image": "other:1"}})
    assert linked_edit.status_code == 400
    assert linked_edit.json()["errors"][0]["pointer"] == "/spec/image"

    assert (await call(app, "DELETE", path, admin)).status_code == 204
    await project_all(clean_pool)
    assert (await call(app, "GET", path, admin)).status_code == 404


@pytest.mark.parametrize(
    ("framework", "clean_pod_policy", "extra"),
    [
        ("PyTorch", "None", {"minReplicas": 1, "maxReplicas": 4}),
        ("TF", "Running", {}),
        ("XGBoost", "None", {}),
        ("JAX", "None", {}),
        ("MPI", "Running", {"slotsPerWorker": 8}),
    ],
)
async def test_each_framework_gets_its_defaults(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    framework: str,
    clean_pod_policy: str,
    extra: dict[str, Any],
) -> None:
    project = (await org(app, admin))["project"]
    linked = await assets(app, admin, framework)
    body = template(
        f"t-{framework.lower()}", project, linked, distributedFramework=framework, **extra
    )
    created = await call(app, "POST", TEMPLATES, admin, json=body)
    assert created.status_code == 202, created.text
    combined = created.json()["combinedSpec"]
    assert combined["cleanPodPolicy"] == clean_pod_policy
    for field, value in {
        "imagePullPolicy": "IfNotPresent",
        "preemptibility": "preemptible",
        "priorityClass": "low",
        "backoffLimit": 6,
        "terminationGracePeriodSeconds": 30,
        "autoDeletionTimeAfterCompletionSeconds": 2_592_000,
    }.items():
        assert combined[field] == value, field
    if framework == "MPI":
        assert combined["sshAuthMountPath"] == "/root/.ssh"
        assert combined["mpiLauncherCreationPolicy"] == "AtStartup"
    path = f"{TEMPLATES}/{created.json()['meta']['id']}"
    await project_all(clean_pool)
    assert (await call(app, "GET", path, admin)).status_code == 200
    assert (
        await call(app, "PATCH", path, admin, json={"spec": {"numWorkers": 3}})
    ).status_code == 200
    assert (await call(app, "DELETE", path, admin)).status_code == 204


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        ({"spec": {"numWorkers": 2}}, "/spec/distributedFramework"),
        (
            {"spec": {"distributedFramework": "TF", "numWorkers": 2, "minReplicas": 1}},
            "/spec/minReplicas",
        ),
        (
            {"spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "slotsPerWorker": 2}},
            "/spec/slotsPerWorker",
        ),
        ({"spec": {"distributedFramework": "PyTorch", "numWorkers": 0}}, "/spec/numWorkers"),
        (
            {"spec": {"distributedFramework": "PyTorch", "numWorkers": 4, "maxReplicas": 2}},
            "/spec/maxReplicas",
        ),
        (
            {"spec": {"distributedFramework": "PyTorch", "terminationGracePeriodSeconds": 301}},
            "/spec/terminationGracePeriodSeconds",
        ),
        ({"spec": {"distributedFramework": "PyTorch", "backoffLimit": 101}}, "/spec/backoffLimit"),
        ({"spec": {"distributedFramework": "PyTorch", "tty": True}}, "/spec/tty"),
        (
            {
                "spec": {
                    "distributedFramework": "PyTorch",
                    "tolerations": [
                        {"key": "k", "operator": "Exists", "effect": "NoSchedule", "seconds": 5}
                    ],
                }
            },
            "/spec/tolerations/0/seconds",
        ),
        (
            {
                "spec": {
                    "distributedFramework": "PyTorch",
                    "compute": {"cpuCoreRequest": 4, "cpuCoreLimit": 2},
                }
            },
            "/spec/compute/cpuCoreLimit",
        ),
        (
            {
                "spec": {
                    "distributedFramework": "PyTorch",
                    "ports": [{"container": 8080, "serviceType": "NodePort", "external": 80}],
                }
            },
            "/spec/ports/0/external",
        ),
        (
            {"spec": {"distributedFramework": "PyTorch", "storage": {"pvc": [{"path": "/d"}]}}},
            "/spec/storage/pvc/0/claimInfo/size",
        ),
        (
            {"spec": {"distributedFramework": "MPI"}, "masterSpecSameAsWorker": False},
            "/masterSpecSameAsWorker",
        ),
        (
            {
                "spec": {"distributedFramework": "PyTorch"},
                "masterSpecSameAsWorker": True,
                "master": {"spec": {}},
            },
            "/master",
        ),
        ({"meta": {"name": "t", "scopeType": "project", "scopeId": "4242"}}, "/meta/scopeId"),
        ({"meta": {"name": "t", "scopeType": "project"}}, "/meta/scopeId"),
        (
            {"meta": {"name": "t", "scopeType": "tenant", "description": "x" * 251}},
            "/meta/description",
        ),
        (
            {"assets": {"environment": "0b7c4f7e-2a1d-4c3b-9e8f-6a5d4c3b2a10"}},
            "/assets/environment",
        ),
    ],
)
async def test_invalid_templates_name_the_field_and_write_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, change: dict[str, Any], pointer: str
) -> None:
    body: dict[str, Any] = {
        "meta": {"name": "t", "scopeType": "tenant"},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        **change,
    }
    response = await call(app, "POST", TEMPLATES, admin, json=body)
    assert response.status_code == 400, response.text
    assert pointer in [e["pointer"] for e in response.json()["errors"]], response.json()
    count = "SELECT count(*) FROM events WHERE stream_type = 'template'"
    assert await clean_pool.fetchval(count) == 0


async def test_names_lists_and_linked_assets(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    project = (await org(app, admin))["project"]
    linked = await assets(app, admin)
    for name in ("alpha", "beta", "gamma"):
        made = await call(app, "POST", TEMPLATES, admin, json=template(name, project, linked))
        assert made.status_code == 202, made.text
    clash = await call(app, "POST", TEMPLATES, admin, json=template("beta", project, linked))
    assert clash.status_code == 409
    assert clash.json()["errors"][0]["pointer"] == "/meta/name"
    availability = "/api/v1/workload-templates/name-availability"
    taken = {"templateName": "beta", "scopeType": "project", "scopeId": project["id"]}
    assert (await call(app, "GET", availability, admin, params=taken)).status_code == 409
    free = {**taken, "templateName": "delta"}
    assert (await call(app, "GET", availability, admin, params=free)).status_code == 204

    await project_all(clean_pool)
    listed = await call(
        app, "GET", TEMPLATES, admin, params={"limit": 2, "sortBy": "name", "sortOrder": "desc"}
    )
    assert listed.status_code == 200, listed.text
    assert_matches("DistributedTemplatesListResponse", listed.json())
    assert [t["meta"]["name"] for t in listed.json()["entries"]] == ["gamma", "beta"]
    assert listed.json()["pagination"]["nextOffset"] == 2
    filtered = await call(
        app, "GET", TEMPLATES, admin, params={"filterBy": "name=^a,runnable==true"}
    )
    assert [t["meta"]["name"] for t in filtered.json()["entries"]] == ["alpha"]
    bad = await call(app, "GET", TEMPLATES, admin, params={"filterBy": "colour==red"})
    assert bad.status_code == 400
    count = await call(
        app, "GET", "/api/v1/workload-templates/count", admin, params={"search": "MM"}
    )
    assert count.json() == {"count": 1}  # gamma: the search ignores case

    used = await call(
        app,
        "GET",
        f"/api/v1/asset/environment/{linked['environment']}",
        admin,
        params={"usageInfo": "true"},
    )
    assert_matches("EnvironmentAsset", used.json())
    assert [t["name"] for t in used.json()["usedBy"]["templates"]] == ["alpha", "beta", "gamma"]
    in_use = await call(app, "DELETE", f"/api/v1/asset/environment/{linked['environment']}", admin)
    assert in_use.status_code == 409, in_use.text
    assert "template alpha" in in_use.json()["detail"]


async def test_a_separate_master_is_patched_in_and_must_be_complete(
    app: Litestar, admin: str
) -> None:
    project = (await org(app, admin))["project"]
    linked = await assets(app, admin)
    created = await call(app, "POST", TEMPLATES, admin, json=template("m", project, linked))
    path = f"{TEMPLATES}/{created.json()['meta']['id']}"
    master = {"spec": {"compute": {"cpuCoreRequest": 2}}}
    patched = await call(
        app, "PATCH", path, admin, json={"masterSpecSameAsWorker": False, "master": master}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["masterSpecSameAsWorker"] is False
    assert patched.json()["runnable"]["isRunnable"] is False
    assert "master image" in patched.json()["runnable"]["issue"]
    with_env = {"master": {"assets": {"environment": linked["environment"]}}}
    fixed = await call(app, "PATCH", path, admin, json=with_env)
    assert fixed.status_code == 200, fixed.text
    assert fixed.json()["runnable"]["isRunnable"] is True
    assert fixed.json()["combinedMasterSpec"]["image"] == IMAGE
    assert fixed.json()["combinedMasterSpec"]["compute"]["cpuCoreRequest"] == 2


async def test_an_edit_of_a_linked_environment_reaches_the_template(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    project = (await org(app, admin))["project"]
    linked = await assets(app, admin)
    created = await call(app, "POST", TEMPLATES, admin, json=template("live", project, linked))
    path = f"{TEMPLATES}/{created.json()['meta']['id']}"
    environment = f"/api/v1/asset/environment/{linked['environment']}"
    newer = {"meta": {"name": "env-pytorch"}, "spec": {"image": "pt:2.4"}}
    assert (await call(app, "PUT", environment, admin, json=newer)).status_code == 202
    await project_all(clean_pool)
    got = await call(app, "GET", path, admin)
    assert got.json()["combinedSpec"]["image"] == "pt:2.4"
    assert got.headers["etag"] == '"2"'  # template.linked_asset_updated
    fanned = await clean_pool.fetch(
        "SELECT metadata::text AS m FROM events WHERE type = 'template.linked_asset_updated.v1'"
    )
    assert len(fanned) == 1
    await project_all(clean_pool)  # running again changes nothing
    assert (
        await clean_pool.fetchval(
            "SELECT count(*) FROM events WHERE type = 'template.linked_asset_updated.v1'"
        )
        == 1
    )


async def test_an_impact_preview_shows_what_an_asset_update_would_change(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    project = (await org(app, admin))["project"]
    linked = await assets(app, admin)
    await call(app, "POST", TEMPLATES, admin, json=template("one", project, linked))
    await call(app, "POST", TEMPLATES, admin, json=template("two", project, linked))
    await project_all(clean_pool)
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    proposal = {"meta": {"name": "env-pytorch"}, "spec": {"image": "pt:2.5"}}
    preview = await call(
        app,
        "POST",
        f"/api/v1/asset/environment/{linked['environment']}/impact",
        admin,
        json=proposal,
    )
    assert preview.status_code == 200, preview.text
    impacts = preview.json()["templates"]
    assert [t["name"] for t in impacts] == ["one", "two"]
    image = {"field": "/combinedSpec/image", "before": IMAGE, "after": "pt:2.5"}
    assert image in impacts[0]["changes"]
    # The proposal drops the environment's variables too, and the preview says so.
    assert any(c["field"] == "/combinedSpec/environmentVariables" for c in impacts[0]["changes"])
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before  # nothing written
    compute = await call(
        app,
        "POST",
        f"/api/v1/asset/compute/{linked['compute']}/impact",
        admin,
        json={"meta": {"name": "gpu-pytorch"}, "spec": {"gpuDevicesRequest": 4}},
    )
    assert compute.status_code == 200, compute.text
    change = {"field": "/combinedSpec/compute/gpuDevicesRequest", "before": 8, "after": 4}
    assert change in compute.json()["templates"][0]["changes"]
    # Refused as the update would refuse it: no preview of a save that would fail.
    for kind, body, pointer in (
        ("compute", {"extendedResources": [{"resource": "example.com/fpga"}]},
         "/spec/extendedResources/0/quantity"),
        ("environment", {"image": ""}, "/spec/image"),
    ):  # fmt: skip
        refused = await call(
            app,
            "POST",
            f"/api/v1/asset/{kind}/{linked[kind]}/impact",
            admin,
            json={"meta": {"name": f"{kind}-x"}, "spec": body},
        )
        assert refused.status_code == 400, refused.text
        assert pointer in refused.text
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before
    missing = await call(
        app,
        "POST",
        "/api/v1/asset/environment/0b7c4f7e-2a1d-4c3b-9e8f-6a5d4c3b2a10/impact",
        admin,
        json=proposal,
    )
    assert missing.status_code == 404


async def test_a_patch_built_by_runapy_changes_only_what_it_sets(app: Litestar, admin: str) -> None:
    """runapy's models send every member they know, the unset ones as null: a null is a member
    not given, never a value to store (clearing is what fieldsToClear is for)."""
    from runai.models import DistributedTemplatePatchRequest

    units = await org(app, admin)
    body = template("nulls", units["project"], await assets(app, admin), backoffLimit=4)
    body["meta"]["description"] = "kept"
    made = await call(app, "POST", TEMPLATES, admin, json=body)
    assert made.status_code == 202, made.text
    patch = DistributedTemplatePatchRequest.from_dict({"spec": {"numWorkers": 3}}).to_dict()
    assert patch["spec"]["distributedFramework"] is None  # as runapy sends it
    assert patch["meta"] is None
    path = f"{TEMPLATES}/{made.json()['meta']['id']}"
    patched = await call(app, "PATCH", path, admin, json=patch)
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"]["numWorkers"] == 3
    assert patched.json()["spec"]["distributedFramework"] == "PyTorch"
    assert patched.json()["spec"]["backoffLimit"] == 4
    assert patched.json()["meta"]["description"] == "kept"
    assert patched.json()["assets"]["compute"] is not None


async def test_a_patch_whose_name_or_description_is_not_a_string_is_400_naming_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    units = await org(app, admin)
    made = await call(app, "POST", TEMPLATES, admin, json=template("typed", units["project"], {}))
    assert made.status_code == 202, made.text
    path = f"{TEMPLATES}/{made.json()['meta']['id']}"
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    for member, value in [("name", 1), ("description", ["x"]), ("name", {"a": 1}), ("name", True)]:
        refused = await call(app, "PATCH", path, admin, json={"meta": {member: value}})
        assert refused.status_code == 400, (member, value, refused.text)
        assert [e["pointer"] for e in refused.json()["errors"]] == [f"/meta/{member}"]
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before


async def test_the_read_models_combined_specs_are_the_logs(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """What a GET or a list shows (worked out by the projection) is what the log gives (the
    as-of answer is folded from the events), after the linked assets have moved on."""
    units = await org(app, admin)
    linked = await assets(app, admin)
    runnable = await call(
        app, "POST", TEMPLATES, admin, json=template("a", units["project"], linked)
    )
    bare = template("b", units["project"], {"compute": linked["compute"]})  # no image anywhere
    not_runnable = await call(app, "POST", TEMPLATES, admin, json=bare)
    assert runnable.status_code == not_runnable.status_code == 202
    environment = f"/api/v1/asset/environment/{linked['environment']}"
    for image in ("pt:2", "pt:3"):
        changed = {"meta": {"name": "env-pytorch"}, "spec": {"image": image}}
        assert (await call(app, "PUT", environment, admin, json=changed)).status_code == 202
        await project_all(clean_pool)
    path = f"{TEMPLATES}/{runnable.json()['meta']['id']}"
    got = (await call(app, "GET", path, admin)).json()
    version = int((await call(app, "GET", path, admin)).headers["etag"].strip('"'))
    as_of = f"/api/v1/workload-templates/{runnable.json()['meta']['id']}/as-of"
    logged = (await call(app, "GET", as_of, admin, params={"version": version})).json()
    assert got["combinedSpec"] == logged["combinedSpec"]
    assert got["combinedSpec"]["image"] == "pt:3"
    assert got["runnable"] == logged["runnable"]
    listed = await call(app, "GET", TEMPLATES, admin, params={"filterBy": "runnable==false"})
    assert [t["meta"]["name"] for t in listed.json()["entries"]] == ["b"]
    by_runnable = await call(app, "GET", TEMPLATES, admin, params={"sortBy": "runnable"})
    assert [t["meta"]["name"] for t in by_runnable.json()["entries"]] == ["b", "a"]


async def test_a_list_refuses_paging_it_cannot_serve(app: Litestar, admin: str) -> None:
    await call(app, "GET", TEMPLATES, admin)  # the process has found the epochs: pages ride
    for params in (
        {"limit": "9223372036854775807"},
        {"limit": "0"},
        {"limit": "501"},
        {"offset": "-1"},
        {"limit": "ten"},
        {"sortBy": "colour"},
        {"sortOrder": "up"},
        {"filterBy": "colour==red"},
    ):
        answer = await call(app, "GET", TEMPLATES, admin, params=params)
        assert answer.status_code == 400, (params, answer.text)
        assert answer.json()["code"] == 400
