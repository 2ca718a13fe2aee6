"""`trainplate projections rebuild`: a read model rebuilt from position zero into fresh tables and
swapped in while the live runner keeps applying, writers keep writing and readers keep reading
the old tables; afterwards it holds every event exactly as a rebuild from zero would."""

import asyncio
import os
import sys

import asyncpg
import pytest

from infra.followers.global_log import load_checkpoint
from infra.followers.rebuild import rebuild
from infra.serialization import DOMAIN_CODEC
from infra.settings import ProjectorSettings
from tests.integration.test_projector import CATALOGUE, catch_up, create, rows, runner

pytestmark = [pytest.mark.integration, pytest.mark.slow]


async def test_a_rebuild_swaps_in_while_writers_readers_and_the_live_runner_go_on(
    catalogue: asyncpg.Pool, postgres_url: str
) -> None:
    for i in range(200):
        await create(catalogue, f"before-{i:03}")
    await catch_up(catalogue, runner(catalogue))
    # A bug once damaged the live read model: a row lost, another renamed.
    await catalogue.execute("DELETE FROM application_catalogue WHERE name = 'before-007'")
    await catalogue.execute(
        "UPDATE application_catalogue SET name = 'wrong' WHERE name = 'before-008'"
    )
    stop = asyncio.Event()
    live = runner(catalogue)
    seen: list[int] = []

    async def read() -> None:
        while not stop.is_set():
            async with catalogue.acquire() as conn:
                seen.append(await conn.fetchval("SELECT count(*) FROM application_catalogue"))
            await asyncio.sleep(0.005)

    async def write() -> None:
        for i in range(60):
            await create(catalogue, f"during-{i:03}")

    running = asyncio.create_task(live.run(stop))
    reading = asyncio.create_task(read())
    writing = asyncio.create_task(write())
    settings = ProjectorSettings(batch_size=50)
    report = await rebuild(postgres_url, CATALOGUE, DOMAIN_CODEC, settings)
    await writing
    await create(catalogue, "after")
    await asyncio.sleep(0.5)  # the live runner picks the last one up
    stop.set()
    await asyncio.gather(running, reading)

    names = sorted(app.name for app in await rows(catalogue))
    expected = sorted(
        [f"before-{i:03}" for i in range(200)] + [f"during-{i:03}" for i in range(60)] + ["after"]
    )
    assert names == expected  # the damage is gone, nothing is missing or doubled
    assert report.events >= 200
    assert min(seen) >= 199  # readers never saw an empty or half-built table
    async with catalogue.acquire() as conn:
        checkpoint = await load_checkpoint(conn, live.checkpoint_name)
        assert checkpoint.position >= report.position
        leftovers = await conn.fetchval(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'rebuild_%'"
        )
    assert leftovers == 0


async def test_the_rebuild_command_names_what_it_did(
    catalogue: asyncpg.Pool, postgres_url: str
) -> None:
    env = {**os.environ, "TRAINPLATE_DATABASE_URL": postgres_url, "TRAINPLATE_LOG_LEVEL": "WARNING"}

    async def run(name: str) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "infra.cli", "projections", "rebuild", name,
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode is not None
        return process.returncode, out.decode(), err.decode()

    code, out, err = await run("template_catalogue")
    assert code == 0, err
    assert "template_catalogue: rebuilt from" in out
    async with catalogue.acquire() as conn:  # its statistics made again, as the migration named
        kept = await conn.fetch(
            "SELECT n.nspname, s.stxname FROM pg_statistic_ext s"
            " JOIN pg_namespace n ON n.oid = s.stxnamespace"
            " WHERE s.stxrelid = 'public.template_catalogue'::regclass"
        )
    assert [tuple(row) for row in kept] == [("public", "template_catalogue_scope_key")]
    code, _, err = await run("nothing")
    assert code == 2
    assert "workload_catalogue" in err
    code, _, err = await run("linked_asset_fanout")  # a process manager: its effects are events
    assert code == 2
    assert "linked_asset_fanout" not in err
