"""Read-your-writes: a caller's read reflects its own writes and what they caused, with no
header; a read that names another caller's write waits for it; one that cannot catch up in time
answers and says it is stale."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from domain.values import TENANT_ADMIN
from infra.bootstrap import Resources, connect_nats
from infra.followers.fanout_runner import FanoutRunner
from infra.serialization import DOMAIN_CODEC
from infra.server.app import create_app
from infra.settings import NatsSettings, ProjectorSettings, Settings
from tests.api.support import (
    AUTH,
    CREDENTIALS,
    call,
    project_all,
    run_to_the_end,
    token_for,
)
from tests.runners import every_runner, read_model_runners

pytestmark = [pytest.mark.api, pytest.mark.integration]

ENVIRONMENTS = "/api/v1/asset/environment"
TEMPLATES = "/api/v1/workload-templates/distributed"
BODY = {"meta": {"name": "pt", "scope": "tenant"}, "spec": {"image": "pt:2"}}


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Litestar]:
    """The app with a short wait, so a stale answer comes within seconds (yet long enough for
    the projector and the fan-out on a busy machine: a caller's read that is not stale is
    the point of most tests here)."""
    nc = await connect_nats(NatsSettings(url=nats_url), name="ryw-tests")
    try:
        settings = Settings(auth=AUTH, credentials=CREDENTIALS, consistency_wait_s=2.0)
        yield create_app(settings, resources=Resources(clean_pool, nc, nc.jetstream()))
    finally:
        await nc.close()


@asynccontextmanager
async def projector(pool: asyncpg.Pool) -> AsyncIterator[None]:
    """The read models and the fan-out following the log, as `trainplate serve projector`."""
    stop = asyncio.Event()
    runners = every_runner(pool, batch_size=100)
    tasks = [asyncio.create_task(r.run(stop)) for r in runners]
    try:
        yield
    finally:
        stop.set()
        await asyncio.gather(*tasks)


async def test_a_caller_reads_its_own_writes_with_no_header(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    async with projector(clean_pool):
        for round_ in range(10):
            name = f"pt-{round_}"
            body = {**BODY, "meta": {**BODY["meta"], "name": name}}
            created = await call(app, "POST", ENVIRONMENTS, admin, json=body)
            assert created.status_code == 202, created.text
            path = f"{ENVIRONMENTS}/{created.json()['meta']['id']}"
            got = await call(app, "GET", path, admin)
            assert got.status_code == 200, got.text
            assert "x-trainplate-stale" not in got.headers
            listed = await call(app, "GET", ENVIRONMENTS, admin)
            assert name in [e["meta"]["name"] for e in listed.json()["entries"]]
            changed = {"meta": {"name": name}, "spec": {"image": f"pt:{round_}"}}
            assert (await call(app, "PUT", path, admin, json=changed)).status_code == 202
            assert (await call(app, "GET", path, admin)).json()["spec"]["image"] == f"pt:{round_}"
            assert (await call(app, "DELETE", path, admin)).status_code == 202
            assert (await call(app, "GET", path, admin)).status_code == 404


async def test_what_a_write_caused_downstream_is_read_too(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    async with projector(clean_pool):
        environment = await call(app, "POST", ENVIRONMENTS, admin, json=BODY)
        environment_id = environment.json()["meta"]["id"]
        template = _linking(environment_id)
        made = await call(app, "POST", TEMPLATES, admin, json=template)
        assert made.status_code == 202, made.text
        path = f"{TEMPLATES}/{made.json()['meta']['id']}"
        before = await call(app, "GET", path, admin)
        assert before.json()["combinedSpec"]["image"] == "pt:2"
        changed = {"meta": {"name": "pt"}, "spec": {"image": "pt:3"}}
        updated = await call(app, "PUT", f"{ENVIRONMENTS}/{environment_id}", admin, json=changed)
        assert updated.status_code == 202, updated.text
        after = await call(app, "GET", path, admin)
        assert "x-trainplate-stale" not in after.headers
    assert after.json()["combinedSpec"]["image"] == "pt:3"
    # the fan-out moved the template on to the asset's new version, and the read model has it
    assert after.headers["etag"] != before.headers["etag"]


async def test_a_read_never_passes_the_fan_out_s_effect_off_as_current(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """The read models have every event of the caller and the fan-out has followed the asset's
    update, but no read model has yet applied what the fan-out appended: the read must wait
    for it, or say it is stale, not answer the template as it was."""
    environment = await call(app, "POST", ENVIRONMENTS, admin, json=BODY)
    environment_id = environment.json()["meta"]["id"]
    template = _linking(environment_id)
    made = await call(app, "POST", TEMPLATES, admin, json=template)
    path = f"{TEMPLATES}/{made.json()['meta']['id']}"
    await project_all(clean_pool)
    before = await call(app, "GET", path, admin)
    changed = {"meta": {"name": "pt"}, "spec": {"image": "pt:3"}}
    assert (
        await call(app, "PUT", f"{ENVIRONMENTS}/{environment_id}", admin, json=changed)
    ).status_code == 202
    await run_to_the_end(clean_pool, read_model_runners(clean_pool))  # the update, nothing after
    fanout = FanoutRunner(clean_pool, DOMAIN_CODEC, ProjectorSettings())
    await run_to_the_end(clean_pool, [fanout])  # now the template event exists
    after = await call(app, "GET", path, admin)
    assert after.headers.get("x-trainplate-stale") == "true" or (
        after.headers["etag"] != before.headers["etag"]
    ), "the template as it was before the fan-out, answered as current"


async def test_a_read_that_cannot_catch_up_answers_and_says_it_is_stale(
    app: Litestar, admin: str
) -> None:
    created = await call(app, "POST", ENVIRONMENTS, admin, json=BODY)
    assert "x-trainplate-position" in created.headers
    counted = _stale_reads(await call(app, "GET", "/metrics", None))
    stale = await call(app, "GET", ENVIRONMENTS, admin)  # no projector runs
    assert stale.status_code == 200
    assert stale.headers.get("x-trainplate-stale") == "true"
    assert stale.json()["entries"] == []
    assert "x-trainplate-position" not in stale.headers  # a read appends nothing
    assert _stale_reads(await call(app, "GET", "/metrics", None)) == counted + 1


async def test_a_read_waits_for_another_callers_write_it_names(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    created = await call(app, "POST", ENVIRONMENTS, admin, json=BODY)
    wanted = {"x-trainplate-min-position": created.headers["x-trainplate-position"]}
    other = await token_for(clean_pool, "another-admin", (TENANT_ADMIN,))
    assert (await call(app, "GET", ENVIRONMENTS, other)).json()["entries"] == []  # nothing pending
    async with projector(clean_pool):
        fresh = await call(app, "GET", ENVIRONMENTS, other, headers=wanted)
    assert "x-trainplate-stale" not in fresh.headers
    assert [e["meta"]["name"] for e in fresh.json()["entries"]] == ["pt"]


def _linking(environment_id: str) -> dict[str, Any]:
    """A tenant template linking the environment."""
    return {
        "meta": {"name": "ddp", "scopeType": "tenant"},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        "assets": {"environment": environment_id},
    }


def _stale_reads(metrics: Any) -> float:
    line = next(
        line
        for line in metrics.text.splitlines()
        if line.startswith("trainplate_stale_reads_total")
    )
    return float(line.split()[-1])


async def test_a_read_waiting_for_a_stuck_read_model_answers_stale_at_once(
    clean_pool: asyncpg.Pool, nats_url: str, admin: str
) -> None:
    """A read model stuck on an event before the caller's write (a fault on record) will not
    get past it by waiting: the read answers at once, stale, instead of waiting out its bound
    (a minute here, which the test would never reach)."""
    nc = await connect_nats(NatsSettings(url=nats_url), name="ryw-stuck")
    try:
        settings = Settings(auth=AUTH, credentials=CREDENTIALS, consistency_wait_s=60)
        app = create_app(settings, resources=Resources(clean_pool, nc, nc.jetstream()))
        created = await call(app, "POST", ENVIRONMENTS, admin, json=BODY)
        asset_id = created.json()["meta"]["id"]
        await clean_pool.execute(
            "INSERT INTO follower_faults (name, transaction_id, global_position, event_id,"
            " event_type, reason)"
            " SELECT 'projection:asset_catalogue', transaction_id, global_position, event_id,"
            " type, 'a value its tables cannot hold' FROM events WHERE stream_id = $1",
            asset_id,
        )
        for path in (ENVIRONMENTS, f"{ENVIRONMENTS}/{asset_id}", TEMPLATES):
            stale = await asyncio.wait_for(call(app, "GET", path, admin), timeout=20)
            assert stale.headers.get("x-trainplate-stale") == "true", path
        # Once it is moved on, the same reads wait for it again, and are current.
        await clean_pool.execute("DELETE FROM follower_faults")
        await project_all(clean_pool)
        current = await call(app, "GET", f"{ENVIRONMENTS}/{asset_id}", admin)
        assert current.status_code == 200
        assert "x-trainplate-stale" not in current.headers
    finally:
        await nc.close()
