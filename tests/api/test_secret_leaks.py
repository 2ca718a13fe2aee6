"""Secret values (credential values, registry passwords, service-account secrets, access tokens)
are found nowhere but where they must be, on paths the other tests leave out: what a keyed
create digests, a registry's new password, logins and rotations in the logs and every table, a
workload's manifests and environment; and the fingerprint shown in a secret's place confirms
no guess of another asset's password."""

import hashlib
import json
import logging
import types
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from domain.workload_plans import WorkloadPlan
from infra.backends.dry_run import DryRunBackend
from infra.backends.local_environment import replicas
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import KubeflowApi
from services import idempotency, submitter
from services.ports.workload_backends import Submission
from tests.api.client import client_for
from tests.api.support import call, console_session, project_all, token_for
from tests.api.test_templates import IMAGE
from tests.api.test_workloads import TEMPLATES, WORKLOADS, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]

CREDENTIALS = "/api/v1/asset/credentials"
REGISTRIES = "/api/v1/asset/registries"
ACCOUNTS = "/api/v1/service-accounts"
URL = "https://registry.example.com"


def mark() -> str:
    return f"s3cret-{uuid4().hex}"


async def every_row_text(pool: asyncpg.Pool) -> str:
    """Every row of every table, as text (sealed bytes show as hex, which holds no mark)."""
    tables = await pool.fetch(
        "SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = current_schema()"
    )
    texts = []
    for table in tables:
        rows = await pool.fetch(f"SELECT t::text AS row FROM {table['name']} t")
        texts += [row["row"] for row in rows]
    return "\n".join(texts)


def keyed(key: str) -> dict[str, str]:
    return {"idempotency-key": key}


async def test_a_keyed_create_digests_no_secret_value(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a keyed create's request digest is computed over (services/idempotency.py
    `request_digest`) holds the secret values' names and fingerprint, never the values."""
    digested: list[bytes] = []

    def sha256(data: bytes = b"") -> Any:
        digested.append(bytes(data))
        return hashlib.sha256(data)

    monkeypatch.setattr(idempotency, "hashlib", types.SimpleNamespace(sha256=sha256))
    secret = mark()
    bodies: dict[str, dict[str, Any]] = {
        "access-key": {"accessKeyId": f"{secret}-id", "secretAccessKey": f"{secret}-key"},
        "password": {"user": "svc", "password": f"{secret}-pw"},
        "docker-registry": {"user": "u", "password": f"{secret}-dr", "url": "nvcr.io"},
        "generic-secret": {"keyValuePairs": [{"key": "token", "value": f"{secret}-gs"}]},
        "ngc-api-key": {"ngc_api_key": f"{secret}-ngc"},
    }
    for segment, spec in bodies.items():
        body = {"meta": {"name": f"{segment}-c", "scope": "tenant"}, "spec": spec}
        for _ in range(2):  # the create, and its retry
            answer = await call(
                app, "POST", f"{CREDENTIALS}/{segment}", admin, keyed(segment), json=body
            )
            assert answer.status_code in (202, 204), answer.text
            assert secret not in answer.text
    body = {
        "meta": {"name": "reg", "scope": "tenant"},
        "spec": {"url": URL, "credentialKind": "password", "user": "u", "password": secret},
    }
    for _ in range(2):
        answer = await call(app, "POST", REGISTRIES, admin, keyed("registry"), json=body)
        assert answer.status_code == 201, answer.text
        assert secret not in answer.text

    assert len(digested) >= 2 * (len(bodies) + 1)
    assert all(secret.encode() not in data for data in digested)
    digests = await clean_pool.fetch(
        "SELECT metadata->>'requestDigest' AS d FROM events"
        " WHERE stream_type IN ('credential', 'registry')"
    )
    assert len(digests) == len(bodies) + 1
    assert all(row["d"] for row in digests)


