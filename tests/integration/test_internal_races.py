"""The service's own writers never race its users: against running processes (API, relay,
projector with the fan-out, a submitter), a plain script with no If-Match, no sleeps and no
retries deletes the workload it just submitted and edits a template while the environment it
links changes, and gets its outcome every time; so does a script of the official client (runapy).
With If-Match, a version that has gone is 412.

TRAINPLATE_RACE_ROUNDS tries of each (default 200)."""

import contextlib
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import asyncpg
import httpx
import pytest
from runai.exceptions import ApiException
from runai.models import (
    AssetUpdateRequest,
    DistributedCreationRequest,
    DistributedTemplatePatchRequest,
    EnvironmentAssetSpec,
    EnvironmentUpdateRequest,
)

from infra.cli.embedded import free_port
from tests.api.support import SERVE_KEYS
from tests.integration.test_runapy import SECRET, clients_over, register_admin
from tests.processes import serve, wait_until_ready

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROUNDS = int(os.environ.get("TRAINPLATE_RACE_ROUNDS", "200"))
IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3"
TEMPLATES = 20  # that link one environment, each written to by the fan-out of its change


@pytest.fixture
def service(postgres_url: str, nats_url: str, clean_pool: asyncpg.Pool) -> Iterator[str]:
    """The API, the relay, the projector (which runs the fan-out) and a dry-run submitter."""
    port = free_port()
    common = {
        **SERVE_KEYS,
        "PROJECTOR__POLL_INTERVAL_S": "0.02",
        "RELAY__POLL_INTERVAL_S": "0.02",
        "SUBMITTER__BACKEND": "dry-run",
    }
    api = serve("api", postgres_url, nats_url, API_PORT=str(port), **common)
    others = [serve(p, postgres_url, nats_url, **common) for p in ("relay", "projector")]
    others.append(serve("submitter", postgres_url, nats_url, **common))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(f"{url}/readyz", api, within_s=30)
        yield url
    finally:
        for child in (api, *others):
            child.terminate()
        for child in (api, *others):
            child.wait(timeout=15)


@contextlib.contextmanager
def signed_in(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=30) as http:
        login = {"grantType": "app_token", "AppId": "runapy-admin", "AppSecret": SECRET}
        token = http.post("/api/v1/token", json=login).json()["accessToken"]
        http.headers["authorization"] = f"Bearer {token}"
        yield http


def an_org(http: httpx.Client) -> dict[str, str]:
    cluster = http.post("/api/v1/clusters", json={"name": "east"}).json()["uuid"]
    body = {"name": "llm", "clusterId": cluster}
    project = http.post("/api/v1/org-unit/projects", json=body).json()["id"]
    return {"cluster": cluster, "project": str(project)}


def environment(http: httpx.Client, image: str = IMAGE) -> str:
    body = {
        "meta": {
            "name": "torch",
            "scope": "tenant",
            "workloadSupportedTypes": {"distributed": True, "distFramework": "PyTorch"},
        },
        "spec": {"image": image},
    }
    created = http.post("/api/v1/asset/environment", json=body)
    assert created.status_code == 202, created.text
    return str(created.json()["meta"]["id"])


def template(http: httpx.Client, org: dict[str, str], name: str, **assets: Any) -> str:
    spec: dict[str, Any] = {"distributedFramework": "PyTorch", "numWorkers": 2}
    if not assets:  # its own image and command, else the linked environment's
        spec |= {"image": IMAGE, "command": "true"}
    body = {
        "meta": {"name": name, "scopeType": "project", "scopeId": org["project"]},
        "spec": spec,
        "assets": assets or None,
    }
    created = http.post("/api/v1/workload-templates/distributed", json=body)
    assert created.status_code == 202, created.text
    return str(created.json()["meta"]["id"])


async def test_a_workload_deleted_right_after_its_submission_is_deleted(
    service: str, clean_pool: asyncpg.Pool
) -> None:
    await register_admin(clean_pool)
    with signed_in(service) as http:
        org = an_org(http)
        template_id = template(http, org, "ddp")
        answers: Counter[int] = Counter()
        for round_ in range(ROUNDS):
            body = {
                "name": f"run-{round_}",
                "projectId": org["project"],
                "clusterId": org["cluster"],
                "templateId": template_id,
            }
            submitted = http.post("/api/v1/workloads/distributed", json=body)
            assert submitted.status_code == 202, submitted.text
            deleted = http.delete(f"/api/v1/workloads/distributed/{submitted.json()['workloadId']}")
            answers[deleted.status_code] += 1
            if deleted.status_code != 202:
                print(deleted.text)
        by_runapy = deleted_by_runapy(service, org, template_id)
    assert answers == {202: ROUNDS}
    assert by_runapy == {202: ROUNDS}
    # The submitter did write to these streams meanwhile: the races were there to lose.
    submitted_events = await clean_pool.fetchval(
        "SELECT count(*) FROM events WHERE type = 'workload.submitted.v1'"
    )
    assert submitted_events > 0


