"""A relay that cannot publish an event stops there loudly, as a read model does
(tests/integration/test_stuck_projection.py): readiness, the metrics and `trainplate projections
status` name it, nothing behind it overtakes it, and an operator can move it on. The event is
one past the broker's message limit (1.1 MB), appended past the store's size check, as an
older release let it in."""

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import pytest
from litestar import Litestar
from nats.aio.client import Client as NatsClient
from nats.errors import ConnectionClosedError
from nats.js.errors import NotFoundError

from infra.bootstrap import connect_nats
from infra.cli.embedded import EmbeddedNats
from infra.followers import faults
from infra.followers.global_log import load_checkpoint
from infra.jetstream.outbox_relay import STUCK_AFTER, BrokerLimitError, Relay
from infra.postgres.streams import PostgresStreams
from infra.settings import NatsSettings, RelaySettings
from services.ports.event_store import Append
from tests.api.support import api_app, call
from tests.conftest import ACTOR
from tests.integration.test_stuck_projection import cli
from tests.jetstream import read_stream
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = pytest.mark.integration

RELAY = RelaySettings(poll_interval_s=0.05)  # named as the API's settings name it: `jetstream`
STREAM, PREFIX = "STUCKRELAY", "stuckrelay"


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Litestar]:
    async with api_app(clean_pool, nats_url) as app:
        yield app


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[NatsClient]:
    connection = await connect_nats(settings(nats_url), name="stuck-relay")
    with contextlib.suppress(NotFoundError):  # a stream of an earlier run
        await connection.jetstream().delete_stream(STREAM)
    yield connection
    await connection.close()


def settings(url: str) -> NatsSettings:
    return NatsSettings(url=url, stream=STREAM, subject_prefix=PREFIX, publish_timeout_s=2.0)


async def appended(store: PostgresStreams, stream_id: UUID, version: int, event: Any) -> UUID:
    """Append one event; its id."""
    event_id = uuid4()
    await store.append(
        Append(stream_id, [event], expected_version=version, metadata=ACTOR, event_ids=[event_id])
    )
    return event_id


async def readiness_until(app: Litestar, status: int, within_s: float = 30) -> dict[str, Any]:
    """Poll /readyz until it answers `status` (its body), failing with the last answer."""
    deadline = time.monotonic() + within_s
    while True:
        answer = await call(app, "GET", "/readyz", None)
        if answer.status_code == status:
            body: dict[str, Any] = answer.json()
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"/readyz never answered {status}: {answer.text}")
        await asyncio.sleep(0.05)


async def relayed(pool: asyncpg.Pool, event_id: UUID) -> None:
    """Until the relay's checkpoint is at the event or past it."""
    deadline = time.monotonic() + 30
    while not await pool.fetchval(
        "SELECT EXISTS (SELECT FROM consumer_checkpoints c, events e"
        " WHERE c.name = $1 AND e.event_id = $2"
        " AND (c.transaction_id, c.global_position) >= (e.transaction_id, e.global_position))",
        f"relay:{RELAY.name}",
        event_id,
    ):
        assert time.monotonic() < deadline, "the relay never got to the event"
        await asyncio.sleep(0.05)