async def test_changes_logins_and_retries_leave_no_secret_in_logs_or_tables(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A registry's new password, a service account created (and retried) under a key, its
    secret regenerated, logins that fail and succeed over the API and the console: no secret
    or token in any log record, in any table's rows, nor in any answer but the one that shows
    it."""
    caplog.set_level(logging.DEBUG)
    secret, new_password = mark(), mark()
    texts: list[str] = []

    body = {
        "meta": {"name": "reg", "scope": "tenant"},
        "spec": {"url": URL, "credentialKind": "password", "user": "u", "password": secret},
    }
    created = await call(app, "POST", REGISTRIES, admin, json=body)
    assert created.status_code == 201, created.text
    one = f"{REGISTRIES}/{created.json()['meta']['id']}"
    change = {"meta": {"name": "reg"}, "spec": {"password": new_password}}
    changed = await call(app, "PUT", one, admin, json=change)
    assert changed.status_code == 200, changed.text
    # The password with a new URL, refused on another field: nothing kept, nothing quoted.
    moved = {"meta": {"name": "reg"}, "spec": {"url": "ftp://x", "password": f"{secret}-x"}}
    refused = await call(app, "PUT", one, admin, json=moved)
    assert refused.status_code == 400, refused.text
    texts += [created.text, changed.text, refused.text]

    account = await call(app, "POST", ACCOUNTS, admin, keyed("sa"), json={"name": "robot"})
    assert account.status_code == 201, account.text
    again = await call(app, "POST", ACCOUNTS, admin, keyed("sa"), json={"name": "robot"})
    assert again.json()["clientSecret"] == account.json()["clientSecret"]
    first_secret = account.json()["clientSecret"]
    account_id = account.json()["id"]
    rotated = await call(app, "POST", f"{ACCOUNTS}/{account_id}/secret", admin)
    assert rotated.status_code == 200, rotated.text
    rotated_secret = rotated.json()["clientSecret"]

    wrong = {"grantType": "app_token", "AppId": "robot", "AppSecret": first_secret}
    failed = await call(app, "POST", "/api/v1/token", None, json=wrong)
    assert failed.status_code == 401, failed.text
    good = {"grantType": "client_credentials", "clientID": "robot", "clientSecret": rotated_secret}
    granted = await call(app, "POST", "/api/v1/token", None, json=good)
    assert granted.status_code == 200, granted.text
    token = granted.json()["accessToken"]
    texts += [failed.text]
    async with client_for(app) as client:
        page = await client.get("/console/sign-in")
        csrf = page.text.split('name="_csrf_token" value="')[1].split('"')[0]
        form = {"client_id": "robot", "client_secret": secret, "_csrf_token": csrf}
        console_refused = await client.post("/console/sign-in", data=form)
        assert console_refused.status_code == 401
        texts.append(console_refused.text)
        await console_session(client, "root-admin")
    await project_all(clean_pool)
    listed = await call(app, "GET", ACCOUNTS, admin)
    texts.append(listed.text)

    stored = await every_row_text(clean_pool)
    for value in (secret, new_password, first_secret, rotated_secret, token):
        assert value not in caplog.text, "a secret in the logs"
        assert value not in stored, "a secret in a table"
        assert all(value not in text for text in texts), "a secret in an answer"


async def test_a_project_editor_cannot_confirm_a_guess_of_a_tenant_registrys_password(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "c"})).json()
    body = {"name": "a", "clusterId": cluster["uuid"]}
    project = (await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)).json()
    editor = await token_for(
        clean_pool,
        "a-editor",
        (Grant(role="editor", scope_kind="project", scope_id=project["id"]),),
    )
    secret = mark()

    def registry(password: str, **scope: Any) -> dict[str, Any]:
        return {
            "meta": {"name": "ngc", **scope},
            "spec": {"url": URL, "credentialKind": "password", "user": "u", "password": password},
        }

    tenant = await call(app, "POST", REGISTRIES, admin, json=registry(secret, scope="tenant"))
    assert tenant.status_code == 201, tenant.text
    in_project = {"scope": "project", "projectId": int(project["id"])}
    guess = await call(app, "POST", REGISTRIES, editor, json=registry(secret, **in_project))
    assert guess.status_code == 201, guess.text
    await project_all(clean_pool)

    fingerprints = []
    for made in (tenant, guess):
        path = f"/api/v1/asset/{made.json()['meta']['id']}/as-of"
        shown = await call(app, "GET", path, editor)
        assert shown.status_code == 200, shown.text
        fingerprints.append(shown.json()["spec"]["secret"]["fingerprint"])
    assert fingerprints[0] != fingerprints[1], "the editor learnt the tenant registry's password"


class Recording(DryRunBackend):
    """The dry run, keeping the plans it was handed (what a local backend starts from)."""

    def __init__(self) -> None:
        super().__init__()
        self.plans: list[WorkloadPlan] = []

    async def submit(self, plan: WorkloadPlan) -> Submission:
        self.plans.append(plan)
        return await super().submit(plan)


async def test_a_workload_reading_a_credential_gets_references_never_its_values(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """An environment's variable from a credential, a shared secret and a user credential on
    the template: the manifests (both Kubeflow APIs) refer to cluster secrets, and the local
    backend's replicas get no value of any of them."""
    secret = mark()
    made = await call(
        app, "POST", f"{CREDENTIALS}/password", admin,
        json={"meta": {"name": "db", "scope": "tenant"}, "spec": {"user": "u", "password": secret}},
    )  # fmt: skip
    assert made.status_code == 202, made.text
    credential = made.json()["meta"]["id"]
    pull = await call(
        app, "POST", f"{CREDENTIALS}/docker-registry", admin,
        json={
            "meta": {"name": "pull", "scope": "tenant"},
            "spec": {"user": "u", "password": f"{secret}-pull", "url": "nvcr.io"},
        },
    )  # fmt: skip
    assert pull.status_code == 202, pull.text
    variables = [{"name": "DB_PASSWORD", "credential": {"assetId": credential, "key": "password"}}]
    environment = {
        "meta": {
            "name": "env",
            "scope": "tenant",
            "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"},
        },
        "spec": {"image": IMAGE, "environmentVariables": variables},
    }
    env = await call(app, "POST", "/api/v1/asset/environment", admin, json=environment)
    assert env.status_code == 202, env.text
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "c"})).json()
    body = {"name": "p", "clusterId": cluster["uuid"]}
    project = (await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)).json()
    own = [
        {"name": "SHARED", "secret": {"name": "team-secret", "key": "token"}},
        {"name": "MINE", "userCredential": {"name": "my-login", "key": "password"}},
    ]
    template = {
        "meta": {"name": "ddp", "scopeType": "project", "scopeId": project["id"]},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        "assets": {"environment": env.json()["meta"]["id"]},
    }
    created = await call(app, "POST", TEMPLATES, admin, json=template)
    assert created.status_code == 202, created.text
    found = {"project": project, "cluster": cluster, "template": created.json()}
    # One run reads the environment's variables; one its own (a list given replaces).
    asked = [
        submission(found, name="env"),
        submission(found, name="own", spec={"environmentVariables": own}),
    ]
    workloads = []
    for body in asked:
        workload = await call(app, "POST", WORKLOADS, admin, json=body)
        assert workload.status_code == 202, workload.text
        workloads.append(workload.json()["workloadId"])
    await project_all(clean_pool)

    recording = Recording()
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    for workload_id in workloads:
        await submitter.reconcile(UUID(workload_id), store=store, backend=recording)
    apis: tuple[KubeflowApi, ...] = ("trainer-v2", "v1")
    rendered = ""
    for plan in recording.plans:
        for api in apis:
            rendered += json.dumps((await DryRunBackend(kubeflow_api=api).submit(plan)).manifests)
        started = replicas(plan, range(20000, 20016), hostfile="", node_name="local")
        assert started
        for replica in started:
            assert all(secret not in value for value in replica.env.values())
            assert not {"DB_PASSWORD", "SHARED", "MINE"} & set(replica.env)
    assert len(recording.plans) == 2
    assert secret not in rendered
    ref = {"secretKeyRef": {"name": f"credential-{credential}", "key": "password"}}
    assert json.dumps({"name": "DB_PASSWORD", "valueFrom": ref}) in rendered  # by reference
    assert "team-secret" in rendered
    assert "my-login" in rendered
    await project_all(clean_pool)
    for workload_id in workloads:
        shown = await call(app, "GET", f"/api/v1/workloads/{workload_id}/manifests", admin)
        assert shown.status_code == 200, shown.text
        assert secret not in shown.text
    assert secret not in await every_row_text(clean_pool)
