"""The projection runner: read models follow the log exactly once, survive replays and rebuilds."""

import asyncio
import os
import subprocess
import sys
from uuid import UUID, uuid4

import asyncpg
import pytest

from domain.commands import CreateApplication
from domain.events import EventMetadata, RecordedEvent
from domain.values import TENANT_ADMIN, Grant
from infra.followers.faults import FollowerStuckError
from infra.followers.global_log import START, load_checkpoint
from infra.followers.lag import status
from infra.followers.metrics import ProjectorMetrics
from infra.followers.projection_runner import ProjectionRunner
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.streams import PostgresStreams
from infra.postgres.units_of_work import SecretKeys
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from infra.settings import AuthSettings, ProjectorSettings
from projections import ALL, Projection, application_catalogue
from projections.executor import Executor
from services.applications import create_application
from services.ports.event_store import Append
from tests.conftest import ACTOR
from tests.sample_events import CODEC, CounterOpened

pytestmark = pytest.mark.integration

AUTH = AuthSettings(hash_time_cost=1, hash_memory_kib=8192)
ADMIN = EventMetadata(actor_subject="admin-app", actor_kind="system")
[CATALOGUE] = [p for p in ALL if p.name == application_catalogue.NAME]


def runner(pool: asyncpg.Pool, batch_size: int = 500) -> ProjectionRunner:
    settings = ProjectorSettings(batch_size=batch_size, poll_interval_s=0.05)
    return ProjectionRunner(pool, CATALOGUE, DOMAIN_CODEC, settings)


async def create(pool: asyncpg.Pool, name: str, grants: tuple[Grant, ...] = ()) -> UUID:
    keys = SecretKeys(hasher=SecretHasher(AUTH))
    app_store = PostgresStreams(pool, DOMAIN_CODEC, keys=keys)
    registry = PostgresApplicationRegistry(app_store, pool, keys)
    command = CreateApplication(application_id=uuid4(), name=name, grants=grants, metadata=ADMIN)
    await create_application(
        command, secret=f"secret-of-{name}", store=app_store, registry=registry
    )
    return command.application_id


async def catch_up(pool: asyncpg.Pool, projection: ProjectionRunner) -> int:
    """Run the projection to the end of the log; how many events it read."""
    async with pool.acquire() as conn:
        cursor = await load_checkpoint(conn, projection.checkpoint_name)
        total = 0
        while True:
            cursor, read = await projection.step(conn, cursor)
            total += read
            if read == 0:
                return total


async def forget_checkpoint(pool: asyncpg.Pool, projection: ProjectionRunner) -> None:
    await pool.execute(
        "DELETE FROM consumer_checkpoints WHERE name = $1", projection.checkpoint_name
    )


async def rows(pool: asyncpg.Pool) -> list[application_catalogue.ApplicationSummary]:
    async with pool.acquire() as conn:
        return await application_catalogue.list_applications(conn)


async def test_the_catalogue_lists_live_applications(catalogue: asyncpg.Pool) -> None:
    await create(catalogue, "alpha", (TENANT_ADMIN,))
    await create(catalogue, "beta")
    assert await catch_up(catalogue, runner(catalogue, batch_size=1)) == 2
    listed = await rows(catalogue)
    assert [(a.name, a.client_id, a.grants, a.created_by) for a in listed] == [
        ("alpha", "alpha", (TENANT_ADMIN,), "admin-app"),
        ("beta", "beta", (), "admin-app"),
    ]
    async with catalogue.acquire() as conn:
        assert (
            await application_catalogue.get_application(conn, listed[0].application_id)
            == (listed[0])
        )
        assert await application_catalogue.get_application(conn, uuid4()) is None


async def test_replaying_from_zero_changes_nothing(catalogue: asyncpg.Pool) -> None:
    """A crash before the checkpoint moved means replaying applied events: apply is idempotent."""
    for name in ("alpha", "beta", "gamma"):
        await create(catalogue, name)
    projection = runner(catalogue)
    await catch_up(catalogue, projection)
    before = await rows(catalogue)
    await forget_checkpoint(catalogue, projection)
    assert await catch_up(catalogue, projection) == 3
    assert await rows(catalogue) == before


async def test_a_rebuild_from_zero_equals_the_incremental_model(catalogue: asyncpg.Pool) -> None:
    projection = runner(catalogue, batch_size=2)
    for index in range(7):
        await create(catalogue, f"app-{index}")
        if index % 3 == 0:
            await catch_up(catalogue, projection)  # incrementally, between writes
    await catch_up(catalogue, projection)
    incremental = await rows(catalogue)
    await catalogue.execute("TRUNCATE application_catalogue")
    await forget_checkpoint(catalogue, projection)
    await catch_up(catalogue, runner(catalogue, batch_size=500))
    assert await rows(catalogue) == incremental
    assert len(incremental) == 7