async def test_an_event_the_broker_refuses_stops_the_relay_loudly_and_can_be_moved_on(
    app: Litestar, clean_pool: asyncpg.Pool, nc: NatsClient, nats_url: str, postgres_url: str
) -> None:
    store = PostgresStreams(clean_pool, CODEC)
    older = PostgresStreams(clean_pool, CODEC, max_event_bytes=4 * 1024 * 1024)
    first, poisoned, other = uuid4(), uuid4(), uuid4()
    before = await appended(store, first, 0, CounterOpened(name="before"))
    culprit = await appended(older, poisoned, 0, CounterOpened(name="x" * 1_100_000))
    behind = await appended(store, poisoned, 1, CounterIncremented(by=1))  # its own stream's next
    after = await appended(store, other, 0, CounterOpened(name="after"))
    position = await clean_pool.fetchval(
        "SELECT global_position FROM events WHERE event_id = $1", culprit
    )

    stop = asyncio.Event()
    relay = Relay(clean_pool, nc, settings(nats_url), RELAY)
    running = asyncio.create_task(relay.run(stop))
    try:
        ready = await readiness_until(app, 503)
    finally:
        stop.set()
        await running
    detail = ready["checks"]["followers"]["detail"]
    assert f"relay:jetstream is stuck at position {position} (event {culprit}" in detail
    assert "MessageTooLargeError" in detail
    assert f"max_payload {nc.max_payload}" in detail
    scraped = (await call(app, "GET", "/metrics", None)).text
    assert 'trainplate_follower_stuck{follower="relay"} 1.0' in scraped
    status = cli(postgres_url, "status")
    assert status.returncode == 0, status.stderr
    assert f"STUCK relay at position {position} (event {culprit}" in status.stdout
    # Published: what came before it. Not: the culprit, what follows it in its stream, nor what
    # was read with it after it.
    held = await read_stream(nc.jetstream(), STREAM, f"{PREFIX}.>")
    assert [h.msg_id for h in held] == [str(before)]

    skipped = cli(postgres_url, "skip", "relay")
    assert skipped.returncode == 0, skipped.stderr
    assert f"past position {position}" in skipped.stdout
    stop = asyncio.Event()
    running = asyncio.create_task(Relay(clean_pool, nc, settings(nats_url), RELAY).run(stop))
    try:
        await readiness_until(app, 200)  # at once: skipping cleared the fault
        await relayed(clean_pool, after)  # (a CI run stopped the relay before it got there)
    finally:
        stop.set()
        await running
    held = await read_stream(nc.jetstream(), STREAM, f"{PREFIX}.>")
    assert [h.msg_id for h in held] == [str(before), str(behind), str(after)]
    scraped = (await call(app, "GET", "/metrics", None)).text
    assert 'trainplate_follower_stuck{follower="relay"} 0.0' in scraped


async def test_publishes_that_keep_failing_are_the_relays_fault_until_one_succeeds(
    clean_pool: asyncpg.Pool, nats_url: str
) -> None:
    store = PostgresStreams(clean_pool, CODEC)
    waiting = await appended(store, uuid4(), 0, CounterOpened(name="waiting"))
    gone = await connect_nats(settings(nats_url), name="closed")
    await gone.close()  # every publish (and declaring the stream) now fails at once
    relay = Relay(clean_pool, gone, settings(nats_url), RELAY)
    async with clean_pool.acquire() as conn:
        for tries in range(1, STUCK_AFTER + 1):
            assert await faults.stuck(conn) == {}, f"stuck after {tries - 1} tries"
            with pytest.raises(ConnectionClosedError):
                await relay.step(conn, await load_checkpoint(conn, relay.checkpoint_name))
        fault = (await faults.stuck(conn))["relay:jetstream"]
        assert (fault.event_id, fault.reason) == (
            waiting,
            "ConnectionClosedError: nats: connection closed",
        )

        live = await connect_nats(settings(nats_url), name="live")
        try:
            relay = Relay(clean_pool, live, settings(nats_url), RELAY)
            _, read = await relay.step(conn, await load_checkpoint(conn, relay.checkpoint_name))
        finally:
            await live.close()
        assert read == 1
        assert await faults.stuck(conn) == {}


def serve_relay(postgres_url: str, nats_url: str) -> subprocess.CompletedProcess[str]:
    """`trainplate serve relay`, to its end."""
    env = {**os.environ, "TRAINPLATE_DATABASE_URL": postgres_url, "TRAINPLATE_NATS_URL": nats_url}
    return subprocess.run(
        [sys.executable, "-m", "infra.cli", "serve", "relay"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_a_relay_refuses_a_broker_whose_messages_cannot_hold_the_largest_event(
    clean_pool: asyncpg.Pool, postgres_url: str, server_dir: Path
) -> None:
    with EmbeddedNats(server_dir, max_payload=256 * 1024) as small:
        connection = await connect_nats(settings(small.url), name="small")
        try:
            assert connection.max_payload == 256 * 1024
            relay = Relay(clean_pool, connection, settings(small.url), RELAY)
            with pytest.raises(BrokerLimitError, match="at most 262144 bytes"):
                await relay.run(asyncio.Event())
        finally:
            await connection.close()
        process = serve_relay(postgres_url, small.url)
    assert process.returncode == 1
    assert "the relay cannot start: the broker takes messages of at most 262144" in process.stderr
