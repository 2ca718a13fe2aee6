"""An item without a field Run:ai marks mandatory is refused over HTTP, in a template, an asset,
a policy's defaults and a submission's overrides alike: a 400 problem naming the field, and
nothing written."""

from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar

from tests.api.support import call
from tests.api.test_workloads import WORKLOADS, setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]

TEMPLATES = "/api/v1/workload-templates/distributed"
WRITTEN = "SELECT count(*) FROM events WHERE stream_type = $1"


def template(spec: dict[str, Any]) -> dict[str, Any]:
    base = {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "pt:2"}
    return {"meta": {"name": "t", "scopeType": "tenant"}, "spec": {**base, **spec}}


def refused_naming(response: httpx.Response, pointer: str) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert (problem["status"], problem["code"]) == (400, 400)
    assert problem["message"]
    assert [e["pointer"] for e in problem["errors"]] == [pointer], problem


@pytest.mark.parametrize(
    ("spec", "pointer"),
    [
        ({"tolerations": [{"operator": "Exists", "effect": "NoSchedule"}]},
         "/spec/tolerations/0/key"),
        ({"tolerations": [{"key": "zone", "operator": "Equal", "effect": "NoSchedule"}]},
         "/spec/tolerations/0/value"),
        ({"environmentVariables": [{"value": "1"}]}, "/spec/environmentVariables/0/name"),
        ({"storage": {"nfs": [{"path": "/export", "mountPath": "/data"}]}},
         "/spec/storage/nfs/0/server"),
        ({"ports": [{"serviceType": "ClusterIP"}]}, "/spec/ports/0/container"),
        ({"probes": {"readiness": {"periodSeconds": 5}}}, "/spec/probes/readiness/handler"),
    ],
)  # fmt: skip
async def test_a_template_item_without_a_mandatory_field_is_refused(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, spec: dict[str, Any], pointer: str
) -> None:
    refused_naming(await call(app, "POST", TEMPLATES, admin, json=template(spec)), pointer)
    assert await clean_pool.fetchval(WRITTEN, "template") == 0


async def test_assets_policies_and_submissions_refuse_it_too(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    environment = {
        "meta": {"name": "e", "scope": "tenant"},
        "spec": {"image": "i:1", "probes": {"readiness": {"periodSeconds": 5}}},
    }
    refused = await call(app, "POST", "/api/v1/asset/environment", admin, json=environment)
    refused_naming(refused, "/spec/probes/readiness/handler")
    assert await clean_pool.fetchval(WRITTEN, "environment") == 0

    toleration = {"name": "spot", "operator": "Exists", "effect": "NoSchedule"}
    policy = {
        "meta": {"scope": "tenant"},
        "policy": {"defaults": {"worker": {"tolerations": {"instances": [toleration]}}}},
    }
    refused = await call(app, "PUT", "/api/v2/policy/distributed", admin, json=policy)
    refused_naming(refused, "/policy/defaults/worker/tolerations/instances/0/key")
    assert await clean_pool.fetchval(WRITTEN, "policy") == 0

    found = await setup(app, admin)
    own = submission(found, spec={"tolerations": [toleration]})
    refused_naming(await call(app, "POST", WORKLOADS, admin, json=own), "/spec/tolerations/0/key")
    assert await clean_pool.fetchval(WRITTEN, "workload") == 0
    complete = submission(found, spec={"tolerations": [{**toleration, "key": "spot"}]})
    accepted = await call(app, "POST", WORKLOADS, admin, json=complete)
    assert accepted.status_code == 202, accepted.text
