"""The `Idempotency-Key` guarantee beyond tests/api/test_idempotency.py: every other credential
and data-source kind sent again, attempts racing under one key for every create, and retries
after what the first attempt was decided on has moved on (an asset edited or deleted, a
setting turned off, a rule that answered the grant revoked): the first result, nothing
written."""

from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.support import call, token_for
from tests.api.test_assets import org  # noqa: F401  # the fixture: a cluster, a department, two projects
from tests.api.test_data_volumes import VOLUMES, volume
from tests.api.test_idempotency import (
    CLUSTERS,
    COMPUTE,
    NFS,
    PASSWORDS,
    PROJECTS,
    REGISTRIES,
    compute_body,
    environment_body,
    events_of,
    id_of,
    nfs_body,
    password_body,
    post,
    raced,
    registry_body,
)
from tests.api.test_in_use import ENVIRONMENTS, TEMPLATES, environment, template
from tests.api.test_settings import turn
from tests.api.test_workloads import WORKLOADS, setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]

CREDENTIALS = "/api/v1/asset/credentials"
DATA_SOURCES = "/api/v1/asset/datasource"
DEPARTMENTS = "/api/v1/org-unit/departments"
RULES = "/api/v1/authorization/access-rules"

Body = Callable[[str], dict[str, Any]]  # from the id of a password credential it may read


def asset(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"meta": {"name": name, "scope": "tenant"}, "spec": spec}


async def count(pool: asyncpg.Pool, sql: str = "SELECT count(*) FROM events") -> int:
    return int(await pool.fetchval(sql))


def created_of(kind: str) -> str:
    return f"SELECT count(*) FROM events WHERE type = '{kind}'"


SECRETS = "SELECT count(*) FROM credential_secrets"


@pytest.mark.parametrize(
    ("segment", "body", "changed"),
    [
        (
            "credentials/access-key",
            lambda _: asset("s3-key", {"accessKeyId": "a", "secretAccessKey": "b"}),
            lambda _: asset("s3-key", {"accessKeyId": "a", "secretAccessKey": "c"}),
        ),
        (
            "credentials/docker-registry",
            lambda _: asset("pull", {"user": "u", "password": "p", "url": "https://r.example"}),
            lambda _: asset("pull", {"user": "u", "password": "q", "url": "https://r.example"}),
        ),
        (
            "credentials/generic-secret",
            lambda _: asset("hf", {"keyValuePairs": [{"key": "token", "value": "v"}]}),
            lambda _: asset("hf", {"keyValuePairs": [{"key": "token", "value": "w"}]}),
        ),
        (
            "credentials/ngc-api-key",
            lambda _: asset("ngc", {"ngc_api_key": "abc"}),
            lambda _: asset("ngc", {"ngc_api_key": "abd"}),
        ),
        (
            "datasource/pvc",
            lambda _: asset("ckpt", {"path": "/ckpt", "claimInfo": {"size": "100Gi"}}),
            lambda _: asset("ckpt", {"path": "/ckpt", "claimInfo": {"size": "200Gi"}}),
        ),
        (
            "datasource/s3",
            lambda _: asset("imagenet", {"bucket": "datasets", "path": "/imagenet"}),
            lambda _: asset("imagenet", {"bucket": "datasets", "path": "/imagenet-21k"}),
        ),
        (
            "datasource/git",
            lambda _: asset("code", {"repository": "https://g.example/t.git", "path": "/code"}),
            lambda _: asset("code", {"repository": "https://g.example/u.git", "path": "/code"}),
        ),
        (
            "datasource/host-path",
            lambda _: asset("scratch", {"path": "/mnt/ssd", "mountPath": "/scratch"}),
            lambda _: asset("scratch", {"path": "/mnt/nvme", "mountPath": "/scratch"}),
        ),
        (
            "datasource/config-map",
            lambda _: asset("hparams", {"configMap": "train", "mountPath": "/etc/train"}),
            lambda _: asset("hparams", {"configMap": "other", "mountPath": "/etc/train"}),
        ),
        (
            "datasource/secrets",
            lambda pw: asset("keys", {"credentialAssetId": pw, "mountPath": "/secrets"}),
            lambda pw: asset("keys", {"credentialAssetId": pw, "mountPath": "/other"}),
        ),
    ],
    ids=[
        "access-key",
        "docker-registry",
        "generic-secret",
        "ngc-api-key",
        "pvc",
        "s3",
        "git",
        "host-path",
        "config-map",
        "secrets",
    ],
)
async def test_every_other_credential_and_data_source_kind_sent_again_answers_the_first(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    segment: str,
    body: Body,
    changed: Body,
) -> None:
    path = f"/api/v1/asset/{segment}"
    made = await call(app, "POST", PASSWORDS, admin, json=password_body("read-by-secrets"))
    assert made.status_code == 202, made.text
    password = str(made.json()["meta"]["id"])
    first = await post(app, admin, path, body(password), "k-1")
    assert first.status_code == 202, first.text
    written, sealed = await count(clean_pool), await count(clean_pool, SECRETS)
    again = await post(app, admin, path, body(password), "k-1")
    assert again.status_code == 202, again.text
    assert id_of(again.json()) == id_of(first.json())
    assert again.json()["meta"]["name"] == first.json()["meta"]["name"]
    assert await count(clean_pool) == written
    reused = await post(app, admin, path, changed(password), "k-1")
    assert reused.status_code == 422, reused.text
    assert (await count(clean_pool), await count(clean_pool, SECRETS)) == (written, sealed)
    # Without a key, or under another, the same body is a second request: its name is taken.
    assert (await call(app, "POST", path, admin, json=body(password))).status_code == 409
    assert (await post(app, admin, path, body(password), "k-2")).status_code == 409
    assert await count(clean_pool) == written


