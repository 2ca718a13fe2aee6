"""The in-use invariants on the edges beyond tests/api/test_in_use.py and the per-resource
tests: a separate master's links, every other data-source kind a template loads, the
credentials git and secret-volume data sources read, departments and clusters holding what lives
in them, a project holding its credentials, registries, data sources, data volumes and a
suspended workload, and the last enabled tenant admin under the applications' older routes.
Every refusal names what holds the thing and writes nothing. No projector runs here."""

import asyncio
from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar

from tests.api.client import client_for
from tests.api.support import call
from tests.api.test_assets import org  # noqa: F401  # the fixture: a cluster, a department, two projects
from tests.api.test_data_volumes import VOLUMES, volume
from tests.api.test_idempotency import registry_body
from tests.api.test_in_use import ENVIRONMENTS, SUPPORTS, TEMPLATES, created, environment, template
from tests.api.test_last_admin import ACCOUNTS, account_id, second_admin
from tests.api.test_workloads import WORKLOADS, setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]

COMPUTE = "/api/v1/asset/compute"
DATA_SOURCES = "/api/v1/asset/datasource"
CREDENTIALS = "/api/v1/asset/credentials"
REGISTRIES = "/api/v1/asset/registries"
CLUSTERS = "/api/v1/clusters"
DEPARTMENTS = "/api/v1/org-unit/departments"
PROJECTS = "/api/v1/org-unit/projects"
DELETIONS = "SELECT count(*) FROM events WHERE type LIKE '%.deleted.v1'"


async def events(pool: asyncpg.Pool) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM events"))


async def refused(
    app: Litestar, admin: str, pool: asyncpg.Pool, path: str, holders: list[str], status: int = 409
) -> None:
    """The deletion at `path` is refused with `status`, naming every holder, writing nothing."""
    before = await events(pool)
    answer = await call(app, "DELETE", path, admin)
    assert answer.status_code == status, answer.text
    for holder in holders:
        assert holder in answer.json()["detail"], (holder, answer.json()["detail"])
    assert await events(pool) == before


async def deleted(app: Litestar, admin: str, path: str) -> None:
    answer = await call(app, "DELETE", path, admin)
    assert answer.status_code in (202, 204), answer.text


async def emptied_in_turn(
    app: Litestar, admin: str, pool: asyncpg.Pool, path: str, holds: list[tuple[str, str]]
) -> None:
    """The deletion at `path` is refused naming every holder left, while the holders (name,
    path) are deleted one by one; once none is left it is made, with one event."""
    for index, (_, holder) in enumerate(holds):
        await refused(app, admin, pool, path, [what for what, _ in holds[index:]])
        await deleted(app, admin, holder)
    before = await events(pool)
    assert (await call(app, "DELETE", path, admin)).status_code in (202, 204)
    assert await events(pool) == before + 1


def raced(
    answers: list[httpx.Response], at: int, *, deleted: int, refused: int
) -> list[httpx.Response]:
    """Creations (202, or 400 once what they need is gone) raced against the deletion at
    `at`: the deletion made (`deleted`) and no creation, or refused (`refused`) and some made.
    The creations made."""
    gone = answers[at]
    made = [a for i, a in enumerate(answers) if i != at and a.status_code == 202]
    for answer in (a for i, a in enumerate(answers) if i != at and a.status_code != 202):
        assert answer.status_code == 400, answer.text
    if gone.status_code == deleted:
        assert made == [], "a creation was made on what had been deleted before it"
    else:
        assert gone.status_code == refused, gone.text
        assert made, "the deletion was refused though nothing held what it deletes"
    return made


