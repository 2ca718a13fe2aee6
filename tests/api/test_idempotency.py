"""A create sent again under the same `Idempotency-Key` answers what the first one made and
writes nothing; the key reused for another request is a 422; two callers' equal keys are two
things; attempts racing each other make one thing."""

import asyncio
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import TENANT_ADMIN
from tests.api.client import client_for
from tests.api.support import call, token_for
from tests.api.test_in_use import ENVIRONMENTS, SUPPORTS, TEMPLATES, environment, template
from tests.api.test_settings import turn
from tests.api.test_workloads import WORKLOADS, setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]

COMPUTE = "/api/v1/asset/compute"
PASSWORDS = "/api/v1/asset/credentials/password"
REGISTRIES = "/api/v1/asset/registries"
CLUSTERS = "/api/v1/clusters"
NFS = "/api/v1/asset/datasource/nfs"


def environment_body(name: str, image: str = "pt:1") -> dict[str, Any]:
    meta = {"name": name, "scope": "tenant", "workloadSupportedTypes": SUPPORTS}
    return {"meta": meta, "spec": {"image": image}}


def compute_body(name: str, gpus: int = 8) -> dict[str, Any]:
    return {"meta": {"name": name, "scope": "tenant"}, "spec": {"gpuDevicesRequest": gpus}}


def id_of(answer: dict[str, Any]) -> str:
    if "workloadId" in answer:
        return str(answer["workloadId"])
    return str(answer["uuid"] if "uuid" in answer else answer["meta"]["id"])  # a cluster's: uuid


def name_of(answer: dict[str, Any]) -> str:
    return str(answer["name"] if "uuid" in answer else answer["meta"]["name"])


async def events_of(pool: asyncpg.Pool, stream_id: str) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM events WHERE stream_id = $1", stream_id))


async def post(app: Litestar, admin: str, path: str, body: object, key: str) -> Any:
    return await call(app, "POST", path, admin, {"idempotency-key": key}, json=body)


def password_body(name: str, password: str = "s3cret") -> dict[str, Any]:
    return {
        "meta": {"name": name, "scope": "tenant"},
        "spec": {"user": "svc", "password": password},
    }


def nfs_body(name: str, path: str = "/exports") -> dict[str, Any]:
    spec = {"server": "nas", "path": path, "mountPath": "/data"}
    return {"meta": {"name": name, "scope": "tenant"}, "spec": spec}


def registry_body(name: str, password: str = "s3cret") -> dict[str, Any]:
    spec = {"url": "https://registry.example", "credentialKind": "password", "user": "puller"}
    return {"meta": {"name": name, "scope": "tenant"}, "spec": {**spec, "password": password}}


@pytest.mark.parametrize(
    ("path", "status", "body", "changed"),
    [
        (TEMPLATES, 202, lambda: template("ddp"), lambda: template("ddp-2")),
        (ENVIRONMENTS, 202, lambda: environment_body("pt"), lambda: environment_body("pt", "pt:2")),
        (COMPUTE, 202, lambda: compute_body("gpu"), lambda: compute_body("gpu", 4)),
        # A credential's values are sealed, not stored in its events; another value is another
        # request all the same (its keyed fingerprint differs).
        (PASSWORDS, 202, lambda: password_body("db"), lambda: password_body("db", "other")),
        (REGISTRIES, 201, lambda: registry_body("ngc"), lambda: registry_body("ngc", "other")),
        (NFS, 202, lambda: nfs_body("nas"), lambda: nfs_body("nas", "/other")),
        (CLUSTERS, 201, lambda: {"name": "east"}, lambda: {"name": "east", "version": "2.20"}),
    ],
    ids=["template", "environment", "compute", "credential", "registry", "data-source", "cluster"],
)
async def test_a_create_sent_again_answers_the_first_and_writes_nothing(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    path: str,
    status: int,
    body: Callable[[], dict[str, Any]],
    changed: Callable[[], dict[str, Any]],
) -> None:
    first = await post(app, admin, path, body(), "k-1")
    assert first.status_code == status, first.text
    made = id_of(first.json())
    written = await clean_pool.fetchval("SELECT count(*) FROM events")
    sealed = await clean_pool.fetchval("SELECT count(*) FROM credential_secrets")
    again = await post(app, admin, path, body(), "k-1")
    assert again.status_code == status, again.text
    assert id_of(again.json()) == made
    assert name_of(again.json()) == name_of(first.json())
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == written
    reused = await post(app, admin, path, changed(), "k-1")
    assert reused.status_code == 422, reused.text
    assert reused.json()["code"] == 422
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == written
    assert await clean_pool.fetchval("SELECT count(*) FROM credential_secrets") == sealed
    # Without a key, or under another, the same body is a second request: its name is taken.
    assert (await call(app, "POST", path, admin, json=body())).status_code == 409
    assert (await post(app, admin, path, body(), "k-2")).status_code == 409


