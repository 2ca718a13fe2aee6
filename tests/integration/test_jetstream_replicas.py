"""A NATS cluster of three servers, as deploy/kubernetes/overlays/production runs it: with
TRAINPLATE_NATS__REPLICAS=3 the stream, the dead-letter stream and the submitter's consumer are
kept on all three, and a stream made with one replica is set to three."""

import asyncio
import functools
import subprocess
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import msgspec
import nats
import nats.errors
import pytest

from infra.cli.embedded import free_port, nats_server_binary, wait_for_port
from infra.jetstream.outbox_relay import ensure_stream
from infra.jetstream.work_queue import DEAD_LETTER_STREAM, ensure_consumer
from infra.settings import Settings

pytestmark = [pytest.mark.integration]

T = TypeVar("T")


def _healthy(port: int) -> bool:
    """The server's JetStream is part of the cluster's (it answers /healthz with 200)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    """Three clustered nats-servers on this machine; the URL of the first."""
    ports = [(free_port(), free_port(), free_port()) for _ in range(3)]
    routes = ", ".join(f"nats://127.0.0.1:{route}" for _, route, _ in ports)
    servers = []
    try:
        for index, (client, route, monitor) in enumerate(ports):
            config = tmp_path / f"n{index}.conf"
            config.write_text(
                f'server_name: n{index}\nlisten: "127.0.0.1:{client}"\n'
                f'http: "127.0.0.1:{monitor}"\n'
                f'jetstream {{ store_dir: "{tmp_path / f"n{index}"}" }}\n'
                f'cluster {{ name: t, listen: "127.0.0.1:{route}", routes: [{routes}] }}\n'
            )
            servers.append(
                subprocess.Popen(
                    [str(nats_server_binary()), "-c", str(config)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        for server, (client, _, monitor) in zip(servers, ports, strict=True):
            wait_for_port(client, 30, server)
            deadline = time.monotonic() + 30
            while not _healthy(monitor):
                assert time.monotonic() < deadline, "the cluster did not form"
                time.sleep(0.2)
        yield f"nats://127.0.0.1:{ports[0][0]}"
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(10)


async def answered(call: Callable[[], Awaitable[T]]) -> T:
    """`call` asked again when its answer is lost, as the service's followers start again: a
    new cluster's first replicated assets wait on elections, and an answer can go missing
    meanwhile (a CI run waited past 30 s for one)."""
    deadline = time.monotonic() + 90
    while True:
        try:
            return await call()
        except nats.errors.TimeoutError:
            if time.monotonic() > deadline:
                raise


async def test_three_replicas_keep_every_stream_and_the_consumer_on_each_server(
    cluster: str,
) -> None:
    settings = Settings.from_env({"TRAINPLATE_NATS_URL": cluster, "TRAINPLATE_NATS__REPLICAS": "3"})
    nc = await nats.connect(cluster)
    try:
        js = nc.jetstream(timeout=10)
        await answered(lambda: ensure_consumer(js, settings.nats, settings.submitter))
        for stream in (settings.nats.stream, DEAD_LETTER_STREAM):
            info = await answered(functools.partial(js.stream_info, stream))
            assert info.config.num_replicas == 3
            assert info.cluster is not None
            assert len(info.cluster.replicas or ()) == 2
        consumer = await answered(
            lambda: js.consumer_info(settings.nats.stream, settings.submitter.durable)
        )
        assert consumer.cluster is not None
        assert len(consumer.cluster.replicas or ()) == 2
        # A stream made on one server (replicas 1, the default) is copied to three.
        one = msgspec.structs.replace(settings.nats, stream="ONE", subject_prefix="one", replicas=1)
        await answered(lambda: ensure_stream(js, one))
        assert (await answered(lambda: js.stream_info("ONE"))).config.num_replicas == 1
        three = msgspec.structs.replace(one, replicas=3)
        await answered(lambda: ensure_stream(js, three))
        assert (await answered(lambda: js.stream_info("ONE"))).config.num_replicas == 3
    finally:
        await asyncio.wait_for(nc.close(), 10)