def asset(name: str, scope: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {"meta": {"name": name, **scope}, "spec": spec}


TENANT = {"scope": "tenant"}
NFS_SPEC = {"server": "nfs.example.com", "path": "/exports", "mountPath": "/data"}


async def test_the_assets_a_separate_master_links_cannot_be_deleted(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    env = await environment(app, admin, "pt-master")
    gpu = await created(app, admin, COMPUTE, asset("gpu-master", TENANT, {"gpuDevicesRequest": 1}))
    data = await created(app, admin, f"{DATA_SOURCES}/nfs", asset("corpus", TENANT, NFS_SPEC))
    ckpt = await created(app, admin, f"{DATA_SOURCES}/pvc", asset("ckpt", TENANT, {
        "path": "/ckpt", "claimInfo": {"size": "10Gi"},
    }))  # fmt: skip
    body = template("llm")
    body["masterSpecSameAsWorker"] = False
    master = {"environment": env, "compute": gpu, "datasources": [{"id": data, "kind": "nfs"}]}
    body["master"] = {"spec": {}, "assets": master}
    made = await created(app, admin, TEMPLATES, body)
    paths = [f"{ENVIRONMENTS}/{env}", f"{COMPUTE}/{gpu}", f"{DATA_SOURCES}/nfs/{data}"]
    for path in paths:
        await refused(app, admin, clean_pool, path, ["template llm"])
    # A data source the master loads from a PATCH is held at once too.
    linked = {**master, "datasources": [*master["datasources"], {"id": ckpt, "kind": "pvc"}]}
    patched = await call(app, "PATCH", f"{TEMPLATES}/{made}", admin, json={
        "master": {"assets": linked},
    })  # fmt: skip
    assert patched.status_code == 200, patched.text
    await refused(app, admin, clean_pool, f"{DATA_SOURCES}/pvc/{ckpt}", ["template llm"])
    assert await clean_pool.fetchval(DELETIONS) == 0
    await deleted(app, admin, f"{TEMPLATES}/{made}")
    for path in [*paths, f"{DATA_SOURCES}/pvc/{ckpt}"]:
        await deleted(app, admin, path)


@pytest.mark.parametrize(
    ("segment", "kind", "spec"),
    [
        ("pvc", "pvc", {"path": "/ckpt", "claimInfo": {"size": "10Gi"}}),
        ("s3", "s3", {"bucket": "datasets", "path": "/imagenet"}),
        ("git", "git", {"repository": "https://g.example/t.git", "path": "/code"}),
        ("host-path", "hostPath", {"path": "/mnt/ssd", "mountPath": "/scratch"}),
        ("config-map", "config-map", {"configMap": "train", "mountPath": "/etc/train"}),
        ("secrets", "secret-volume", {"mountPath": "/secrets"}),
    ],
    ids=["pvc", "s3", "git", "host-path", "config-map", "secrets"],
)
async def test_a_data_source_of_every_other_kind_a_template_loads_cannot_be_deleted(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    segment: str,
    kind: str,
    spec: dict[str, Any],
) -> None:
    if segment == "secrets":
        body = asset("vault", TENANT, {"user": "u", "password": "p"})
        spec = {
            **spec,
            "credentialAssetId": await created(app, admin, f"{CREDENTIALS}/password", body),
        }
    path = f"{DATA_SOURCES}/{segment}"
    data = await created(app, admin, path, asset("loaded", TENANT, spec))
    made = await created(app, admin, TEMPLATES, template("llm", datasources=[
        {"id": data, "kind": kind},
    ]))  # fmt: skip
    await refused(app, admin, clean_pool, f"{path}/{data}", ["template llm"])
    await deleted(app, admin, f"{TEMPLATES}/{made}")
    await deleted(app, admin, f"{path}/{data}")


@pytest.mark.parametrize(
    ("credential", "segment", "spec", "holder"),
    [
        (
            ("generic-secret", {"keyValuePairs": [{"key": "token", "value": "v"}]}),
            "git",
            lambda c: {"repository": "https://g.example/t.git", "path": "/code", "credentialId": c},
            "git code",
        ),
        (
            ("password", {"user": "u", "password": "p"}),
            "git",
            lambda c: {
                "repository": "https://g.example/t.git",
                "path": "/code",
                "passwordAssetId": c,
            },
            "git code",
        ),
        (
            ("generic-secret", {"keyValuePairs": [{"key": "token", "value": "v"}]}),
            "secrets",
            lambda c: {"mountPath": "/secrets", "credentialAssetId": c},
            "secret-volume code",
        ),
    ],
    ids=["git-credential-id", "git-password-asset-id", "secret-volume"],
)
async def test_a_credential_a_git_or_secret_data_source_reads_cannot_be_deleted(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    credential: tuple[str, dict[str, Any]],
    segment: str,
    spec: Any,
    holder: str,
) -> None:
    """Run:ai's document answers a credential in use with 412 (as test_credentials.py has it)."""
    kind, values = credential
    credential_path = f"{CREDENTIALS}/{kind}"
    read = await created(app, admin, credential_path, asset("login", TENANT, values))
    path = f"{DATA_SOURCES}/{segment}"
    data = await created(app, admin, path, asset("code", TENANT, spec(read)))
    sealed = await clean_pool.fetchval("SELECT count(*) FROM credential_secrets")
    await refused(app, admin, clean_pool, f"{credential_path}/{read}", [holder], status=412)
    assert await clean_pool.fetchval("SELECT count(*) FROM credential_secrets") == sealed
    await deleted(app, admin, f"{path}/{data}")
    await deleted(app, admin, f"{credential_path}/{read}")


async def test_a_department_holding_templates_assets_or_credentials_cannot_be_deleted(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
) -> None:
    cluster = (await call(app, "POST", CLUSTERS, admin, json={"name": "east"})).json()["uuid"]
    unit = await call(
        app, "POST", DEPARTMENTS, admin, json={"name": "research", "clusterId": cluster}
    )
    assert unit.status_code == 201, unit.text
    department = unit.json()["id"]
    scope = {"scope": "department", "departmentId": department}
    body = template("dept-ddp")
    body["meta"] = {"name": "dept-ddp", "scopeType": "department", "scopeId": department}
    registry = registry_body("dept-registry")
    registry["meta"] = {"name": "dept-registry", **scope}
    made = await call(app, "POST", REGISTRIES, admin, json=registry)
    assert made.status_code == 201, made.text
    env_body = asset("dept-env", {**scope, "workloadSupportedTypes": SUPPORTS}, {"image": "pt:1"})
    holds = [
        ("template dept-ddp", f"{TEMPLATES}/{await created(app, admin, TEMPLATES, body)}"),
        ("environment dept-env",
         f"{ENVIRONMENTS}/{await created(app, admin, ENVIRONMENTS, env_body)}"),
        ("nfs dept-nfs", f"{DATA_SOURCES}/nfs/"
         + await created(app, admin, f"{DATA_SOURCES}/nfs", asset("dept-nfs", scope, NFS_SPEC))),
        ("password dept-login", f"{CREDENTIALS}/password/" + await created(
            app, admin, f"{CREDENTIALS}/password",
            asset("dept-login", scope, {"user": "u", "password": "p"}))),
        ("registry dept-registry", f"{REGISTRIES}/{made.json()['meta']['id']}"),
    ]  # fmt: skip
    path = f"{DEPARTMENTS}/{department}"
    await emptied_in_turn(app, admin, clean_pool, path, holds)


async def test_a_cluster_holding_units_templates_or_assets_cannot_be_deleted(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", CLUSTERS, admin, json={"name": "east"})).json()["uuid"]
    scope = {"scope": "cluster", "clusterId": cluster}
    body = template("cl-ddp")
    body["meta"] = {"name": "cl-ddp", "scopeType": "cluster", "scopeId": cluster}
    department = await call(
        app, "POST", DEPARTMENTS, admin, json={"name": "research", "clusterId": cluster}
    )
    project = await call(app, "POST", PROJECTS, admin, json={"name": "solo", "clusterId": cluster})
    assert (department.status_code, project.status_code) == (201, 201), project.text
    gpu = asset("cl-gpu", scope, {"gpuDevicesRequest": 1})
    holds = [
        ("department research", f"{DEPARTMENTS}/{department.json()['id']}"),
        ("project solo", f"{PROJECTS}/{project.json()['id']}"),
        ("template cl-ddp", f"{TEMPLATES}/{await created(app, admin, TEMPLATES, body)}"),
        ("compute cl-gpu", f"{COMPUTE}/{await created(app, admin, COMPUTE, gpu)}"),
    ]  # fmt: skip
    path = f"{CLUSTERS}/{cluster}"
    await emptied_in_turn(app, admin, clean_pool, path, holds)


async def test_a_project_holding_credentials_registries_or_data_volumes_cannot_be_deleted(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    project = org["projects"][0]["id"]
    scope = {"scope": "project", "projectId": project}
    registry = registry_body("p-registry")
    registry["meta"] = {"name": "p-registry", **scope}
    made = await call(app, "POST", REGISTRIES, admin, json=registry)
    assert made.status_code == 201, made.text
    dv = await call(app, "POST", VOLUMES, admin, json=volume("corpus", org["projects"][0]))
    assert dv.status_code == 201, dv.text
    holds = [
        ("password p-login", f"{CREDENTIALS}/password/" + await created(
            app, admin, f"{CREDENTIALS}/password",
            asset("p-login", scope, {"user": "u", "password": "p"}))),
        ("registry p-registry", f"{REGISTRIES}/{made.json()['meta']['id']}"),
        ("nfs p-nfs", f"{DATA_SOURCES}/nfs/"
         + await created(app, admin, f"{DATA_SOURCES}/nfs", asset("p-nfs", scope, NFS_SPEC))),
        ("datavolume corpus", f"{VOLUMES}/{dv.json()['id']}"),
    ]  # fmt: skip
    path = f"{PROJECTS}/{project}"
    await emptied_in_turn(app, admin, clean_pool, path, holds)


async def test_a_suspended_workload_still_holds_its_project(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    submitted = await call(app, "POST", WORKLOADS, admin, json=submission(found))
    assert submitted.status_code == 202, submitted.text
    # The template goes: the workload alone holds the project.
    await deleted(app, admin, f"{TEMPLATES}/{found['template']['meta']['id']}")
    workload = f"{WORKLOADS}/{submitted.json()['workloadId']}"
    suspended = await call(app, "POST", f"{workload}/suspend", admin)
    assert suspended.status_code == 202, suspended.text
    path = f"{PROJECTS}/{found['project']['id']}"
    await refused(app, admin, clean_pool, path, ["workload ddp-run"])
    resumed = await call(app, "POST", f"{workload}/resume", admin)
    assert resumed.status_code == 202, resumed.text
    await refused(app, admin, clean_pool, path, ["workload ddp-run"])
    await deleted(app, admin, workload)
    assert (await call(app, "DELETE", path, admin)).status_code == 204


async def test_the_last_admin_cannot_be_deleted_or_disabled_under_the_older_apps_routes(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    root = account_id(admin)
    before = await events(clean_pool)
    for method, body in (("DELETE", None), ("PATCH", {"enabled": False})):
        answer = await call(app, method, f"/api/v1/apps/{root}", admin, json=body)
        assert answer.status_code == 409, answer.text
        assert answer.json()["type"].endswith("/last-tenant-admin")
    assert await events(clean_pool) == before


async def test_a_disabled_admin_does_not_count_as_the_tenants_admin(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    root = account_id(admin)
    second, _, _ = await second_admin(app, admin, "ops")
    disabled = await call(app, "PATCH", f"{ACCOUNTS}/{second}", admin, json={"enabled": False})
    assert disabled.status_code == 200, disabled.text
    before = await events(clean_pool)
    for method, body in (("DELETE", None), ("PATCH", {"enabled": False})):
        answer = await call(app, method, f"{ACCOUNTS}/{root}", admin, json=body)
        assert answer.status_code == 409, answer.text
        assert answer.json()["type"].endswith("/last-tenant-admin")
    assert await events(clean_pool) == before
    enabled = await call(app, "PATCH", f"{ACCOUNTS}/{second}", admin, json={"enabled": True})
    assert enabled.status_code == 200, enabled.text
    assert (await call(app, "DELETE", f"{ACCOUNTS}/{root}", admin)).status_code < 300


async def test_a_credential_deletion_racing_environments_that_read_it_never_leaves_one_on_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    headers = {"authorization": f"Bearer {admin}"}
    for trial in range(20):
        login = asset(f"login-{trial}", TENANT, {"user": "u", "password": "p"})
        read = await created(app, admin, f"{CREDENTIALS}/password", login)
        variable = {"name": "TOKEN", "credential": {"assetId": read, "key": "password"}}
        bodies = [
            asset(f"env-{trial}-{i}", {**TENANT, "workloadSupportedTypes": SUPPORTS},
                  {"image": "pt:1", "environmentVariables": [variable]})
            for i in range(10)
        ]  # fmt: skip
        async with client_for(app) as client:
            creators = [client.post(ENVIRONMENTS, headers=headers, json=b) for b in bodies]
            deletion = client.delete(f"{CREDENTIALS}/password/{read}", headers=headers)
            at = trial % 11
            answers = await asyncio.gather(*creators[:at], deletion, *creators[at:])
        made = raced(answers, at, deleted=202, refused=412)
        uses = "SELECT count(*) FROM stream_uses WHERE used_id = $1"
        assert await clean_pool.fetchval(uses, read) == len(made)


async def test_a_project_deletion_racing_creations_in_it_never_leaves_one_in_a_deleted_project(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    headers = {"authorization": f"Bearer {admin}"}
    cluster = (await call(app, "POST", CLUSTERS, admin, json={"name": "east"})).json()["uuid"]
    for trial in range(20):
        unit = await call(app, "POST", PROJECTS, admin, json={
            "name": f"p-{trial}", "clusterId": cluster,
        })  # fmt: skip
        assert unit.status_code == 201, unit.text
        project = unit.json()["id"]
        scope = {"scope": "project", "projectId": project}
        async with client_for(app) as client:
            creators = [
                client.post(COMPUTE, headers=headers,
                            json=asset(f"gpu-{i}", scope, {"gpuDevicesRequest": 1}))
                for i in range(3)
            ]  # fmt: skip
            deletion = client.delete(f"{PROJECTS}/{project}", headers=headers)
            at = trial % 4
            answers = await asyncio.gather(*creators[:at], deletion, *creators[at:])
        raced(answers, at, deleted=204, refused=409)