async def test_a_submission_sent_again_answers_the_first_workload_and_starts_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    body = submission(found, useGivenNameAsPrefix=True)
    first = await post(app, admin, WORKLOADS, body, "submit-1")
    assert first.status_code == 202, first.text
    again = await post(app, admin, WORKLOADS, body, "submit-1")
    assert again.status_code == 202, again.text
    assert again.json()["workloadId"] == first.json()["workloadId"]
    assert again.json()["name"] == first.json()["name"]
    assert await events_of(clean_pool, first.json()["workloadId"]) == 1
    other = await post(app, admin, WORKLOADS, body, "submit-2")  # another key: another run
    assert other.status_code == 202, other.text
    assert other.json()["workloadId"] != first.json()["workloadId"]


async def test_a_submission_sent_again_after_its_template_changed_answers_the_first_workload(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """A retry is the same request whatever its template and assets have become since: it
    answers the first workload, as it was resolved then, and starts nothing. Other overrides
    under the key are another request."""
    found = await setup(app, admin)
    body = submission(found, spec={"numWorkers": 3, "labels": [{"name": "a", "value": "1"}]})
    first = await post(app, admin, WORKLOADS, body, "submit-then-edit")
    assert first.status_code == 202, first.text
    template = f"{TEMPLATES}/{found['template']['meta']['id']}"
    edited = await call(app, "PATCH", template, admin, json={"spec": {"backoffLimit": 7}})
    assert edited.status_code == 200, edited.text
    again = await post(app, admin, WORKLOADS, body, "submit-then-edit")
    assert again.status_code == 202, again.text
    assert again.json()["workloadId"] == first.json()["workloadId"]
    assert again.json()["spec"] == first.json()["spec"]
    assert await events_of(clean_pool, first.json()["workloadId"]) == 1
    other = {**body, "spec": {"numWorkers": 4}}
    refused = await post(app, admin, WORKLOADS, other, "submit-then-edit")
    assert refused.status_code == 422, refused.text
    # Once submitting from templates is turned off, or the template is gone, a retry still
    # answers the workload the first attempt submitted.
    assert await turn(app, admin, "workloads.flexibleWorkloadSubmission", False) == 200
    again = await post(app, admin, WORKLOADS, body, "submit-then-edit")
    assert again.status_code == 202, again.text
    assert again.json()["workloadId"] == first.json()["workloadId"]
    assert (await call(app, "DELETE", template, admin)).status_code in (200, 202, 204)
    again = await post(app, admin, WORKLOADS, body, "submit-then-edit")
    assert again.status_code == 202, again.text
    assert again.json()["workloadId"] == first.json()["workloadId"]
    assert await events_of(clean_pool, first.json()["workloadId"]) == 1


async def test_two_callers_keys_are_their_own(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    other = await token_for(clean_pool, "other-admin", (TENANT_ADMIN,))
    mine = await post(app, admin, ENVIRONMENTS, environment_body("mine"), "same-key")
    theirs = await post(app, other, ENVIRONMENTS, environment_body("theirs"), "same-key")
    assert (mine.status_code, theirs.status_code) == (202, 202), theirs.text
    assert id_of(mine.json()) != id_of(theirs.json())


async def raced(app: Litestar, admin: str, path: str, body: object) -> list[Any]:
    """Twelve attempts of one create under one key, all in flight at once; their answers."""
    headers = {"authorization": f"Bearer {admin}", "idempotency-key": "race"}
    async with client_for(app) as client:
        return list(await asyncio.gather(
            *(client.post(path, headers=headers, json=body) for _ in range(12))
        ))  # fmt: skip


async def test_attempts_racing_under_one_key_make_one_template(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    env = await environment(app, admin, "pt")
    answers = await raced(app, admin, TEMPLATES, template("t", environment=env))
    assert [a.status_code for a in answers] == [202] * 12, [a.text for a in answers]
    assert len({id_of(a.json()) for a in answers}) == 1
    created = "SELECT count(*) FROM events WHERE type = 'template.created.v1'"
    assert await clean_pool.fetchval(created) == 1


DEPARTMENTS = "/api/v1/org-unit/departments"
PROJECTS = "/api/v1/org-unit/projects"


@pytest.mark.parametrize("path", [DEPARTMENTS, PROJECTS], ids=["department", "project"])
async def test_an_org_unit_sent_again_answers_the_first_and_writes_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, path: str
) -> None:
    """Their ids come from a sequence, not from the key: the key is issued its id once."""
    cluster = (await call(app, "POST", CLUSTERS, admin, json={"name": "east"})).json()["uuid"]
    body = {"name": "ml", "clusterId": cluster}
    first = await post(app, admin, path, body, "unit-1")
    assert first.status_code == 201, first.text
    written = await clean_pool.fetchval("SELECT count(*) FROM events")
    again = await post(app, admin, path, body, "unit-1")
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == written
    for changed in ({**body, "description": "other"}, {**body, "name": "ml-2"}):
        reused = await post(app, admin, path, changed, "unit-1")
        assert reused.status_code == 422, reused.text
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == written
    assert (await call(app, "POST", path, admin, json=body)).status_code == 409
    other = await post(app, admin, path, {**body, "name": "ml-3"}, "unit-2")
    assert other.status_code == 201, other.text
    assert other.json()["id"] != first.json()["id"]


async def test_attempts_racing_under_one_key_make_one_project(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", CLUSTERS, admin, json={"name": "east"})).json()["uuid"]
    answers = await raced(app, admin, PROJECTS, {"name": "p", "clusterId": cluster})
    assert [a.status_code for a in answers] == [201] * 12, [a.text for a in answers]
    assert len({a.json()["id"] for a in answers}) == 1
    created = "SELECT count(*) FROM events WHERE type = 'project.created.v1'"
    assert await clean_pool.fetchval(created) == 1


ACCOUNTS = "/api/v1/service-accounts"


async def logs_in(app: Litestar, client_id: str, secret: str) -> bool:
    login = {"grantType": "client_credentials", "clientID": client_id, "clientSecret": secret}
    return (await call(app, "POST", "/api/v1/token", None, json=login)).status_code == 200


async def test_a_service_account_sent_again_answers_its_first_secret_and_writes_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    first = await post(app, admin, ACCOUNTS, {"name": "ci-bot"}, "sa-1")
    assert first.status_code == 201, first.text
    written = await clean_pool.fetchval("SELECT count(*) FROM events")
    again = await post(app, admin, ACCOUNTS, {"name": "ci-bot"}, "sa-1")
    assert again.status_code == 201, again.text
    assert again.json() == first.json()  # the same secret, which logs in
    assert await logs_in(app, "ci-bot", first.json()["clientSecret"])
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == written
    # Kept sealed, for the retries only: in no event, and not as itself at rest.
    secret = first.json()["clientSecret"]
    events = await clean_pool.fetch("SELECT data::text || metadata::text AS e FROM events")
    assert all(secret not in row["e"] for row in events)
    sealed = await clean_pool.fetch("SELECT sealed FROM service_account_answers")
    assert len(sealed) == 1
    assert secret.encode() not in sealed[0]["sealed"]
    reused = await post(app, admin, ACCOUNTS, {"name": "ci-bot-2"}, "sa-1")
    assert reused.status_code == 422, reused.text
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == written
    # Its older name is the same create: the same key answers the same account and secret.
    legacy = await post(app, admin, "/api/v1/apps", {"name": "ci-bot"}, "sa-1")
    assert legacy.status_code == 201, legacy.text
    assert (legacy.json()["id"], legacy.json()["secret"]) == (first.json()["id"], secret)
    # Without a key, or under another, the same body is a second request: its name is taken.
    assert (await call(app, "POST", ACCOUNTS, admin, json={"name": "ci-bot"})).status_code == 409
    assert (await post(app, admin, ACCOUNTS, {"name": "ci-bot"}, "sa-2")).status_code == 409


async def test_a_service_account_retry_is_not_answered_a_secret_that_logs_in_no_more(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """Replaced, deleted, or kept its day: the retry answers 409 and writes nothing."""
    first = (await post(app, admin, ACCOUNTS, {"name": "rotated"}, "sa-r")).json()
    rotated = await call(app, "POST", f"{ACCOUNTS}/{first['id']}/secret", admin)
    assert rotated.status_code == 200, rotated.text
    again = await post(app, admin, ACCOUNTS, {"name": "rotated"}, "sa-r")
    assert again.status_code == 409, again.text
    assert again.json()["code"] == 409
    assert "regenerate its secret" in again.json()["message"]
    assert rotated.json()["clientSecret"] not in again.text
    assert await logs_in(app, "rotated", rotated.json()["clientSecret"])

    gone = (await post(app, admin, ACCOUNTS, {"name": "gone"}, "sa-g")).json()
    deleted = await call(app, "DELETE", f"{ACCOUNTS}/{gone['id']}", admin)
    assert deleted.status_code == 204, deleted.text
    after_delete = await post(app, admin, ACCOUNTS, {"name": "gone"}, "sa-g")
    assert after_delete.status_code == 409, after_delete.text
    assert gone["clientSecret"] not in after_delete.text

    aged = (await post(app, admin, ACCOUNTS, {"name": "aged"}, "sa-a")).json()
    await clean_pool.execute(
        "UPDATE service_account_answers SET created_at = now() - interval '25 hours'"
        " WHERE application_id = $1",
        aged["id"],
    )
    written = await clean_pool.fetchval("SELECT count(*) FROM events")
    late = await post(app, admin, ACCOUNTS, {"name": "aged"}, "sa-a")
    assert late.status_code == 409, late.text
    assert aged["clientSecret"] not in late.text
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == written
    # The next keyed create purges what is past its day.
    after = await post(app, admin, ACCOUNTS, {"name": "next"}, "sa-n")
    assert after.status_code == 201, after.text
    kept = await clean_pool.fetch("SELECT application_id::text AS id FROM service_account_answers")
    assert [row["id"] for row in kept] == [after.json()["id"]]


@pytest.mark.parametrize(
    "tampered",
    ["key_id = key_id + 1", "nonce = decode('000000000000000000000000', 'hex')"],
    ids=["another-key-id", "another-key"],
)
async def test_a_kept_secret_that_no_longer_opens_answers_409_not_500(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, tampered: str
) -> None:
    """Sealed under a credential key replaced since (or altered at rest): it is kept no more."""
    await post(app, admin, ACCOUNTS, {"name": "sealed"}, "sa-s")
    await clean_pool.execute(f"UPDATE service_account_answers SET {tampered}")
    again = await post(app, admin, ACCOUNTS, {"name": "sealed"}, "sa-s")
    assert again.status_code == 409, again.text


async def test_attempts_racing_under_one_key_make_one_service_account(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    answers = await raced(app, admin, ACCOUNTS, {"name": "raced"})
    assert [a.status_code for a in answers] == [201] * 12, [a.text for a in answers]
    assert len({(a.json()["id"], a.json()["clientSecret"]) for a in answers}) == 1
    created = "SELECT count(*) FROM events WHERE type = 'application.created.v1'"
    assert await clean_pool.fetchval(created) == 2  # the admin's own, and this one
    assert await logs_in(app, "raced", answers[0].json()["clientSecret"])


async def test_an_access_rule_granted_again_under_its_key_answers_the_first_rule(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """A rule's id is issued once per key: a retry answers that rule and writes nothing, even
    once it is revoked; another grant to the subject under the key is a 422; racing attempts
    grant one rule."""
    rules = "/api/v1/authorization/access-rules"
    accounts = []
    for name in ("bot-a", "bot-b"):
        made = await call(app, "POST", "/api/v1/service-accounts", admin, json={"name": name})
        accounts.append(made.json()["id"])
    body = {"subjectId": accounts[0], "subjectType": "app", "roleId": 2, "scopeType": "tenant"}
    body["scopeId"] = ""
    first = await post(app, admin, rules, body, "grant-1")
    assert first.status_code == 201, first.text
    granted = "SELECT count(*) FROM events WHERE type = 'application.role_granted.v1'"
    assert await clean_pool.fetchval(granted) == 1
    again = await post(app, admin, rules, body, "grant-1")
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    refused = await post(app, admin, rules, {**body, "roleId": 1}, "grant-1")
    assert refused.status_code == 422, refused.text
    # The subject is part of what the key names: to another subject, it is another rule.
    other = await post(app, admin, rules, {**body, "subjectId": accounts[1]}, "grant-1")
    assert other.status_code == 201, other.text
    assert other.json()["id"] != first.json()["id"]
    assert await clean_pool.fetchval(granted) == 2
    revoked = await call(app, "DELETE", f"{rules}/{first.json()['id']}", admin)
    assert revoked.status_code in (200, 204), revoked.text
    again = await post(app, admin, rules, body, "grant-1")
    assert (again.status_code, again.json()["id"]) == (201, first.json()["id"])
    assert await clean_pool.fetchval(granted) == 2  # not granted again
    revoked = await call(app, "DELETE", f"{rules}/{other.json()['id']}", admin)
    assert revoked.status_code in (200, 204), revoked.text
    answers = await raced(app, admin, rules, body)
    assert {answer.status_code for answer in answers} == {201}, [a.text for a in answers]
    assert len({answer.json()["id"] for answer in answers}) == 1
    assert await clean_pool.fetchval(granted) == 3
