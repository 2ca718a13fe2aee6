"""A read model whose projection's version moved on is rebuilt by the projector at start-up,
blue/green: its GET and list keep answering from the old tables, with all their rows, until
the new ones are swapped in, and the new version is recorded with the swap."""

import asyncio
import dataclasses
import time

import asyncpg
import msgspec
import pytest

from domain.events import ApplicationCreated, RecordedEvent
from infra.followers import read_model_versions
from infra.followers.global_log import load_checkpoint
from infra.followers.rebuild import rebuild, rebuild_if_outdated
from infra.serialization import DOMAIN_CODEC
from infra.settings import DatabaseSettings, NatsSettings, ProjectorSettings, Settings
from infra.workers import projector
from projections import application_catalogue
from projections.application_catalogue import ApplicationSummary
from projections.executor import Executor
from tests.integration.test_projector import CATALOGUE, catch_up, create, rows, runner

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SETTINGS = ProjectorSettings(batch_size=20, poll_interval_s=0.05)


async def _apply_v2(conn: Executor, recorded: RecordedEvent) -> None:
    """Version 2 of the catalogue: every row says so, and each creation takes a while, so the
    rebuild lasts long enough to be read through."""
    await application_catalogue.apply(conn, recorded)
    if isinstance(recorded.event, ApplicationCreated):
        await asyncio.sleep(0.01)
        await conn.execute(
            "UPDATE application_catalogue SET created_by = 'v2:' || created_by"
            " WHERE application_id = $1 AND created_by NOT LIKE 'v2:%'",
            recorded.event.application_id,
        )


V2 = dataclasses.replace(CATALOGUE, apply=_apply_v2, version=2)


def _as_v2(app: ApplicationSummary) -> ApplicationSummary:
    return msgspec.structs.replace(app, created_by=f"v2:{app.created_by}")


async def test_the_projector_rebuilds_a_bumped_read_model_while_it_keeps_answering(
    catalogue: asyncpg.Pool, postgres_url: str, nats_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(100):
        await create(catalogue, f"app-{i:03}")
    await catch_up(catalogue, runner(catalogue))
    before = await rows(catalogue)
    assert len(before) == 100
    after = [_as_v2(app) for app in before]
    probe = before[37]
    monkeypatch.setattr(projector, "freeze_start_up", lambda: None)  # not this test process's
    settings = Settings(
        database=DatabaseSettings(url=postgres_url),
        nats=NatsSettings(url=nats_url),
        projector=SETTINGS,
    )
    stop = asyncio.Event()
    running = asyncio.create_task(projector.run(settings, stop, projections=(V2,)))
    seen: list[tuple[list[ApplicationSummary], ApplicationSummary | None]] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            # One transaction: a swap between the two reads would show them mixed.
            async with catalogue.acquire() as conn, conn.transaction(isolation="repeatable_read"):
                listed = await application_catalogue.list_applications(conn)
                got = await application_catalogue.get_application(conn, probe.application_id)
                seen.append((listed, got))
                if await read_model_versions.recorded(conn, V2.name) == 2:
                    break
            await asyncio.sleep(0.005)
    finally:
        stop.set()
        await running

    old = [i for i, (listed, got) in enumerate(seen) if listed == before and got == probe]
    new = [i for i, (listed, got) in enumerate(seen) if listed == after and got == after[37]]
    assert len(old) + len(new) == len(seen)  # never empty, never half built, never mixed
    assert old == list(range(len(old)))  # the old tables answered until the swap, then the new
    assert len(old) >= 10  # reads went on while the rebuild ran
    assert await rows(catalogue) == after
    async with catalogue.acquire() as conn:
        assert await read_model_versions.recorded(conn, V2.name) == 2
        assert await load_checkpoint(conn, "rebuild:application_catalogue") == (0, 0)
        leftovers = await conn.fetchval(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'rebuild_%'"
        )
    assert leftovers == 0


async def test_a_read_model_at_its_version_is_left_as_it_is(
    catalogue: asyncpg.Pool, postgres_url: str
) -> None:
    await create(catalogue, "alpha")
    await catch_up(catalogue, runner(catalogue))
    # No version recorded: the read model predates versions, it is at version 1.
    assert await rebuild_if_outdated(postgres_url, CATALOGUE, DOMAIN_CODEC, SETTINGS) is None
    report = await rebuild_if_outdated(postgres_url, V2, DOMAIN_CODEC, SETTINGS)
    assert report is not None
    assert report.events == 1
    assert [app.created_by for app in await rows(catalogue)] == ["v2:admin-app"]
    assert await rebuild_if_outdated(postgres_url, V2, DOMAIN_CODEC, SETTINGS) is None
    # Back to version 1 is a rebuild too (a release rolled back).
    assert await rebuild_if_outdated(postgres_url, CATALOGUE, DOMAIN_CODEC, SETTINGS) is not None
    assert [app.created_by for app in await rows(catalogue)] == ["admin-app"]


async def test_a_read_model_not_built_yet_takes_the_declared_version_at_once(
    catalogue: asyncpg.Pool, postgres_url: str
) -> None:
    await create(catalogue, "alpha")  # in the log, but no runner has started on it
    assert await rebuild_if_outdated(postgres_url, V2, DOMAIN_CODEC, SETTINGS) is None
    async with catalogue.acquire() as conn:
        assert await read_model_versions.recorded(conn, V2.name) == 2


async def test_a_rebuild_by_hand_records_the_version_it_was_made_by(
    catalogue: asyncpg.Pool, postgres_url: str
) -> None:
    await create(catalogue, "alpha")
    await catch_up(catalogue, runner(catalogue))
    await rebuild(postgres_url, V2, DOMAIN_CODEC, SETTINGS)
    async with catalogue.acquire() as conn:
        assert await read_model_versions.recorded(conn, V2.name) == 2


async def test_two_rebuilds_of_one_read_model_take_turns(
    catalogue: asyncpg.Pool, postgres_url: str
) -> None:
    for i in range(20):
        await create(catalogue, f"app-{i:02}")
    await catch_up(catalogue, runner(catalogue))
    reports = await asyncio.gather(
        rebuild_if_outdated(postgres_url, V2, DOMAIN_CODEC, SETTINGS),
        rebuild_if_outdated(postgres_url, V2, DOMAIN_CODEC, SETTINGS),
    )
    assert sorted(r is None for r in reports) == [False, True]  # the second found it done
    assert len(await rows(catalogue)) == 20
