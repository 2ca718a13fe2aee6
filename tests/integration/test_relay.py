"""The relay under faults: JetStream ends up with every event exactly once, in order per stream."""

import asyncio
import json
import signal
import subprocess
import time
from collections import defaultdict
from uuid import UUID, uuid4

import asyncpg
import pytest
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from infra.bootstrap import connect_nats
from infra.cli.embedded import EmbeddedNats
from infra.followers import global_log
from infra.jetstream.outbox_relay import Relay
from infra.postgres.streams import PostgresStreams
from infra.settings import NatsSettings, RelaySettings
from services.ports.event_store import Append
from tests.conftest import ACTOR
from tests.jetstream import Held, read_stream
from tests.processes import serve
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SETTINGS = NatsSettings(stream="TRAINPLATE", subject_prefix="trainplate", publish_timeout_s=2.0)
SUBJECTS = "trainplate.>"


class Halfway:
    """Holds the writers of `append_interleaved` at one round until let go, so a fault can be
    made while the load is under way however fast the machine writes."""

    def __init__(self, at_round: int, writers: int = 4) -> None:
        self.at_round = at_round
        self._waiting = writers
        self.reached = asyncio.Event()
        self.go_on = asyncio.Event()

    async def wait(self) -> None:
        self._waiting -= 1
        if self._waiting == 0:
            self.reached.set()
        await self.go_on.wait()


async def append_interleaved(
    pool: asyncpg.Pool, streams: list[UUID], rounds: int, halfway: Halfway | None = None
) -> None:
    """`rounds` events on each stream, interleaved across streams, from 4 concurrent writers."""
    store = PostgresStreams(pool, CODEC)

    async def writer(mine: list[UUID]) -> None:
        for version in range(rounds):
            if halfway is not None and version == halfway.at_round:
                await halfway.wait()
            for sid in mine:
                event = CounterOpened(name="x") if version == 0 else CounterIncremented(by=version)
                await store.append(Append(sid, [event], expected_version=version, metadata=ACTOR))

    await asyncio.gather(*(writer(streams[i::4]) for i in range(4)))


async def wait_until_relayed(pool: asyncpg.Pool, name: str, within_s: float = 90) -> None:
    """Until the relay's checkpoint has reached the last event in the log."""
    deadline = time.monotonic() + within_s
    async with pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT transaction_id, global_position FROM events"
            " ORDER BY transaction_id DESC, global_position DESC LIMIT 1"
        )
        assert row is not None, "no events to relay"
        last = global_log.Cursor(row["transaction_id"], row["global_position"])
        while time.monotonic() < deadline:
            if await global_log.load_checkpoint(conn, f"relay:{name}") == last:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"the relay did not catch up with {last} within {within_s} s")


async def assert_exactly_once_in_order(pool: asyncpg.Pool, nc: NatsClient) -> list[Held]:
    rows = await pool.fetch("SELECT event_id, stream_id, version FROM events")
    held = await read_stream(nc.jetstream(), SETTINGS.stream, SUBJECTS)
    assert len(held) == len(rows), "JetStream holds a different number of events than the table"
    assert {h.msg_id for h in held} == {str(r["event_id"]) for r in rows}
    versions: dict[UUID, list[int]] = defaultdict(list)
    for message in sorted(held, key=lambda h: h.sequence):
        versions[message.stream_id].append(message.version)
    for stream_id, seen in versions.items():
        assert seen == list(range(1, len(seen) + 1)), f"stream {stream_id} out of order: {seen}"
    return held


