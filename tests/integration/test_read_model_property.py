"""Property: for random histories of asset and template commands, the read models maintained
batch by batch between the commands (and the fan-out with them) equal a rebuild from zero."""

import asyncio
import contextlib
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.commands import (
    CreateAsset,
    CreateTemplate,
    DeleteAsset,
    DeleteTemplate,
    UpdateAsset,
    UpdateTemplate,
)
from domain.errors import TrainplateError
from domain.events import EventMetadata
from domain.specs import ComputeSpec, EnvironmentSpec
from domain.template_specs import DistributedTemplateSpec, TemplateAssets
from domain.templates import TemplateBody
from domain.values import ScopeRef
from infra.bootstrap import create_pool
from infra.followers.global_log import load_checkpoint
from infra.followers.log_runner import LogRunner
from infra.postgres.migrate import apply_migrations
from infra.postgres.names import name_lookups
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import DatabaseSettings
from services import assets, templates
from tests.runners import every_runner

pytestmark = pytest.mark.integration

SYSTEM = EventMetadata(actor_subject="property", actor_kind="system")
READ_MODELS = (
    "org_units",
    "asset_catalogue",
    "template_catalogue",
    "template_asset_states",
    "access_rules",
)

# A command: (verb, slot, value). Slots name assets and templates across the history.
commands = st.lists(
    st.one_of(
        st.tuples(st.just("env"), st.integers(0, 2), st.integers(0, 9)),
        st.tuples(st.just("compute"), st.integers(0, 1), st.integers(1, 8)),
        st.tuples(st.just("update_env"), st.integers(0, 2), st.integers(0, 9)),
        st.tuples(st.just("delete_env"), st.integers(0, 2), st.just(0)),
        st.tuples(st.just("template"), st.integers(0, 3), st.integers(0, 2)),
        st.tuples(st.just("update_template"), st.integers(0, 3), st.integers(1, 6)),
        st.tuples(st.just("delete_template"), st.integers(0, 3), st.just(0)),
    ),
    min_size=1,
    max_size=25,
)


class History:
    """Runs commands through the use cases, remembering which ids the slots hold."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.streams = PostgresStreams(pool, DOMAIN_CODEC)
        self.names = name_lookups(pool)
        self.envs: dict[int, UUID] = {}
        self.computes: dict[int, UUID] = {}
        self.templates: dict[int, UUID] = {}

    async def run(self, verb: str, slot: int, value: int) -> None:
        # A refused command writes nothing; the property covers what was written.
        with contextlib.suppress(TrainplateError):
            await self._run(verb, slot, value)

    async def _run(self, verb: str, slot: int, value: int) -> None:
        s = self.streams
        match verb:
            case "env":
                command = CreateAsset(
                    asset_id=uuid4(), scope=ScopeRef("tenant"), name=f"env-{slot}",
                    spec=EnvironmentSpec(image=f"pt:{value}"), metadata=SYSTEM,
                )  # fmt: skip
                self.envs[slot] = (
                    await assets.create_asset(command, streams=s, names=self.names)
                ).state.id
            case "compute":
                command = CreateAsset(
                    asset_id=uuid4(), scope=ScopeRef("tenant"), name=f"gpu-{slot}",
                    spec=ComputeSpec(gpu_devices_request=value), metadata=SYSTEM,
                )  # fmt: skip
                self.computes[slot] = (
                    await assets.create_asset(command, streams=s, names=self.names)
                ).state.id
            case "update_env" if slot in self.envs:
                update = UpdateAsset(
                    asset_id=self.envs[slot], name=f"env-{slot}",
                    spec=EnvironmentSpec(image=f"pt:{value}-u"), metadata=SYSTEM,
                )  # fmt: skip
                await assets.update_asset(update, streams=s, names=self.names)
            case "delete_env" if slot in self.envs:
                delete = DeleteAsset(asset_id=self.envs[slot], kind="environment", metadata=SYSTEM)
                await assets.delete_asset(delete, streams=s)
            case "template":
                links = TemplateAssets(
                    environment=self.envs.get(value), compute=self.computes.get(value % 2)
                )
                body = TemplateBody(
                    spec=DistributedTemplateSpec(distributed_framework="PyTorch", num_workers=2),
                    assets=links,
                )
                create = CreateTemplate(
                    template_id=uuid4(), scope=ScopeRef("tenant"),
                    name=f"t-{slot}", body=body, metadata=SYSTEM,
                )  # fmt: skip
                view = await templates.create_template(create, streams=s, names=self.names)
                self.templates[slot] = view.template.id
            case "update_template" if slot in self.templates:
                body = TemplateBody(
                    spec=DistributedTemplateSpec(
                        distributed_framework="PyTorch", num_workers=value, image="own:1"
                    )
                )
                change = UpdateTemplate(
                    template_id=self.templates[slot], name=f"t-{slot}", body=body, metadata=SYSTEM
                )
                await templates.update_template(change, streams=s, names=self.names)
            case "delete_template" if slot in self.templates:
                drop = DeleteTemplate(template_id=self.templates[slot], metadata=SYSTEM)
                await templates.delete_template(drop, streams=s)
            case _:
                pass


def runners(pool: asyncpg.Pool, batch_size: int) -> list[LogRunner]:
    return every_runner(pool, batch_size)


async def step_all(pool: asyncpg.Pool, batch_size: int, *, to_end: bool) -> None:
    """One batch of each runner (or all of them, to the end of the log)."""
    async with pool.acquire() as conn:
        for runner in runners(pool, batch_size):
            cursor = await load_checkpoint(conn, runner.checkpoint_name)
            while True:
                cursor, read = await runner.step(conn, cursor)
                if not read or not to_end:
                    break


async def snapshot(pool: asyncpg.Pool) -> dict[str, Any]:
    found = {}
    for table in READ_MODELS:
        rows = await pool.fetch(f"SELECT to_jsonb(t) AS r FROM {table} t")
        found[table] = sorted(str(row["r"]) for row in rows)
    return found


async def scenario(url: str, history: list[tuple[str, int, int]], batch_size: int) -> None:
    pool = await create_pool(DatabaseSettings(url=url, pool_max=4), application_name="property")
    try:
        async with pool.acquire() as conn:
            await apply_migrations(conn)
        tables = await pool.fetch(
            "SELECT quote_ident(tablename) AS name FROM pg_tables"
            " WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'"
        )
        await pool.execute(f"TRUNCATE {', '.join(t['name'] for t in tables)} RESTART IDENTITY")
        world = History(pool)
        for verb, slot, value in history:
            await world.run(verb, slot, value)
            await step_all(pool, batch_size, to_end=False)  # the read side trails the writes
        await step_all(pool, batch_size, to_end=True)
        incremental = await snapshot(pool)
        # Rebuild from zero: the fan-out's own writes are already in the log, so replaying it
        # must add nothing, and every read model must come out the same.
        events = await pool.fetchval("SELECT count(*) FROM events")
        derived = ("consumer_checkpoints", "fanout_asset_versions", *READ_MODELS)
        await pool.execute(f"TRUNCATE {', '.join(derived)}")
        await step_all(pool, 500, to_end=True)
        assert await pool.fetchval("SELECT count(*) FROM events") == events
        assert await snapshot(pool) == incremental
    finally:
        await pool.close()


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=commands, batch_size=st.integers(1, 7))
def test_incremental_read_models_equal_a_rebuild(
    postgres_url: str, history: list[tuple[str, int, int]], batch_size: int
) -> None:
    asyncio.run(scenario(postgres_url, history, batch_size))
