"""Sizes at the edge (docs/decisions/0002-message-sizes.md): a body past the limit is a 413
before anything is read into a handler, and a write whose event would pass the event limit is
refused naming its largest field, with nothing written."""

from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from infra.settings import SizeSettings
from tests.api.support import call
from tests.api.test_templates import org

pytestmark = [pytest.mark.api, pytest.mark.integration]

TEMPLATES = "/api/v1/workload-templates/distributed"
LIMITS = SizeSettings()


def variables(total_bytes: int) -> list[dict[str, str]]:
    """Environment variables of about `total_bytes`, 1,000 bytes of value each."""
    return [{"name": f"VAR_{i:05d}", "value": "v" * 1000} for i in range(total_bytes // 1000)]


def a_template(project: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "meta": {"name": "big", "scopeType": "project", "scopeId": project["id"]},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "image": "python", **spec},
    }


async def test_a_template_whose_event_would_pass_the_limit_is_refused_naming_the_field(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    project = (await org(app, admin))["project"]
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    body = a_template(project, environmentVariables=variables(1_100_000))
    refused = await call(app, "POST", TEMPLATES, admin, json=body)
    assert refused.status_code == 413, refused.text[:300]
    problem = refused.json()
    assert problem["code"] == 413
    assert problem["errors"][0]["pointer"] == "/spec/environmentVariables"
    assert str(LIMITS.event_bytes) in problem["message"]
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before

    # Under the limit, the same template is written.
    body = a_template(project, environmentVariables=variables(400_000))
    created = await call(app, "POST", TEMPLATES, admin, json=body)
    assert created.status_code == 202, created.text[:300]


async def test_a_body_past_the_limit_is_a_413_problem(app: Litestar, admin: str) -> None:
    huge = b'{"meta": {"name": "' + b"x" * LIMITS.body_bytes + b'"}}'
    headers = {"content-type": "application/json"}
    refused = await call(app, "POST", TEMPLATES, admin, headers=headers, content=huge)
    assert refused.status_code == 413, refused.text[:300]
    assert refused.headers["content-type"] == "application/problem+json"
    problem = refused.json()
    assert (problem["status"], problem["code"]) == (413, 413)
    assert problem["message"] == f"the body is larger than {LIMITS.body_bytes} bytes"
