"""Read-your-writes: a write answers with its log position; a read that sends it back waits for
the read models, or says it is stale."""

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
from litestar import Litestar

from infra.bootstrap import Resources, connect_nats
from infra.followers.projection_runner import ProjectionRunner
from infra.http.app import create_app
from infra.serialization import DOMAIN_CODEC
from infra.settings import NatsSettings, ProjectorSettings, Settings
from projections import ALL
from tests.api.support import AUTH, CREDENTIALS, call

pytestmark = [pytest.mark.api, pytest.mark.integration]

ENVIRONMENTS = "/api/v1/asset/environment"
BODY = {"meta": {"name": "pt", "scope": "tenant"}, "spec": {"image": "pt:2"}}


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Litestar]:
    """The app with a short wait, so a stale answer comes quickly."""
    nc = await connect_nats(NatsSettings(url=nats_url), name="ryw-tests")
    try:
        settings = Settings(auth=AUTH, credentials=CREDENTIALS, consistency_wait_s=0.3)
        yield create_app(settings, resources=Resources(clean_pool, nc, nc.jetstream()))
    finally:
        await nc.close()


async def test_a_read_waits_for_the_write_it_names(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    created = await call(app, "POST", ENVIRONMENTS, admin, json=BODY)
    position = created.headers["x-trainplate-position"]
    assert int(position) > 0
    wanted = {"x-trainplate-min-position": position}

    stale = await call(app, "GET", ENVIRONMENTS, admin, headers=wanted)
    assert stale.headers.get("x-trainplate-stale") == "true"  # no projector runs yet
    assert stale.json()["entries"] == []
    assert "x-trainplate-position" not in stale.headers  # a read appends nothing

    stop = asyncio.Event()
    settings = ProjectorSettings(batch_size=100, poll_interval_s=0.05)
    runners = [ProjectionRunner(clean_pool, p, DOMAIN_CODEC, settings) for p in ALL]
    tasks = [asyncio.create_task(r.run(stop)) for r in runners]
    try:
        fresh = await call(app, "GET", ENVIRONMENTS, admin, headers=wanted)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    assert "x-trainplate-stale" not in fresh.headers
    assert [e["meta"]["name"] for e in fresh.json()["entries"]] == ["pt"]
