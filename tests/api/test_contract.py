"""The event contract over HTTP, without a token: the AsyncAPI document and one schema per type."""

import json

import asyncpg
import pytest
from litestar import Litestar

from infra.jetstream.asyncapi import asyncapi
from tests.api.support import call

pytestmark = [pytest.mark.api, pytest.mark.integration]


async def test_the_asyncapi_document_and_each_events_schema_are_served(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    document = await call(app, "GET", "/api/v1/events/asyncapi.json", None)
    assert document.status_code == 200
    assert document.json() == json.loads(json.dumps(asyncapi()))
    schema = await call(app, "GET", "/api/v1/events/schemas/workload.failed.v1", None)
    assert schema.status_code == 200
    body = schema.json()
    assert body["$schema"].startswith("https://json-schema.org/")
    assert {"workloadId", "run", "reason"} <= set(body["$defs"]["WorkloadFailed"]["properties"])
    as_sent = await call(
        app, "GET", "/api/v1/events/schemas/io.trainplate.workload.failed.v1", None
    )
    assert as_sent.status_code == 200
    assert as_sent.json() == body  # named as `ce-type` says it, too
    missing = await call(app, "GET", "/api/v1/events/schemas/template.forged.v1", None)
    assert missing.status_code == 404