@pytest.mark.parametrize(
    ("path", "status", "created", "body"),
    [
        (ENVIRONMENTS, 202, "environment.created.v1", environment_body("pt")),
        (COMPUTE, 202, "compute.created.v1", compute_body("gpu")),
        (PASSWORDS, 202, "credential.created.v1", password_body("db")),
        (
            f"{CREDENTIALS}/generic-secret",
            202,
            "credential.created.v1",
            asset("hf", {"keyValuePairs": [{"key": "token", "value": "v"}]}),
        ),
        (REGISTRIES, 201, "registry.created.v1", registry_body("ngc")),
        (NFS, 202, "datasource.created.v1", nfs_body("nas")),
        (
            f"{DATA_SOURCES}/pvc",
            202,
            "datasource.created.v1",
            asset("ckpt", {"path": "/ckpt", "claimInfo": {"size": "100Gi"}}),
        ),
        (CLUSTERS, 201, "cluster.created.v1", {"name": "east"}),
    ],
    ids=[
        "environment",
        "compute",
        "password",
        "generic-secret",
        "registry",
        "nfs",
        "pvc",
        "cluster",
    ],
)
async def test_attempts_racing_under_one_key_make_one(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    path: str,
    status: int,
    created: str,
    body: dict[str, Any],
) -> None:
    sealed = await count(clean_pool, SECRETS)
    answers = await raced(app, admin, path, body)
    assert [a.status_code for a in answers] == [status] * 12, [a.text for a in answers]
    ids = {id_of(a.json()) for a in answers}
    assert len(ids) == 1
    assert await count(clean_pool, created_of(created)) == 1
    assert await events_of(clean_pool, ids.pop()) == 1
    if "credentials" in path or path == REGISTRIES:
        assert await count(clean_pool, SECRETS) == sealed + 1