async def test_unknown_event_types_are_skipped_not_fatal(catalogue: asyncpg.Pool) -> None:
    foreign = PostgresStreams(catalogue, CODEC)  # a catalogue this release does not know
    await foreign.append(
        Append(uuid4(), [CounterOpened(name="x")], expected_version=0, metadata=ACTOR)
    )
    await create(catalogue, "alpha")
    projection = runner(catalogue)
    assert await catch_up(catalogue, projection) == 2
    assert [a.name for a in await rows(catalogue)] == ["alpha"]
    async with catalogue.acquire() as conn:
        assert await load_checkpoint(conn, projection.checkpoint_name) != START


async def test_a_projection_is_given_only_its_streams_events_and_passes_the_others(
    catalogue: asyncpg.Pool,
) -> None:
    given: list[RecordedEvent] = []

    async def apply(conn: Executor, recorded: RecordedEvent) -> None:
        given.append(recorded)

    environments_only = Projection(
        "environments_only", apply, (), streams=frozenset({"environment"})
    )
    settings = ProjectorSettings(batch_size=500, poll_interval_s=0.05)
    projection = ProjectionRunner(catalogue, environments_only, DOMAIN_CODEC, settings)
    await create(catalogue, "alpha")
    assert await catch_up(catalogue, projection) == 1
    assert given == []
    async with catalogue.acquire() as conn:
        assert await load_checkpoint(conn, projection.checkpoint_name) != START


async def test_a_running_projection_follows_new_events_within_a_moment(
    catalogue: asyncpg.Pool,
) -> None:
    projection = runner(catalogue)
    stop = asyncio.Event()
    task = asyncio.create_task(projection.run(stop))
    try:
        await create(catalogue, "late-comer")
        for _ in range(250):  # up to 5 s
            if await rows(catalogue):
                break
            await asyncio.sleep(0.02)
        assert [a.name for a in await rows(catalogue)] == ["late-comer"]
    finally:
        stop.set()
        await task


async def test_checkpoint_and_rows_commit_together(catalogue: asyncpg.Pool) -> None:
    """If applying a batch fails, neither its rows nor the checkpoint move: the runner is stuck
    on the event, says so, and moves on once it can apply it."""
    await create(catalogue, "alpha")
    projection = runner(catalogue)
    async with catalogue.acquire() as conn:
        await conn.execute(
            "ALTER TABLE application_catalogue ADD CONSTRAINT no_alpha CHECK (name <> 'alpha')"
        )
    try:
        with pytest.raises(FollowerStuckError) as stuck:
            await catch_up(catalogue, projection)
        assert isinstance(stuck.value.__cause__, asyncpg.CheckViolationError)
        async with catalogue.acquire() as conn:
            assert await load_checkpoint(conn, projection.checkpoint_name) == START
        assert await rows(catalogue) == []
    finally:
        await catalogue.execute("ALTER TABLE application_catalogue DROP CONSTRAINT no_alpha")
    await catch_up(catalogue, projection)
    assert [a.name for a in await rows(catalogue)] == ["alpha"]
    assert await catalogue.fetchval("SELECT count(*) FROM follower_faults") == 0


async def test_status_says_how_far_behind_the_log_a_projection_is(catalogue: asyncpg.Pool) -> None:
    await create(catalogue, "alpha")
    await create(catalogue, "beta")
    async with catalogue.acquire() as conn:
        [before] = await status(conn, [application_catalogue.NAME])
        assert (before.behind, before.position) == (2, 0)
        assert before.lag_s >= 0
        await catch_up(catalogue, runner(catalogue))
        [after] = await status(conn, [application_catalogue.NAME])
    assert (after.behind, after.lag_s) == (0, 0.0)
    assert after.position > 0


def test_the_status_command_prints_every_projection(postgres_url: str) -> None:
    env = {**os.environ, "TRAINPLATE_DATABASE_URL": postgres_url, "TRAINPLATE_LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [sys.executable, "-m", "infra.cli", "projections", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert application_catalogue.NAME in done.stdout


async def test_a_runner_counts_what_it_applied_and_times_its_batches(
    catalogue: asyncpg.Pool,
) -> None:
    for name in ("alpha", "beta", "gamma"):
        await create(catalogue, name)
    metrics = ProjectorMetrics()
    settings = ProjectorSettings(batch_size=2, poll_interval_s=0.05)
    projection = ProjectionRunner(catalogue, CATALOGUE, DOMAIN_CODEC, settings, metrics=metrics)
    assert await catch_up(catalogue, projection) == 3
    labels = {"projection": application_catalogue.NAME}
    sample = metrics.registry.get_sample_value
    assert sample("trainplate_projection_events_applied_total", labels) == 3
    assert sample("trainplate_projection_batch_seconds_count", labels) == 2  # batches of 2 and 1
    assert (sample("trainplate_projection_batch_seconds_sum", labels) or 0) > 0
