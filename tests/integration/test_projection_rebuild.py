"""`trainplate projections rebuild`: a read model rebuilt from position zero into fresh tables and
swapped in while the live runner keeps applying, writers keep writing and readers keep reading
the old tables; afterwards it holds every event exactly as a rebuild from zero would."""

import asyncio
import os
import sys
from uuid import uuid4

import asyncpg
import msgspec
import pytest

from domain.events import EventMetadata, TemplateCreated
from domain.template_specs import DistributedTemplateSpec
from domain.values import TemplateMeta
from infra.followers.global_log import load_checkpoint
from infra.followers.projection_runner import ProjectionRunner
from infra.followers.rebuild import rebuild
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import ProjectorSettings
from projections import ALL, template_catalogue, template_pages
from projections.template_pages import Asked, keys_query
from services.ports.event_store import Append
from tests.integration.test_projector import CATALOGUE, catch_up, create, rows, runner

pytestmark = [pytest.mark.integration, pytest.mark.slow]

[TEMPLATES] = [p for p in ALL if p.name == template_catalogue.NAME]
SPEC = msgspec.convert(
    {"distributedFramework": "PyTorch", "numWorkers": 2}, DistributedTemplateSpec
)
ADMIN = EventMetadata(actor_subject="admin", actor_kind="user")


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


async def test_a_row_decoded_before_a_rebuild_is_read_as_the_rebuild_left_it(
    clean_pool: asyncpg.Pool, postgres_url: str
) -> None:
    template_id = uuid4()
    created = TemplateCreated(
        template_id=template_id, meta=TemplateMeta(name="right", scope="tenant"), spec=SPEC
    )
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    await store.append(Append(template_id, [created], expected_version=0, metadata=ADMIN))
    live = ProjectionRunner(clean_pool, TEMPLATES, DOMAIN_CODEC, ProjectorSettings())
    await catch_up(clean_pool, live)
    # Damaged in place, its version unchanged; a reader decodes it so.
    await clean_pool.execute(
        "UPDATE template_catalogue SET meta = jsonb_set(meta, '{name}', '\"wrong\"')"
    )
    async with clean_pool.acquire() as conn:
        before = await template_catalogue.by_ids(conn, [template_id])
    assert before[template_id].template.meta.name == "wrong"

    await rebuild(postgres_url, TEMPLATES, DOMAIN_CODEC, ProjectorSettings())

    async with clean_pool.acquire() as conn:
        after = await template_catalogue.by_ids(conn, [template_id])
        [page] = await conn.fetch(keys_query(None, [], Asked(None, None, False, 0, 50)).sql)
    assert after[template_id].template.meta.name == "right"
    assert template_pages.chosen_by([page], 50)[0][template_id] is after[template_id]
