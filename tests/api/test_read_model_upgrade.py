"""An upgrade that raises a read model's version: the projector rebuilds it blue/green at
start-up, and the API's GET and list of templates keep answering, with every template, from the
old table until the new one is swapped in."""

import asyncio
import dataclasses
import time
from collections.abc import Sequence

import asyncpg
import pytest
from litestar import Litestar

from domain.events import RecordedEvent
from infra.followers import read_model_versions
from infra.settings import DatabaseSettings, NatsSettings, ProjectorSettings, Settings
from infra.workers import projector
from projections import ALL, Projection, template_catalogue
from projections.executor import Executor
from tests.api.client import client_for
from tests.api.support import project_all, sent
from tests.api.test_templates import assets, org, template

pytestmark = [pytest.mark.api, pytest.mark.integration, pytest.mark.slow]

TEMPLATES = "/api/v1/workload-templates/distributed"


async def _slow_batch(conn: Executor, events: Sequence[RecordedEvent]) -> None:
    """The same rows, made slowly: the rebuild lasts long enough to be read through."""
    await asyncio.sleep(0.02 * len(events))
    assert template_catalogue.apply_batch is not None
    await template_catalogue.apply_batch(conn, events)


def _bumped() -> tuple[Projection, ...]:
    return tuple(
        dataclasses.replace(p, apply_batch=_slow_batch, version=p.version + 1)
        if p.name == template_catalogue.NAME
        else p
        for p in ALL
    )


async def _table_oid(pool: asyncpg.Pool) -> int:
    oid: int = await pool.fetchval("SELECT 'public.template_catalogue'::regclass::oid")
    return oid


async def test_templates_answer_throughout_the_rebuild_of_their_read_model(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    postgres_url: str,
    nats_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = (await org(app, admin))["project"]
    linked = await assets(app, admin)
    async with client_for(app) as client:
        for i in range(30):
            body = template(f"t-{i:02}", project, linked)
            assert (await sent(client, "POST", TEMPLATES, admin, json=body)).status_code == 202
        await project_all(clean_pool)
        listed = (await sent(client, "GET", TEMPLATES, admin, params={"limit": 50})).json()
        assert len(listed["entries"]) == 30
        one = listed["entries"][11]
        path = f"{TEMPLATES}/{one['meta']['id']}"
        old_table = await _table_oid(clean_pool)

        monkeypatch.setattr(projector, "freeze_start_up", lambda: None)  # not the test's
        settings = Settings(
            database=DatabaseSettings(url=postgres_url),
            nats=NatsSettings(url=nats_url),
            projector=ProjectorSettings(batch_size=5, poll_interval_s=0.05),
        )
        stop = asyncio.Event()
        bumped = next(p.version for p in _bumped() if p.name == template_catalogue.NAME)
        running = asyncio.create_task(projector.run(settings, stop, projections=_bumped()))
        answers = []
        deadline = time.monotonic() + 60
        try:
            while time.monotonic() < deadline:
                page = await sent(client, "GET", TEMPLATES, admin, params={"limit": 50})
                got = await sent(client, "GET", path, admin)
                answers.append((page.status_code, page.json(), got.status_code, got.json()))
                async with clean_pool.acquire() as conn:
                    if await read_model_versions.recorded(conn, template_catalogue.NAME) == bumped:
                        break
        finally:
            stop.set()
            await running

    assert len(answers) >= 5  # the lists and GETs went on while the rebuild ran
    for status, page, got_status, got in answers:
        assert (status, got_status) == (200, 200)
        assert page == listed  # never empty, never half built
        assert got == one
    assert await _table_oid(clean_pool) != old_table  # the rebuilt table serves now