async def test_every_event_arrives_once_and_in_order_when_the_broker_is_killed(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    nats_settings = _with_url(broker.url)
    nc = await connect_nats(nats_settings, name="relay-under-test")
    stop = asyncio.Event()
    relay = Relay(
        clean_pool,
        nc,
        nats_settings,
        RelaySettings(batch_size=500, poll_interval_s=0.05, name="faults"),
    )
    relay_task = asyncio.create_task(relay.run(stop))
    streams = [uuid4() for _ in range(300)]
    halfway = Halfway(at_round=5)
    writing = asyncio.create_task(append_interleaved(clean_pool, streams, 10, halfway))
    try:
        await (
            halfway.reached.wait()
        )  # half the load is written; the rest is written into the outage
        broker.kill()
        halfway.go_on.set()
        await asyncio.sleep(1.0)
        broker.start()
        await writing
        await wait_until_relayed(clean_pool, "faults")
        assert nc.stats["reconnects"] >= 1, "the relay never noticed the broker die"
    finally:
        stop.set()
        await relay_task
        await nc.close()
    reader = await connect_nats(nats_settings, name="checker")
    try:
        held = await assert_exactly_once_in_order(clean_pool, reader)
    finally:
        await reader.close()
    assert len(held) == 3000


def _with_url(url: str) -> NatsSettings:
    return NatsSettings(
        url=url,
        stream=SETTINGS.stream,
        subject_prefix=SETTINGS.subject_prefix,
        publish_timeout_s=SETTINGS.publish_timeout_s,
    )


def start_relay_process(postgres_url: str, nats_url: str) -> "subprocess.Popen[bytes]":
    return serve("relay", postgres_url, nats_url, RELAY__BATCH_SIZE="1000", RELAY__NAME="killed")


async def test_every_event_arrives_once_and_in_order_when_the_relay_is_killed_mid_batch(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats, postgres_url: str
) -> None:
    streams = [uuid4() for _ in range(500)]
    await append_interleaved(clean_pool, streams, 12)  # 6,000 events, streams interleaved
    nc = await connect_nats(_with_url(broker.url), name="checker")
    js = nc.jetstream()
    mid_batch_kills = 0
    try:
        for _ in range(3):
            relay = start_relay_process(postgres_url, broker.url)
            try:
                published = await _wait_for_published(js, more_than=0, within_s=30)
                while published % 1000 < 100 or published % 1000 > 900:
                    published = await _wait_for_published(js, more_than=published, within_s=30)
            finally:
                relay.send_signal(signal.SIGKILL)
                relay.wait()
            published = (await js.stream_info(SETTINGS.stream)).state.messages
            checkpointed = await _events_up_to_checkpoint(clean_pool, "killed")
            mid_batch_kills += published > checkpointed
            if published == 6000:
                break
        relay = start_relay_process(postgres_url, broker.url)
        try:
            await wait_until_relayed(clean_pool, "killed")
        finally:
            relay.send_signal(signal.SIGTERM)
            assert relay.wait(30) == 0
        await assert_exactly_once_in_order(clean_pool, nc)
    finally:
        await nc.close()
    assert mid_batch_kills >= 1, "no kill landed between a publish and its checkpoint"


async def _wait_for_published(js: JetStreamContext, *, more_than: int, within_s: float) -> int:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            count = (await js.stream_info(SETTINGS.stream)).state.messages
        except NotFoundError:  # the relay has not declared the stream yet
            count = 0
        if count > more_than:
            return count
        await asyncio.sleep(0.002)
    raise AssertionError(f"JetStream stayed at {more_than} messages for {within_s} s")


async def _events_up_to_checkpoint(pool: asyncpg.Pool, name: str) -> int:
    async with pool.acquire() as conn:
        cursor = await global_log.load_checkpoint(conn, f"relay:{name}")
        count: int = await conn.fetchval(
            "SELECT count(*) FROM events WHERE (transaction_id, global_position) <= ($1::xid8, $2)",
            cursor.transaction_id,
            cursor.position,
        )
        return count


async def test_one_relay_leads_and_a_standby_takes_over_where_it_stopped(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    nats_settings = _with_url(broker.url)
    nc = await connect_nats(nats_settings, name="relays")
    relay_settings = RelaySettings(poll_interval_s=0.05, name="ha")
    first = Relay(clean_pool, nc, nats_settings, relay_settings)
    second = Relay(clean_pool, nc, nats_settings, relay_settings)
    stop_first, stop_second = asyncio.Event(), asyncio.Event()
    first_task = asyncio.create_task(first.run(stop_first))
    try:
        await append_interleaved(clean_pool, [uuid4() for _ in range(20)], 5)
        await wait_until_relayed(clean_pool, "ha")
        second_task = asyncio.create_task(second.run(stop_second))
        await asyncio.sleep(0.3)
        assert (first.leading, second.leading) == (True, False)

        stop_first.set()
        await first_task
        await append_interleaved(clean_pool, [uuid4() for _ in range(20)], 5)
        await wait_until_relayed(clean_pool, "ha")
        assert second.leading
        stop_second.set()
        await second_task
        assert len(await assert_exactly_once_in_order(clean_pool, nc)) == 200
    finally:
        stop_first.set()
        stop_second.set()
        await nc.close()


async def test_a_commit_wakes_the_relay_without_waiting_for_a_poll(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    nats_settings = _with_url(broker.url)
    nc = await connect_nats(nats_settings, name="woken")
    relay = Relay(clean_pool, nc, nats_settings, RelaySettings(poll_interval_s=60, name="woken"))
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    store = PostgresStreams(clean_pool, CODEC)
    sid = uuid4()
    try:
        for _ in range(500):
            if relay.leading:
                break
            await asyncio.sleep(0.01)
        assert relay.leading
        await asyncio.sleep(0.2)  # the relay has read the empty log and now sleeps on LISTEN
        await store.append(
            Append(sid, [CounterOpened(name="ping")], expected_version=0, metadata=ACTOR)
        )
        await wait_until_relayed(clean_pool, "woken", within_s=5)  # a poll would take 60 s
        [held] = await read_stream(nc.jetstream(), SETTINGS.stream, SUBJECTS)
        # A burst: the appends that carry no NOTIFY of their own are covered by a trailing one.
        for version in range(1, 30):
            more = [CounterIncremented(by=version)]
            await store.append(Append(sid, more, expected_version=version, metadata=ACTOR))
        await wait_until_relayed(clean_pool, "woken", within_s=5)
    finally:
        stop.set()
        await task
        await nc.close()
    row = await clean_pool.fetchrow(
        "SELECT event_id, global_position, data::text AS data FROM events WHERE version = 1"
    )
    assert row is not None
    assert held.subject == f"trainplate.counter.{sid}.opened"
    assert held.data == row["data"].encode()
    assert json.loads(held.data) == {"type": "counter.opened.v1", "name": "ping"}
    assert held.headers["Nats-Msg-Id"] == held.headers["ce-id"] == str(row["event_id"])
    assert held.headers["ce-specversion"] == "1.0"
    assert held.headers["ce-type"] == "io.trainplate.counter.opened.v1"
    assert held.headers["ce-subject"] == f"counter/{sid}"
    assert held.headers["trainplate-position"] == str(row["global_position"])
    assert held.headers["trainplate-version"] == "1"


async def test_a_lost_stream_is_published_again_from_the_log_once_the_checkpoint_goes(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    """The way back from a broker that lost its store (docs/kubernetes-deploy.md): with the
    relay stopped, its checkpoint row deleted; it then publishes the whole log again."""
    nats_settings = _with_url(broker.url)
    nc = await connect_nats(nats_settings, name="republished")
    relay_settings = RelaySettings(poll_interval_s=0.05, name="again")

    async def relayed() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(Relay(clean_pool, nc, nats_settings, relay_settings).run(stop))
        try:
            await wait_until_relayed(clean_pool, "again")
        finally:
            stop.set()
            await task

    try:
        await append_interleaved(clean_pool, [uuid4() for _ in range(20)], 5)
        await relayed()
        await nc.jetstream().delete_stream(SETTINGS.stream)  # the broker's store is lost
        deleted = await clean_pool.execute(
            "DELETE FROM consumer_checkpoints WHERE name = 'relay:again'"
        )
        assert deleted == "DELETE 1"
        await relayed()
        assert len(await assert_exactly_once_in_order(clean_pool, nc)) == 100
    finally:
        await nc.close()
