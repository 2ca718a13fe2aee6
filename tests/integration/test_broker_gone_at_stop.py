"""Each worker process serves its Prometheus metrics on the port its setting names, and one
stopped after its broker died exits cleanly: status 0, no traceback in its log, though it was
still holding messages for the broker (the submitter's next fetch, the relay's publish)."""

import asyncio
import signal
import subprocess
import time
from pathlib import Path

import asyncpg
import httpx
import pytest
from nats.js.errors import NotFoundError

from infra.bootstrap import connect_nats
from infra.cli.embedded import EmbeddedNats, free_port
from infra.settings import NatsSettings, SubmitterSettings
from tests.integration.test_projector import create
from tests.processes import serve_logged

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# A metric family each worker's /metrics holds from its start.
FAMILIES = {
    "relay": "trainplate_relay_events_published_total",
    "projector": "trainplate_projection_events_applied",
    "submitter": "trainplate_submitter_messages",
}


async def scraped(port: int, child: "subprocess.Popen[bytes]", within_s: float = 60) -> str:
    """The worker's /metrics once it answers (it starts after the worker's migrations)."""
    deadline = time.monotonic() + within_s
    async with httpx.AsyncClient(timeout=2) as client:
        while time.monotonic() < deadline:
            assert child.poll() is None, f"{child.args!r} exited with {child.returncode}"
            try:
                response = await client.get(f"http://127.0.0.1:{port}/metrics")
            except httpx.HTTPError:
                await asyncio.sleep(0.1)
                continue
            assert response.headers["content-type"].startswith("text/plain")
            return response.text
    raise AssertionError(f"no metrics on port {port} after {within_s} s")


async def logged(log: Path, text: str, child: "subprocess.Popen[bytes]", times: int = 1) -> None:
    deadline = time.monotonic() + 60
    while (await asyncio.to_thread(log.read_text)).count(text) < times:
        assert child.poll() is None, f"{child.args!r} exited with {child.returncode}"
        assert time.monotonic() < deadline, f"{text!r} never logged"
        await asyncio.sleep(0.1)


async def relayed(port: int, child: "subprocess.Popen[bytes]") -> None:
    """Until the relay has published something: it leads, and its stream is made."""
    deadline = time.monotonic() + 60
    while f"{FAMILIES['relay']} 0.0" in await scraped(port, child):
        assert time.monotonic() < deadline, "the relay published nothing"
        await asyncio.sleep(0.1)


async def fetching(broker: EmbeddedNats) -> None:
    """Until a submitter is waiting on its durable consumer for messages."""
    nats, durable = NatsSettings(url=broker.url), SubmitterSettings().durable
    nc = await connect_nats(nats, name="test-consumer-watch")
    try:
        js = nc.jetstream()
        deadline = time.monotonic() + 60
        while True:
            try:
                if (await js.consumer_info(nats.stream, durable)).num_waiting:
                    return
            except NotFoundError:  # not made yet
                pass
            assert time.monotonic() < deadline, "the submitter never fetched"
            await asyncio.sleep(0.1)
    finally:
        await nc.close()


@pytest.mark.parametrize("process", list(FAMILIES))
async def test_a_worker_serves_its_metrics_and_stops_cleanly_after_its_broker(
    process: str,
    clean_pool: asyncpg.Pool,
    broker: EmbeddedNats,
    postgres_url: str,
    tmp_path: Path,
) -> None:
    port = free_port()
    log = tmp_path / f"{process}.log"
    with log.open("wb") as output:
        child = serve_logged(
            output,
            process,
            postgres_url,
            broker.url,
            **{f"{process.upper()}__METRICS_PORT": str(port)},
            SUBMITTER__BACKEND="dry-run",
            NATS__PUBLISH_TIMEOUT_S="1",
        )
    try:
        assert FAMILIES[process] in await scraped(port, child)
        if process == "relay":
            await create(clean_pool, "published")
            await relayed(port, child)
        elif process == "submitter":
            await fetching(broker)
        broker.stop()
        await logged(log, "NATS: disconnected", child)
        if process == "relay":  # a publish waits for the broker, its message held meanwhile
            await create(clean_pool, "held")
            await logged(log, "retrying in", child)
        elif process == "submitter":  # tries 0.5 s apart: its 1 s fetch ended, the next is held
            await logged(log, "Connect call failed", child, times=3)
        child.send_signal(signal.SIGTERM)
        status = child.wait(60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    written = log.read_text()
    assert "Traceback" not in written, written
    assert status == 0, written
