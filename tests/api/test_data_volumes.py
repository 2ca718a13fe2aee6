"""Data volumes over HTTP in Run:ai's shapes: create, list and count by requestType, get, patch,
share and unshare, name-availability and delete; callers out of sight answered as for no data
volume; and templates that mount one through their assets block, which keep it from being
deleted or unshared."""

from typing import Any
from uuid import UUID, uuid4

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from infra.backends.dry_run import DryRunBackend
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from services import submitter
from tests.api.support import call, project_all, token_for
from tests.api.test_assets import org  # noqa: F401  # the fixture: a cluster, a department, two projects
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

VOLUMES = "/api/v1/datavolumes"
TEMPLATES = "/api/v1/workload-templates/distributed"
SETTINGS = "/v1/k8s/setting"


def volume(name: str, project: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "projectId": project["id"], "originPvcName": "pvc-a", **extra}


async def made(app: Litestar, token: str, body: dict[str, Any]) -> dict[str, Any]:
    assert_matches("DatavolumeCreationFields", body)
    response = await call(app, "POST", VOLUMES, token, json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def mounting(name: str, scope: dict[str, Any], volume_id: str, **override: Any) -> dict[str, Any]:
    link = {"id": volume_id, "kind": "data-volume", "overrides": {"containerPath": "/data"}}
    return {
        "meta": {"name": name, **scope},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        "assets": {"datasources": [{**link, **override}]},
    }


async def test_a_data_volume_round_trips_in_run_ai_shapes(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    units = org
    llm, vision = units["projects"]
    created = await made(app, admin, volume("corpus", llm, description="tokenized corpus"))
    assert created["projectName"] == "llm"
    assert created["clusterId"] == units["cluster"]["uuid"]
    assert created["departmentId"] == units["department"]["id"]
    assert created["status"] == {"phase": "Ready"}
    volume_id = created["id"]
    await project_all(clean_pool)  # no projector follows the log here

    got = await call(app, "GET", f"{VOLUMES}/{volume_id}", admin)
    assert got.status_code == 200, got.text
    assert got.json()["description"] == "tokenized corpus"
    listed = await call(app, "GET", VOLUMES, admin, params={"requestType": "Originated"})
    assert [v["id"] for v in listed.json()["datavolumes"]] == [volume_id]
    usable = {"requestType": "UsableInProject", "usableInProjectId": vision["id"]}
    assert (await call(app, "GET", VOLUMES, admin, params=usable)).json()["datavolumes"] == []

    shared = await call(
        app,
        "PATCH",
        f"{VOLUMES}/{volume_id}/sharedScopes",
        admin,
        json={"add": [{"scopeType": "department", "scopeId": units["department"]["id"]}]},
    )
    assert shared.status_code == 200, shared.text
    assert [(s["scopeType"], s["scopeName"]) for s in shared.json()] == [("department", "research")]
    await project_all(clean_pool)
    listed = await call(app, "GET", VOLUMES, admin, params=usable)
    assert [v["id"] for v in listed.json()["datavolumes"]] == [volume_id]
    assert (await call(app, "GET", f"{VOLUMES}/count", admin, params=usable)).json() == {"count": 1}
    scopes = await call(app, "GET", f"{VOLUMES}/{volume_id}/shared-scopes", admin)
    assert [s["scopeId"] for s in scopes.json()] == [units["department"]["id"]]
    assert got.json().get("sharedScopes") is None  # before sharing, none to show

    patched = await call(app, "PATCH", f"{VOLUMES}/{volume_id}", admin, json={"description": "v2"})
    assert patched.status_code == 200, patched.text
    assert patched.json()["description"] == "v2"

    # Names are unique per cluster.
    cluster = units["cluster"]["uuid"]
    taken = {"dataName": "corpus", "clusterId": cluster}
    assert (
        await call(app, "GET", f"{VOLUMES}/name-availability", admin, params=taken)
    ).status_code == 409
    free = {"dataName": "other", "clusterId": cluster}
    assert (
        await call(app, "GET", f"{VOLUMES}/name-availability", admin, params=free)
    ).status_code == 204
    again = await call(app, "POST", VOLUMES, admin, json=volume("corpus", vision))
    assert again.status_code == 409, again.text

    # Filtered, sorted and paged.
    await made(app, admin, volume("alpha", vision))
    await project_all(clean_pool)
    page = await call(
        app,
        "GET",
        VOLUMES,
        admin,
        params={"requestType": "Originated", "sortBy": "name", "sortOrder": "desc", "limit": 1},
    )
    assert [v["name"] for v in page.json()["datavolumes"]] == ["corpus"]
    assert page.json()["next"] == 1
    named = {"requestType": "Originated", "filterBy": "projectName==vision"}
    assert [
        v["name"]
        for v in (await call(app, "GET", VOLUMES, admin, params=named)).json()["datavolumes"]
    ] == ["alpha"]

    history = await call(app, "GET", f"/api/v1/asset/{volume_id}/history", admin)
    assert [v["type"] for v in history.json()["versions"]] == [
        "datavolume.created.v1",
        "datavolume.shared.v1",
        "datavolume.updated.v1",
    ]

    assert (await call(app, "DELETE", f"{VOLUMES}/{volume_id}", admin)).status_code == 204
    await project_all(clean_pool)
    assert (await call(app, "GET", f"{VOLUMES}/{volume_id}", admin)).status_code == 404


async def test_bad_data_volumes_are_refused_naming_the_field_and_nothing_is_written(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    units = org
    llm = units["projects"][0]
    for body, pointer in [
        (volume("Corpus", llm), "/name"),
        (volume("corpus", {"id": "999"}), "/projectId"),
        (volume("corpus", llm, originPvcName="Bad_PVC"), "/originPvcName"),
        (volume("corpus", llm, shouldDeleteOriginalVolume=True), "/shouldDeleteOriginalVolume"),
        (volume("corpus", llm, description="x" * 128), "/description"),
    ]:
        refused = await call(app, "POST", VOLUMES, admin, json=body)
        assert refused.status_code == 400, (body, refused.text)
        assert refused.json()["errors"][0]["pointer"] == pointer, refused.text
    missing = await call(app, "GET", VOLUMES, admin, params={"requestType": "UsableInProject"})
    assert missing.status_code == 400, missing.text
    assert (
        await clean_pool.fetchval("SELECT count(*) FROM events WHERE stream_type = 'datavolume'")
        == 0
    )
    # Sharing beyond its cluster, or with a scope that does not exist.
    volume_id = (await made(app, admin, volume("corpus", llm)))["id"]
    other = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "west"})).json()
    for scope, pointer in [
        ({"scopeType": "cluster", "scopeId": other["uuid"]}, "/add/0/scopeId"),
        ({"scopeType": "project", "scopeId": "999"}, "/add/0/scopeId"),
    ]:
        refused = await call(
            app, "PATCH", f"{VOLUMES}/{volume_id}/sharedScopes", admin, json={"add": [scope]}
        )
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"] == pointer


