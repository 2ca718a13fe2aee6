"""The docs' subscriber example (docs/events.md), run as written against the embedded servers,
and `trainplate events tail`."""

import asyncio
import contextlib
import io
import os
import re
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any
from uuid import uuid4

import asyncpg
import pytest

from domain.values import TENANT_ADMIN
from infra.bootstrap import connect_nats
from infra.cli.embedded import EmbeddedNats
from infra.followers.global_log import START
from infra.jetstream.outbox_relay import Relay, ensure_stream
from infra.settings import NatsSettings, RelaySettings
from tests.api.support import api_app, call, token_for
from tests.api.test_templates import IMAGE

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EVENTS_PAGE = Path(__file__).parents[2] / "docs" / "events.md"


def docs_example() -> Callable[..., Coroutine[Any, Any, None]]:
    text = EVENTS_PAGE.read_text()
    block = re.search(r"<!-- subscriber-example -->\n```python\n(.*?)```", text, re.S)
    assert block is not None, "docs/events.md lost its subscriber example"
    namespace: dict[str, Any] = {}
    exec(compile(block.group(1), "docs/events.md", "exec"), namespace)
    follow: Callable[..., Coroutine[Any, Any, None]] = namespace["follow_templates"]
    return follow


async def write_templates(pool: asyncpg.Pool, nats_url: str) -> dict[str, Any]:
    """Templates in projects a (two, one updated) and b (one), published by a relay."""
    async with api_app(pool, nats_url) as app:
        admin = await token_for(pool, "root-admin", (TENANT_ADMIN,))
        cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "c"})).json()
        ids: dict[str, Any] = {}
        for project in ("a", "b"):
            body = {"name": project, "clusterId": cluster["uuid"]}
            made = await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)
            ids[project] = made.json()["id"]
        templates = []
        for name, project in (("one", "a"), ("two", "a"), ("three", "b")):
            body = {
                "meta": {"name": name, "scopeType": "project", "scopeId": ids[project]},
                "spec": {"distributedFramework": "PyTorch", "numWorkers": 1, "image": IMAGE},
            }
            made = await call(
                app, "POST", "/api/v1/workload-templates/distributed", admin, json=body
            )
            templates.append(made.json()["meta"]["id"])
        patch = {"spec": {"numWorkers": 2}}
        path = f"/api/v1/workload-templates/distributed/{templates[0]}"
        assert (await call(app, "PATCH", path, admin, json=patch)).status_code == 200
    settings = NatsSettings(url=nats_url)
    nc = await connect_nats(settings, name="relay")
    try:
        await ensure_stream(nc.jetstream(), settings)
        relay = Relay(pool, nc, settings, RelaySettings(name=f"r-{uuid4()}"))
        async with pool.acquire() as conn:
            cursor = START
            while True:
                cursor, read = await relay.relay_once(conn, cursor)
                if not read:
                    break
    finally:
        await nc.close()
    return {"project_a": ids["a"], "templates": templates}


async def test_the_docs_subscriber_prints_one_projects_template_changes(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    written = await write_templates(clean_pool, broker.url)
    follow = docs_example()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        task = asyncio.create_task(follow(broker.url, written["project_a"], "docs-example"))
        for _ in range(100):
            if len(out.getvalue().splitlines()) >= 3:
                break
            await asyncio.sleep(0.1)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    one, two, _ = written["templates"]
    assert out.getvalue().splitlines() == [
        f"io.trainplate.template.created.v1 {one} v1",
        f"io.trainplate.template.created.v1 {two} v1",
        f"io.trainplate.template.updated.v1 {one} v2",
    ]


async def test_events_tail_prints_what_it_is_asked_for(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    written = await write_templates(clean_pool, broker.url)
    env = {**os.environ, "TRAINPLATE_NATS_URL": broker.url, "TRAINPLATE_LOG_LEVEL": "WARNING"}
    command = [
        sys.executable, "-m", "infra.cli", "events", "tail", "--from-start",
        "--type", "template.updated.v1", "--count", "1",
    ]  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, err.decode()
    (line,) = out.decode().splitlines()
    assert "io.trainplate.template.updated.v1" in line
    assert f"trainplate.template.{written['templates'][0]}.updated v2" in line
    assert '"numWorkers":2' in line
