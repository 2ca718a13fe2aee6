"""Data sources of every kind over HTTP: Run:ai's shapes, per-kind rules, scopes and the
credentials they read."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, project_all, token_for
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

BASE = "/api/v1/asset/datasource"
TENANT = {"scope": "tenant"}

# path segment -> (request schema, response schema, a valid spec, an updated spec)
KINDS: dict[str, tuple[str, str, dict[str, Any], dict[str, Any]]] = {
    "nfs": (
        "NFSCreationRequest",
        "NFSAsset",
        {"server": "nfs.example.com", "path": "/exports/data", "mountPath": "/data"},
        {"server": "nfs2.example.com", "path": "/exports/data", "mountPath": "/data"},
    ),
    "pvc": (
        "PVCCreationRequest",
        "PVCAsset",
        {"path": "/ckpt", "claimInfo": {"size": "100Gi", "storageClass": "fast-ssd"}},
        {"path": "/checkpoints", "claimInfo": {"size": "200Gi"}},
    ),
    "s3": (
        "S3CreationRequest",
        "S3Asset",
        {"bucket": "datasets", "path": "/imagenet", "url": "https://s3.example.com"},
        {"bucket": "datasets", "path": "/imagenet-21k"},
    ),
    "git": (
        "GitCreationRequest",
        "GitAsset",
        {"repository": "https://github.com/example/train.git", "branch": "main", "path": "/code"},
        {"repository": "https://github.com/example/train.git", "revision": "v2", "path": "/code"},
    ),
    "host-path": (
        "HostPathCreationRequest",
        "HostPathAsset",
        {"path": "/mnt/local-ssd", "mountPath": "/scratch", "mountPropagation": "None"},
        {"path": "/mnt/local-ssd", "mountPath": "/scratch", "readOnly": False},
    ),
    "config-map": (
        "ConfigMapCreationRequest",
        "ConfigMapAsset",
        {"configMap": "train-config", "mountPath": "/etc/train", "defaultMode": "0644"},
        {"configMap": "train-config", "mountPath": "/etc/train", "subPath": "hparams.yaml"},
    ),
}

INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("nfs", {"path": "/x", "mountPath": "/data"}, "/spec/server"),
    ("nfs", {"server": "s", "mountPath": "/data"}, "/spec/path"),
    ("nfs", {"server": "s", "path": "/x", "mountPath": ""}, "/spec/mountPath"),
    ("pvc", {"path": "/ckpt"}, "/spec/claimInfo/size"),
    ("pvc", {"path": "/ckpt", "existingPvc": True}, "/spec/claimName"),
    ("pvc", {"path": "/c", "claimInfo": {"size": "big"}}, "/spec/claimInfo/size"),
    (
        "pvc",
        {
            "path": "/c",
            "claimInfo": {
                "size": "1Gi",
                "accessModes": {"readWriteOnce": False, "readOnlyMany": False},
            },
        },
        "/spec/claimInfo/accessModes",
    ),
    ("s3", {"path": "/x"}, "/spec/bucket"),
    ("s3", {"bucket": "b"}, "/spec/path"),
    (
        "s3",
        {"bucket": "b", "path": "/p", "accessKeyAssetId": "not-a-uuid"},
        "/spec/accessKeyAssetId",
    ),
    (
        "s3",
        {"bucket": "b", "path": "/p", "accessKeyAssetId": "0b7c4f7e-2a1d-4c3b-9e8f-6a5d4c3b2a10"},
        "/spec/accessKeyAssetId",
    ),
    ("git", {"path": "/code"}, "/spec/repository"),
    ("git", {"repository": "r"}, "/spec/path"),
    ("git", {"repository": "r", "path": "/c", "branch": ""}, "/spec/branch"),
    ("host-path", {"mountPath": "/m"}, "/spec/path"),
    ("host-path", {"path": "/p"}, "/spec/mountPath"),
    (
        "host-path",
        {"path": "/p", "mountPath": "/m", "mountPropagation": "Bidirectional"},
        "/spec/mountPropagation",
    ),
    ("config-map", {"mountPath": "/m"}, "/spec/configMap"),
    ("config-map", {"configMap": "Bad_Name", "mountPath": "/m"}, "/spec/configMap"),
    (
        "config-map",
        {"configMap": "cm", "mountPath": "/m", "defaultMode": "644"},
        "/spec/defaultMode",
    ),
    ("secrets", {"mountPath": "/m"}, "/spec/credentialAssetId"),
    (
        "secrets",
        {"credentialAssetId": "0b7c4f7e-2a1d-4c3b-9e8f-6a5d4c3b2a10", "mountPath": "/m"},
        "/spec/credentialAssetId",
    ),
    (
        "secrets",
        {"credentialAssetId": "0b7c4f7e-2a1d-4c3b-9e8f-6a5d4c3b2a10", "defaultMode": "0999"},
        "/spec/defaultMode",
    ),
]


@pytest.mark.parametrize("segment", list(KINDS))
async def test_each_kind_round_trips_in_run_ai_shapes(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, segment: str
) -> None:
    request_schema, asset_schema, spec, changed = KINDS[segment]
    body = {"meta": {"name": f"{segment}-data", **TENANT}, "spec": spec}
    assert_matches(request_schema, body)
    created = await call(app, "POST", f"{BASE}/{segment}", admin, json=body)
    assert created.status_code == 202, created.text
    assert_matches(asset_schema, created.json())
    assert "kind" not in created.json()["spec"]
    path = f"{BASE}/{segment}/{created.json()['meta']['id']}"
    await project_all(clean_pool)
    got = await call(app, "GET", path, admin)
    assert got.status_code == 200, got.text
    assert_matches(asset_schema, got.json())
    for key, value in spec.items():
        assert got.json()["spec"][key] == value
    updated = await call(
        app, "PUT", path, admin, json={"meta": {"name": f"{segment}-data"}, "spec": changed}
    )
    assert updated.status_code == 202, updated.text
    await project_all(clean_pool)
    listed = await call(app, "GET", f"{BASE}/{segment}", admin)
    assert [e["spec"] for e in listed.json()["entries"]] == [updated.json()["spec"]]
    assert (await call(app, "DELETE", path, admin)).status_code == 202
    await project_all(clean_pool)
    assert (await call(app, "GET", path, admin)).status_code == 404


@pytest.mark.parametrize(("segment", "spec", "pointer"), INVALID)
async def test_invalid_data_sources_name_the_field_and_write_nothing(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    segment: str,
    spec: dict[str, Any],
    pointer: str,
) -> None:
    body = {"meta": {"name": "d", **TENANT}, "spec": spec}
    response = await call(app, "POST", f"{BASE}/{segment}", admin, json=body)
    assert response.status_code == 400, response.text
    assert pointer in [e["pointer"] for e in response.json()["errors"]], response.json()
    count = "SELECT count(*) FROM events WHERE stream_type = 'datasource'"
    assert await clean_pool.fetchval(count) == 0


async def test_credentials_a_data_source_reads_must_fit_and_stay_while_used(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    key = await call(
        app,
        "POST",
        "/api/v1/asset/credentials/access-key",
        admin,
        json={
            "meta": {"name": "s3-key", **TENANT},
            "spec": {"accessKeyId": "a", "secretAccessKey": "b"},
        },
    )
    password = await call(
        app,
        "POST",
        "/api/v1/asset/credentials/password",
        admin,
        json={"meta": {"name": "git-login", **TENANT}, "spec": {"user": "u", "password": "p"}},
    )
    key_id, password_id = key.json()["meta"]["id"], password.json()["meta"]["id"]
    wrong_kind = {"bucket": "b", "path": "/p", "accessKeyAssetId": password_id}
    refused = await call(
        app, "POST", f"{BASE}/s3", admin, json={"meta": {"name": "s", **TENANT}, "spec": wrong_kind}
    )
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["pointer"] == "/spec/accessKeyAssetId"
    s3 = {"bucket": "b", "path": "/p", "accessKeyAssetId": key_id}
    made = await call(
        app, "POST", f"{BASE}/s3", admin, json={"meta": {"name": "s", **TENANT}, "spec": s3}
    )
    assert made.status_code == 202, made.text
    secret_volume = {
        "credentialAssetId": password_id,
        "mountPath": "/secrets",
        "defaultMode": "0400",
    }
    volume = await call(
        app,
        "POST",
        f"{BASE}/secrets",
        admin,
        json={"meta": {"name": "v", **TENANT}, "spec": secret_volume},
    )
    assert volume.status_code == 202, volume.text
    assert_matches("SecretAsset", volume.json())
    await project_all(clean_pool)
    in_use = await call(app, "DELETE", f"/api/v1/asset/credentials/access-key/{key_id}", admin)
    assert in_use.status_code == 412
    assert "s3 s" in in_use.json()["detail"]
    in_use = await call(app, "DELETE", f"/api/v1/asset/credentials/password/{password_id}", admin)
    assert in_use.status_code == 412
    combined = await call(app, "GET", BASE, admin)
    assert_matches("DatasourceListResponse", combined.json())
    assert sorted(next(iter(e["spec"])) for e in combined.json()["entries"]) == ["s3", "secret"]
    only = await call(app, "GET", BASE, admin, params={"assetIds": made.json()["meta"]["id"]})
    assert [e["meta"]["name"] for e in only.json()["entries"]] == ["s"]
    bad = await call(app, "GET", BASE, admin, params={"assetIds": "x,y"})
    assert bad.status_code == 400


async def test_a_project_editor_manages_only_its_project_data_sources(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    projects = []
    for name in ("llm", "vision"):
        body = {"name": name, "clusterId": cluster["uuid"]}
        projects.append(
            (await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)).json()
        )
    editor = await token_for(
        clean_pool,
        "llm-editor",
        (Grant(role="editor", scope_kind="project", scope_id=projects[0]["id"]),),
    )
    spec = KINDS["nfs"][2]

    def scoped(project: dict[str, Any]) -> dict[str, Any]:
        return {"scope": "project", "projectId": int(project["id"])}

    mine = await call(
        app,
        "POST",
        f"{BASE}/nfs",
        editor,
        json={"meta": {"name": "n", **scoped(projects[0])}, "spec": spec},
    )
    assert mine.status_code == 202, mine.text
    theirs = await call(
        app,
        "POST",
        f"{BASE}/nfs",
        editor,
        json={"meta": {"name": "n", **scoped(projects[1])}, "spec": spec},
    )
    # a project out of the caller's sight answers as one that does not exist
    assert theirs.status_code == 400, theirs.text
    assert theirs.json()["type"].endswith("/unknown-scope")
    other = await call(
        app,
        "POST",
        f"{BASE}/nfs",
        admin,
        json={"meta": {"name": "n", **scoped(projects[1])}, "spec": spec},
    )
    await project_all(clean_pool)
    assert (
        await call(app, "GET", f"{BASE}/nfs/{other.json()['meta']['id']}", editor)
    ).status_code == 404
    assert [
        e["meta"]["name"] for e in (await call(app, "GET", f"{BASE}/nfs", editor)).json()["entries"]
    ] == ["n"]
    denied = await call(app, "DELETE", f"{BASE}/nfs/{other.json()['meta']['id']}", editor)
    assert denied.status_code == 404  # out of sight: as if missing