async def test_a_data_volume_is_managed_by_its_projects_editors_and_hidden_from_others(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    units = org
    llm, vision = units["projects"]
    volume_id = (await made(app, admin, volume("corpus", llm)))["id"]
    await project_all(clean_pool)
    outsider = await token_for(
        clean_pool, "outsider", (Grant(role="editor", scope_kind="project", scope_id=vision["id"]),)
    )
    viewer = await token_for(
        clean_pool, "viewer", (Grant(role="viewer", scope_kind="project", scope_id=llm["id"]),)
    )
    assert (await call(app, "GET", f"{VOLUMES}/{volume_id}", outsider)).status_code == 404
    listed = await call(app, "GET", VOLUMES, outsider, params={"requestType": "Originated"})
    assert listed.json()["datavolumes"] == []
    assert (await call(app, "GET", f"{VOLUMES}/{volume_id}", viewer)).status_code == 200
    body = {"description": "mine"}
    assert (
        await call(app, "PATCH", f"{VOLUMES}/{volume_id}", outsider, json=body)
    ).status_code == 404
    assert (
        await call(app, "PATCH", f"{VOLUMES}/{volume_id}", viewer, json=body)
    ).status_code == 403
    assert (await call(app, "DELETE", f"{VOLUMES}/{volume_id}", viewer)).status_code == 403
    refused = await call(app, "POST", VOLUMES, viewer, json=volume("mine", llm))
    assert refused.status_code == 403, refused.text


async def test_a_data_volume_is_shared_only_where_its_sharer_manages_data_volumes(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    """Run:ai's "share in the scope": a project's editor sees the cluster above it, but shares
    the project's data volume with neither the cluster nor its department; an editor of the
    department may, and only they (or above) may take that share back."""
    units = org
    llm, _ = units["projects"]
    volume_id = (await made(app, admin, volume("corpus", llm)))["id"]
    editor = await token_for(
        clean_pool, "llm-editor", (Grant(role="editor", scope_kind="project", scope_id=llm["id"]),)
    )
    lead = await token_for(
        clean_pool,
        "research-lead",
        (Grant(role="editor", scope_kind="department", scope_id=units["department"]["id"]),),
    )
    shares = f"{VOLUMES}/{volume_id}/sharedScopes"
    wide = [
        {"scopeType": "cluster", "scopeId": units["cluster"]["uuid"]},
        {"scopeType": "department", "scopeId": units["department"]["id"]},
    ]
    for scope in wide:
        refused = await call(app, "PATCH", shares, editor, json={"add": [scope]})
        assert refused.status_code == 403, refused.text
    department = wide[1]
    assert (await call(app, "PATCH", shares, lead, json={"add": [department]})).status_code == 200
    taken_back = await call(app, "PATCH", shares, editor, json={"remove": [department]})
    assert taken_back.status_code == 403, taken_back.text
    written = await clean_pool.fetch(
        "SELECT type FROM events WHERE stream_id = $1 ORDER BY version", UUID(volume_id)
    )
    assert [row["type"] for row in written] == ["datavolume.created.v1", "datavolume.shared.v1"]


async def test_a_template_mounts_a_data_volume_usable_in_its_scope_which_then_stays(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    units = org
    llm, vision = units["projects"]
    volume_id = (await made(app, admin, volume("corpus", llm)))["id"]
    in_llm = {"scopeType": "project", "scopeId": llm["id"]}
    in_vision = {"scopeType": "project", "scopeId": vision["id"]}
    for body, pointer in [
        (mounting("other", in_vision, volume_id), "/assets/datasources/0/id"),
        (mounting("ghost", in_llm, str(uuid4())), "/assets/datasources/0/id"),
        (
            mounting("nowhere", in_llm, volume_id, overrides=None),
            ("/assets/datasources/0/overrides/containerPath"),
        ),
    ]:
        refused = await call(app, "POST", TEMPLATES, admin, json=body)
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"] == pointer
    accepted = await call(app, "POST", TEMPLATES, admin, json=mounting("pt", in_llm, volume_id))
    assert accepted.status_code == 202, accepted.text
    combined = accepted.json()["combinedSpec"]["storage"]["dataVolume"]
    assert combined == [{"id": volume_id, "mountPath": "/data"}]

    # Shared with the department, a template of its other project may mount it too.
    share = {"add": [{"scopeType": "department", "scopeId": units["department"]["id"]}]}
    shared = await call(app, "PATCH", f"{VOLUMES}/{volume_id}/sharedScopes", admin, json=share)
    assert shared.status_code == 200, shared.text
    elsewhere = await call(app, "POST", TEMPLATES, admin, json=mounting("cv", in_vision, volume_id))
    assert elsewhere.status_code == 202, elsewhere.text

    # In use: neither deleted nor unshared, naming what holds it.
    refused = await call(app, "DELETE", f"{VOLUMES}/{volume_id}", admin)
    assert refused.status_code == 409, refused.text
    assert "template pt" in refused.json()["detail"]
    unshare = {"remove": share["add"]}
    refused = await call(app, "PATCH", f"{VOLUMES}/{volume_id}/sharedScopes", admin, json=unshare)
    assert refused.status_code == 409, refused.text
    assert "template cv" in refused.json()["detail"]
    for template in (accepted, elsewhere):
        template_id = template.json()["meta"]["id"]
        assert (await call(app, "DELETE", f"{TEMPLATES}/{template_id}", admin)).status_code == 204
    assert (await call(app, "DELETE", f"{VOLUMES}/{volume_id}", admin)).status_code == 204
    late = await call(app, "POST", TEMPLATES, admin, json=mounting("late", in_llm, volume_id))
    assert late.status_code == 400, late.text


async def test_the_data_volumes_setting_off_refuses_them(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    units = org
    llm = units["projects"][0]
    volume_id = (await made(app, admin, volume("corpus", llm)))["id"]
    off = {"key": "workloads.dataVolumes", "value": False}
    assert (await call(app, "PUT", SETTINGS, admin, json=off)).status_code == 200
    in_llm = {"scopeType": "project", "scopeId": llm["id"]}
    refused = await call(app, "POST", TEMPLATES, admin, json=mounting("pt", in_llm, volume_id))
    assert refused.status_code == 400, refused.text
    assert "workloads.dataVolumes" in refused.text
    refused = await call(app, "POST", VOLUMES, admin, json=volume("more", llm))
    assert refused.status_code == 400, refused.text


async def test_a_workload_mounts_the_data_volume_of_its_project_or_its_copy_where_shared(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    units = org
    llm, vision = units["projects"]
    volume_id = (await made(app, admin, volume("corpus", llm)))["id"]
    share = {"add": [{"scopeType": "department", "scopeId": units["department"]["id"]}]}
    shared = await call(app, "PATCH", f"{VOLUMES}/{volume_id}/sharedScopes", admin, json=share)
    assert shared.status_code == 200, shared.text
    store, backend = PostgresStreams(clean_pool, DOMAIN_CODEC), DryRunBackend()
    outcomes = {}
    for project, scope in ((llm, "project"), (vision, "project")):
        at = {"scopeType": scope, "scopeId": project["id"]}
        template = await call(
            app, "POST", TEMPLATES, admin, json=mounting(f"t-{project['name']}", at, volume_id)
        )
        assert template.status_code == 202, template.text
        submitted = await call(
            app, "POST", "/api/v1/workloads/distributed", admin,
            json={
                "name": f"w-{project['name']}", "projectId": project["id"],
                "clusterId": units["cluster"]["uuid"],
                "templateId": template.json()["meta"]["id"],
                "spec": {"image": "img:1", "command": "python train.py"},
            },
        )  # fmt: skip
        assert submitted.status_code == 202, submitted.text
        workload_id = UUID(submitted.json()["workloadId"])
        await submitter.reconcile(workload_id, store=store, backend=backend)
        outcomes[project["name"]] = workload_id
    await project_all(clean_pool)
    own = await call(app, "GET", f"/api/v1/workloads/{outcomes['llm']}/manifests", admin)
    runtime, _ = own.json()["manifests"]
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    volumes = pod["template"]["spec"]["volumes"]
    assert {"name": "dv-0", "persistentVolumeClaim": {"claimName": "pvc-a"}} in volumes
    # Shared with the department, its PVC in llm's namespace: vision mounts its copy, read-only.
    other = await call(app, "GET", f"/api/v1/workloads/{outcomes['vision']}/manifests", admin)
    runtime, _ = other.json()["manifests"]
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    copy = {"claimName": f"dv-{volume_id}", "readOnly": True}
    assert {"name": "dv-0", "persistentVolumeClaim": copy} in pod["template"]["spec"]["volumes"]
    # Its workloads hold it as its templates do: not deleted while one may mount its PVC.
    listed = await call(app, "GET", TEMPLATES, admin)
    for template in listed.json()["entries"]:
        path = f"{TEMPLATES}/{template['meta']['id']}"
        assert (await call(app, "DELETE", path, admin)).status_code == 204
    refused = await call(app, "DELETE", f"{VOLUMES}/{volume_id}", admin)
    assert refused.status_code == 409, refused.text
    assert "workload w-llm" in refused.json()["detail"]
    for workload_id in outcomes.values():
        path = f"/api/v1/workloads/distributed/{workload_id}"
        assert (await call(app, "DELETE", path, admin)).status_code == 202
    assert (await call(app, "DELETE", f"{VOLUMES}/{volume_id}", admin)).status_code == 204


async def test_a_data_volume_sent_again_under_its_key_answers_the_first_and_writes_nothing(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    llm, _ = org["projects"]
    key = {"idempotency-key": "volume-1"}
    first = await call(app, "POST", VOLUMES, admin, key, json=volume("corpus", llm))
    assert first.status_code == 201, first.text
    written = await clean_pool.fetchval("SELECT count(*) FROM events")
    again = await call(app, "POST", VOLUMES, admin, key, json=volume("corpus", llm))
    assert again.status_code == 201, again.text
    assert again.json()["id"] == first.json()["id"]
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == written
    other = volume("corpus", llm, description="another request")
    reused = await call(app, "POST", VOLUMES, admin, key, json=other)
    assert reused.status_code == 422, reused.text
    assert (await call(app, "POST", VOLUMES, admin, json=volume("corpus", llm))).status_code == 409
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == written
