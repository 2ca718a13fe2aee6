"""A PostgreSQL crash while a read model applies the log (its batches commit without waiting for
the WAL flush): after the restart, its rows and its checkpoint agree, and it catches up with
every event, none applied twice or skipped."""

import asyncio
from pathlib import Path
from uuid import uuid4

import asyncpg
import pytest

from domain.events import TemplateCreated
from domain.template_specs import DistributedTemplateSpec
from domain.values import TemplateMeta
from infra.bootstrap import create_pool
from infra.cli.embedded import EmbeddedPostgres
from infra.followers.log_follower import keep_following
from infra.followers.projection_runner import ProjectionRunner
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import DatabaseSettings, ProjectorSettings
from projections import ALL, template_catalogue
from services.ports.event_store import Append
from tests.conftest import ACTOR

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TEMPLATES = 3000
[CATALOGUE] = [p for p in ALL if p.name == template_catalogue.NAME]


async def create(streams: PostgresStreams, index: int) -> None:
    template_id = uuid4()
    event = TemplateCreated(
        template_id=template_id,
        meta=TemplateMeta(name=f"t{index}", scope="tenant"),
        spec=DistributedTemplateSpec(distributed_framework="PyTorch", num_workers=2),
    )
    await streams.append(Append(template_id, [event], expected_version=0, metadata=ACTOR))


async def test_a_read_model_agrees_with_the_log_after_a_database_crash(server_dir: Path) -> None:
    with EmbeddedPostgres(server_dir / "pg") as pg:
        pool = await create_pool(DatabaseSettings(url=pg.url, pool_max=6), application_name="t")
        async with pool.acquire() as conn:
            await apply_migrations(conn)
        streams = PostgresStreams(pool, DOMAIN_CODEC)
        for start in range(0, TEMPLATES, 100):
            await asyncio.gather(*(create(streams, i) for i in range(start, start + 100)))
        settings = ProjectorSettings(batch_size=50, poll_interval_s=0.05)
        runner = ProjectionRunner(pool, CATALOGUE, DOMAIN_CODEC, settings)
        stop = asyncio.Event()
        following = asyncio.create_task(keep_following(runner.run, stop, name="catalogue"))
        try:
            while await pool.fetchval("SELECT count(*) FROM template_catalogue") < TEMPLATES // 3:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
            pg.stop(mode="immediate")  # a crash: what was not flushed is lost
            await asyncio.sleep(0.5)
            pg.start()
            async with asyncio.timeout(60):  # it leads again and catches up, or the test fails
                while await _count(pool) < TEMPLATES:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
        finally:
            stop.set()
            await following
        rows = await pool.fetch("SELECT template_id, version FROM template_catalogue")
        assert len(rows) == TEMPLATES
        assert {row["version"] for row in rows} == {1}
        checkpoint = await pool.fetchrow(
            "SELECT transaction_id, global_position FROM consumer_checkpoints WHERE name = $1",
            runner.checkpoint_name,
        )
        # The log's last event in the followers' order: concurrent appends commit out of the
        # order of their positions.
        last = await pool.fetchrow(
            "SELECT transaction_id, global_position FROM events"
            " ORDER BY transaction_id DESC, global_position DESC LIMIT 1"
        )
        assert checkpoint is not None
        assert last is not None
        assert tuple(checkpoint) == tuple(last)
        await pool.close()


async def _count(pool: asyncpg.Pool) -> int:
    """The catalogue's rows; -1 while the database is not back."""
    try:
        return int(await pool.fetchval("SELECT count(*) FROM template_catalogue"))
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
        return -1