async def test_attempts_racing_under_one_key_make_one_department(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", CLUSTERS, admin, json={"name": "east"})).json()["uuid"]
    answers = await raced(app, admin, DEPARTMENTS, {"name": "ml", "clusterId": cluster})
    assert [a.status_code for a in answers] == [201] * 12, [a.text for a in answers]
    assert len({a.json()["id"] for a in answers}) == 1
    assert await count(clean_pool, created_of("department.created.v1")) == 1


async def test_attempts_racing_under_one_key_submit_one_workload(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    answers = await raced(app, admin, WORKLOADS, submission(found, useGivenNameAsPrefix=True))
    assert [a.status_code for a in answers] == [202] * 12, [a.text for a in answers]
    assert len({(a.json()["workloadId"], a.json()["name"]) for a in answers}) == 1
    assert await count(clean_pool, created_of("workload.requested.v1")) == 1


async def test_attempts_racing_under_one_key_make_one_data_volume(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    answers = await raced(app, admin, VOLUMES, volume("corpus", org["projects"][0]))
    assert [a.status_code for a in answers] == [201] * 12, [a.text for a in answers]
    assert len({a.json()["id"] for a in answers}) == 1
    assert await count(clean_pool, created_of("datavolume.created.v1")) == 1


async def test_a_template_sent_again_after_its_linked_environment_changed_answers_the_first(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """The template's events record its assets' versions; a retry is the same request whatever
    they have become (services/templates.py `_same_template`)."""
    env = await environment(app, admin, "pt")
    body = template("ddp", environment=env)
    first = await post(app, admin, TEMPLATES, body, "t-1")
    assert first.status_code == 202, first.text
    edited = await call(app, "PUT", f"{ENVIRONMENTS}/{env}", admin, json={
        "meta": {"name": "pt"}, "spec": {"image": "nvcr.io/nvidia/pytorch:24.06-py3"},
    })  # fmt: skip
    assert edited.status_code == 202, edited.text
    written = await count(clean_pool)
    again = await post(app, admin, TEMPLATES, body, "t-1")
    assert again.status_code == 202, again.text
    assert id_of(again.json()) == id_of(first.json())
    assert await count(clean_pool) == written


async def test_an_asset_sent_again_after_it_was_deleted_answers_the_first_and_writes_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """Its name freed and taken by another: the key still names the first."""
    first = await post(app, admin, ENVIRONMENTS, environment_body("pt"), "e-1")
    assert first.status_code == 202, first.text
    made = id_of(first.json())
    assert (await call(app, "DELETE", f"{ENVIRONMENTS}/{made}", admin)).status_code == 202
    other = await call(app, "POST", ENVIRONMENTS, admin, json=environment_body("pt"))
    assert other.status_code == 202, other.text
    written = await count(clean_pool)
    again = await post(app, admin, ENVIRONMENTS, environment_body("pt"), "e-1")
    assert again.status_code == 202, again.text
    assert id_of(again.json()) == made != id_of(other.json())
    assert await count(clean_pool) == written


async def test_a_template_sent_again_after_its_framework_was_turned_off_answers_the_first(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """As a workload's retry does once submitting is turned off (test_idempotency.py): the
    retry writes nothing, so nothing the setting forbids is made."""
    body = template("ddp")
    first = await post(app, admin, TEMPLATES, body, "t-1")
    assert first.status_code == 202, first.text
    assert await turn(app, admin, "workloads.distributedFrameworks.PyTorch", False) == 200
    written = await count(clean_pool)
    again = await post(app, admin, TEMPLATES, body, "t-1")
    assert await count(clean_pool) == written
    assert again.status_code == 202, again.text
    assert id_of(again.json()) == id_of(first.json())


async def test_a_keyed_grant_answered_with_an_existing_rule_is_answered_it_again_once_revoked(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    account = await call(app, "POST", "/api/v1/service-accounts", admin, json={"name": "bot"})
    body = {
        "subjectId": account.json()["id"], "subjectType": "app", "roleId": 2,
        "scopeType": "tenant", "scopeId": "",
    }  # fmt: skip
    held = await call(app, "POST", RULES, admin, json=body)  # without a key
    assert held.status_code == 201, held.text
    first = await post(app, admin, RULES, body, "grant-1")
    assert first.status_code == 201, first.text
    assert first.json()["id"] == held.json()["id"]  # the rule it holds, nothing written
    revoked = await call(app, "DELETE", f"{RULES}/{held.json()['id']}", admin)
    assert revoked.status_code in (200, 204), revoked.text
    written = await count(clean_pool)
    again = await post(app, admin, RULES, body, "grant-1")
    assert again.status_code == 201, again.text
    assert await count(clean_pool) == written
    assert again.json()["id"] == first.json()["id"]


async def test_a_data_volume_sent_again_after_data_volumes_were_turned_off_answers_the_first(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    org: dict[str, Any],  # noqa: F811
) -> None:
    body = volume("corpus", org["projects"][0])
    first = await post(app, admin, VOLUMES, body, "dv-1")
    assert first.status_code == 201, first.text
    assert await turn(app, admin, "workloads.dataVolumes", False) == 200
    written = await count(clean_pool)
    again = await post(app, admin, VOLUMES, body, "dv-1")
    assert await count(clean_pool) == written
    assert again.status_code == 201, again.text
    assert again.json()["id"] == first.json()["id"]


async def test_a_keyed_unit_create_refused_to_a_caller_without_rights_uses_up_no_number(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """Units are numbered 1, 2, 3...: a keyed create the caller may not make (a stranger, who
    cannot see the cluster; an editor, who may not create units) is refused before its key is
    issued a number, so numbers run on without a gap."""
    stranger = await token_for(clean_pool, "stranger", ())
    editor = await token_for(
        clean_pool, "editor", (Grant(role="editor", scope_kind="tenant", scope_id="tenant"),)
    )
    cluster = (await call(app, "POST", CLUSTERS, admin, json={"name": "east"})).json()["uuid"]
    first = await call(app, "POST", DEPARTMENTS, admin, json={"name": "a", "clusterId": cluster})
    project = {"name": "p", "clusterId": cluster, "parentId": first.json()["id"]}
    for caller, status in ((stranger, 400), (editor, 403)):
        for key in ("k1", "k2"):
            department = {"name": key, "clusterId": cluster}
            refused = await post(app, caller, DEPARTMENTS, department, key)
            assert refused.status_code == status, refused.text
            refused = await post(app, caller, PROJECTS, project, key)
            assert refused.status_code == status, refused.text
    assert await count(clean_pool, "SELECT count(*) FROM issued_ids") == 0
    keyed = await post(app, admin, DEPARTMENTS, {"name": "b", "clusterId": cluster}, "k1")
    assert keyed.status_code == 201, keyed.text
    assert int(keyed.json()["id"]) == int(first.json()["id"]) + 1
    again = await post(app, admin, DEPARTMENTS, {"name": "b", "clusterId": cluster}, "k1")
    assert (again.status_code, again.json()["id"]) == (201, keyed.json()["id"])
