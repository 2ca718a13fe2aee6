"""A read model that meets an event it cannot apply stops there loudly, never silently and never
skipping it: readiness, the metrics and `trainplate projections status` all name it, and an
operator can move it on. The event is an environment whose image holds a NUL character
(accepted by the log's `json`, refused by the read model's `jsonb`), appended past the HTTP
edge, as an older release would have let it in."""

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from uuid import UUID, uuid4

import asyncpg
import pytest
from litestar import Litestar

from domain.events import EnvironmentCreated
from domain.specs import EnvironmentSpec
from domain.values import AssetMeta
from infra.followers.faults import FollowerStuckError
from infra.followers.global_log import load_checkpoint
from infra.followers.projection_runner import ProjectionRunner
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import ProjectorSettings
from projections import ALL, asset_catalogue
from services.ports.event_store import Append
from tests.api.support import api_app, call
from tests.conftest import ACTOR

pytestmark = pytest.mark.integration

CATALOGUE = next(p for p in ALL if p.name == asset_catalogue.NAME)
SETTINGS = ProjectorSettings(batch_size=50, poll_interval_s=0.05)


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Litestar]:
    async with api_app(clean_pool, nats_url) as app:
        yield app


async def environment(pool: asyncpg.Pool, name: str, image: str) -> UUID:
    asset_id = uuid4()
    event = EnvironmentCreated(
        asset_id=asset_id,
        meta=AssetMeta(name=name, scope="tenant"),
        spec=EnvironmentSpec(image=image),
    )
    store = PostgresStreams(pool, DOMAIN_CODEC)
    await store.append(Append(asset_id, [event], expected_version=0, metadata=ACTOR))
    return asset_id


async def catch_up(pool: asyncpg.Pool, runner: ProjectionRunner) -> None:
    async with pool.acquire() as conn:
        cursor = await load_checkpoint(conn, runner.checkpoint_name)
        while True:
            cursor, read = await runner.step(conn, cursor)
            if read == 0:
                return


def cli(postgres_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRAINPLATE_DATABASE_URL": postgres_url, "TRAINPLATE_LOG_LEVEL": "ERROR"}
    return subprocess.run(
        [sys.executable, "-m", "infra.cli", "projections", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_a_read_model_stuck_on_an_event_says_where_and_can_be_moved_on(
    app: Litestar, clean_pool: asyncpg.Pool, postgres_url: str
) -> None:
    before = await environment(clean_pool, "before", "python:3.12")
    poisoned = await environment(clean_pool, "poisoned", "img\x00x")
    after = await environment(clean_pool, "after", "python:3.13")
    runner = ProjectionRunner(clean_pool, CATALOGUE, DOMAIN_CODEC, SETTINGS)

    with pytest.raises(FollowerStuckError) as stuck:
        await catch_up(clean_pool, runner)
    fault = stuck.value.fault
    assert (fault.name, fault.event_type) == (
        "projection:asset_catalogue",
        "environment.created.v1",
    )
    assert "UntranslatableCharacter" in fault.reason
    async with clean_pool.acquire() as conn:
        # What came before the culprit is applied; the culprit and what follows are not.
        assert await asset_catalogue.get_asset(conn, "environment", before) is not None
        assert await asset_catalogue.get_asset(conn, "environment", after) is None
        position = await conn.fetchval(
            "SELECT global_position FROM events WHERE stream_id = $1", poisoned
        )
    assert fault.cursor.position == position

    # A second try (the runner retries) meets the same event: still stuck, nothing skipped.
    with pytest.raises(FollowerStuckError):
        await catch_up(clean_pool, runner)

    ready = await call(app, "GET", "/readyz", None)
    assert ready.status_code == 503
    check = ready.json()["checks"]["followers"]
    assert check["ready"] is False
    assert "projection:asset_catalogue" in check["detail"]
    assert f"position {position}" in check["detail"]
    assert str(fault.event_id) in check["detail"]
    scraped = (await call(app, "GET", "/metrics", None)).text
    assert 'trainplate_follower_stuck{follower="asset_catalogue"} 1.0' in scraped
    assert 'trainplate_follower_stuck{follower="template_catalogue"} 0.0' in scraped
    status = cli(postgres_url, "status")
    assert status.returncode == 0, status.stderr
    assert f"STUCK asset_catalogue at position {position} (event {fault.event_id}" in status.stdout

    skipped = cli(postgres_url, "skip", "asset_catalogue")
    assert skipped.returncode == 0, skipped.stderr
    assert f"past position {position}" in skipped.stdout
    await catch_up(clean_pool, runner)
    async with clean_pool.acquire() as conn:
        assert await asset_catalogue.get_asset(conn, "environment", after) is not None
        assert await asset_catalogue.get_asset(conn, "environment", poisoned) is None
    assert (await call(app, "GET", "/readyz", None)).status_code == 200
    scraped = (await call(app, "GET", "/metrics", None)).text
    assert 'trainplate_follower_stuck{follower="asset_catalogue"} 0.0' in scraped
    nothing = cli(postgres_url, "skip", "asset_catalogue")
    assert nothing.returncode == 1
    assert "is not stuck" in nothing.stderr


async def test_a_fault_clears_itself_once_the_runner_gets_past_it(
    clean_pool: asyncpg.Pool,
) -> None:
    """As after a fixed projection is deployed: the next commit past the event clears it."""
    await environment(clean_pool, "fine", "python:3.12")
    async with clean_pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO follower_faults (name, transaction_id, global_position, event_id,"
            " event_type, reason) VALUES ('projection:asset_catalogue', '1', 1, $1, 't', 'r')",
            uuid4(),
        )
    await catch_up(clean_pool, ProjectionRunner(clean_pool, CATALOGUE, DOMAIN_CODEC, SETTINGS))
    assert await clean_pool.fetchval("SELECT count(*) FROM follower_faults") == 0