def deleted_by_runapy(url: str, org: dict[str, str], template_id: str) -> Counter[int]:
    """The same with the official client, as its users write scripts."""
    client = clients_over([url])
    answers: Counter[int] = Counter()
    for round_ in range(ROUNDS):
        request = DistributedCreationRequest(
            name=f"runapy-{round_}",
            projectId=org["project"],
            clusterId=org["cluster"],
            templateId=template_id,
        )
        workload_id = client().workloads.distributed.create_distributed(request).data["workloadId"]
        try:
            deleted = client().workloads.distributed.delete_distributed(workload_id)
            answers[deleted.status_code] += 1
        except ApiException as refused:
            answers[int(refused.status)] += 1
            print(refused.body)
    return answers


async def test_a_template_edited_right_after_its_linked_environment_changed_is_edited(
    service: str, clean_pool: asyncpg.Pool
) -> None:
    """Each round changes the environment that TEMPLATES templates link, then edits one of them
    at once, while the fan-out is writing the change to each."""
    await register_admin(clean_pool)
    with signed_in(service) as http:
        org = an_org(http)
        env = environment(http)
        linked = [template(http, org, f"linked-{i}", environment=env) for i in range(TEMPLATES)]
        answers: Counter[int] = Counter()
        for round_ in range(ROUNDS):
            body = {
                "meta": {"name": "torch"},
                "spec": {"image": f"nvcr.io/nvidia/pytorch:24.{round_ % 12 + 1:02d}-py3"},
            }
            changed = http.put(f"/api/v1/asset/environment/{env}", json=body)
            assert changed.status_code == 202, changed.text
            uri = f"/api/v1/workload-templates/distributed/{linked[round_ % TEMPLATES]}"
            patched = http.patch(uri, json={"spec": {"numWorkers": 2 + round_ % 5}})
            answers[patched.status_code] += 1
            if patched.status_code != 200:
                print(patched.text)
        by_runapy = edited_by_runapy(service, env, linked)
        # With If-Match, a version the fan-out has since moved past is refused.
        uri = f"/api/v1/workload-templates/distributed/{linked[0]}"
        version = int(http.get(uri).headers["etag"].strip('"'))
        body = {"meta": {"name": "torch"}, "spec": {"image": IMAGE}}
        assert http.put(f"/api/v1/asset/environment/{env}", json=body).status_code == 202
        moved = http.patch(uri, json={"spec": {"numWorkers": 3}})  # no If-Match: it lands
        assert moved.status_code == 200, moved.text
        stale = http.patch(
            uri, json={"spec": {"numWorkers": 4}}, headers={"if-match": f'"{version}"'}
        )
        assert stale.status_code == 412, stale.text
        assert stale.json()["expected"] == version
        # (the fan-out may still be writing the environment's change after the PATCH)
        assert stale.json()["actual"] >= int(moved.headers["etag"].strip('"')) > version
    assert answers == {200: ROUNDS}
    assert by_runapy == {200: ROUNDS}
    fanned_out = await clean_pool.fetchval(
        "SELECT count(*) FROM events WHERE type = 'template.linked_asset_updated.v1'"
    )
    assert fanned_out > 0


def edited_by_runapy(url: str, env: str, linked: list[str]) -> Counter[int]:
    """The same rounds with the official client."""
    client = clients_over([url])
    answers: Counter[int] = Counter()
    for round_ in range(ROUNDS):
        client().workload_assets.environment.update_environment_asset_by_id(
            env,
            EnvironmentUpdateRequest(
                meta=AssetUpdateRequest(name="torch"),
                spec=EnvironmentAssetSpec(image=f"{IMAGE}-{round_}"),
            ),
        )
        patch = DistributedTemplatePatchRequest.from_dict({"spec": {"numWorkers": 2 + round_ % 3}})
        try:
            patched = client().workloads.workload_templates.patch_distributed_template(
                linked[round_ % TEMPLATES], patch
            )
            answers[patched.status_code] += 1
        except ApiException as refused:
            answers[int(refused.status)] += 1
            print(refused.body)
    return answers
