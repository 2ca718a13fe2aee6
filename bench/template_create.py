"""Template creates per second through the HTTP API beside bare Litestar + asyncpg writes of the
same rows (bench/bare_api.py). Targets: >= 0.75 x those rows (with the same edges, and alone),
p99 <= 2 x bare. Method: docs/decisions/0011-benchmark-methods.md."""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from uuid import uuid4

import aiohttp
import httpx

from bench.harness import Figure, nats, postgres, report, with_server_cpu
from domain.commands import CreateApplication
from domain.events import EventMetadata
from domain.values import TENANT_ADMIN
from infra.bootstrap import create_pool
from infra.cli.embedded import free_port
from infra.postgres.application_registry import PostgresApplicationRegistry
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.postgres.units_of_work import SecretKeys
from infra.security.access_tokens import TokenIssuer
from infra.security.secret_hashing import SecretHasher
from infra.serialization import DOMAIN_CODEC
from infra.settings import AuthSettings, DatabaseSettings
from services.applications import create_application

AUTH = AuthSettings(signing_key="b" * 48, hash_time_cost=1, hash_memory_kib=8192)


@contextmanager
def server(argv: list[str], env: dict[str, str], url: str) -> Iterator[int]:
    """Run a server until it answers `url`; yield its process id."""
    child = subprocess.Popen(argv, env={**os.environ, **env})
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield child.pid
    finally:
        child.terminate()
        child.wait(timeout=15)


async def drive(
    base: str,
    path: str,
    headers: dict[str, str],
    body: Callable[[], object],
    seconds: float,
    connections: int,
) -> tuple[float, list[float]]:
    """POSTs/s and latencies (s) with `connections` requests in flight for `seconds`."""
    return await in_flight(
        base, headers, seconds, connections, lambda s: s.post(path, json=body()), expect=202
    )


async def in_flight(
    base: str,
    headers: dict[str, str],
    seconds: float,
    connections: int,
    request: Callable[[aiohttp.ClientSession], Any],
    *,
    expect: int,
) -> tuple[float, list[float]]:
    """Requests/s and latencies (s) of `request` with `connections` in flight for `seconds`.
    aiohttp, not httpx: on two cores the client must cost as little as it can."""
    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=connections)
    async with aiohttp.ClientSession(base, headers=headers, connector=connector) as session:
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                async with request(session) as response:
                    text = await response.read()
                    if response.status != expect:
                        raise RuntimeError(f"{response.status}: {text[:300]!r}")
                latencies.append(time.perf_counter() - started)

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        elapsed = time.perf_counter() - began
    return len(latencies) / elapsed, latencies


async def setup(database_url: str) -> tuple[str, dict[str, str]]:
    """An admin token, and a linked environment and compute resource to build templates from."""
    pool = await create_pool(
        DatabaseSettings(url=database_url, pool_max=2), application_name="bench"
    )
    try:
        async with pool.acquire() as conn:
            await apply_migrations(conn)
        keys = SecretKeys(hasher=SecretHasher(AUTH))
        app_store = PostgresStreams(pool, DOMAIN_CODEC, keys=keys)
        registry = PostgresApplicationRegistry(app_store, pool, keys)
        command = CreateApplication(
            application_id=uuid4(),
            name="bench-admin",
            grants=(TENANT_ADMIN,),
            metadata=EventMetadata(actor_subject="bench", actor_kind="system"),
        )
        await create_application(command, secret="bench-secret", store=app_store, registry=registry)
    finally:
        await pool.close()
    return TokenIssuer(AUTH).issue(command.application_id, "bench-admin").access_token, {}


def service_env(database_url: str, nats_url: str, api_port: int) -> dict[str, str]:
    """The environment the service's processes run with here: the benchmark's servers, its
    signing key (the tokens `setup` issues), quiet logs."""
    return {
        "TRAINPLATE_DATABASE_URL": database_url,
        "TRAINPLATE_NATS_URL": nats_url,
        "TRAINPLATE_API_PORT": str(api_port),
        "TRAINPLATE_AUTH__SIGNING_KEY": AUTH.signing_key or "",
        "TRAINPLATE_LOG_LEVEL": "WARNING",
    }


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


async def main(rounds: int, seconds: float, connections: int, edits: int) -> None:
    with postgres() as database_url, nats() as nats_url:
        token, _ = await setup(database_url)
        ours_port, bare_port = free_port(), free_port()
        env = service_env(database_url, nats_url, ours_port)
        api = [sys.executable, "-m", "infra.cli", "serve", "api"]
        bare = [sys.executable, "-m", "bench.bare_api", str(bare_port)]
        ours_url, bare_url = f"http://127.0.0.1:{ours_port}", f"http://127.0.0.1:{bare_port}"
        with (
            server(api, env, f"{ours_url}/healthz") as ours_pid,
            server(bare, {"BARE_DATABASE_URL": database_url}, bare_url) as bare_pid,
        ):
            headers = {"authorization": f"Bearer {token}"}
            supports = {"distributed": True, "distFramework": "PyTorch"}
            environment = await _created(ours_url, "/api/v1/asset/environment", headers, {
                "meta": {"name": "pt", "scope": "tenant", "workloadSupportedTypes": supports},
                "spec": {"image": "nvcr.io/nvidia/pytorch:24.05-py3"},
            })  # fmt: skip
            for n in range(edits):
                await _put(ours_url, f"/api/v1/asset/environment/{environment}", headers, {
                    "meta": {"name": "pt"},
                    "spec": {"image": f"nvcr.io/nvidia/pytorch:24.{n}"},
                })  # fmt: skip
            compute = await _created(ours_url, "/api/v1/asset/compute", headers, {
                "meta": {"name": "gpu", "scope": "tenant"}, "spec": {"gpuDevicesRequest": 8},
            })  # fmt: skip
            counter = iter(range(10**9))

            def body() -> object:
                return {
                    "meta": {"name": f"ddp-{next(counter):09d}", "scopeType": "tenant"},
                    "spec": {"distributedFramework": "PyTorch", "numWorkers": 4},
                    "assets": {"environment": environment, "compute": compute},
                }

            figure = Figure(name=f"template create, {connections} in flight", target=None)
            # The same creates against the bare endpoint that writes what ours writes in the
            # database (bench/bare_api.py): what is left between the two is the service's own
            # work (authentication, rules, events, answers), the edges' cost set aside.
            edged = Figure(name=f"template create, {connections} in flight", target=0.75)
            ceiling = Figure(name=f"template create, {connections} in flight", target=0.75)
            edges = Figure(name="bare with edges / bare", target=None)
            rows = Figure(name="bare with the rows alone / bare", target=None)
            sides = ("ours", "bare", "edged", "rows")
            p50s: dict[str, list[float]] = {who: [] for who in sides}
            p99s: dict[str, list[float]] = {who: [] for who in sides}
            cpus: dict[str, list[float]] = {who: [] for who in sides}  # s of CPU per create
            rates: dict[str, list[float]] = {who: [] for who in sides}
            targets = {
                "ours": (ours_pid, ours_url, "/api/v1/workload-templates/distributed", headers),
                "bare": (bare_pid, bare_url, "/templates", {}),
                "edged": (bare_pid, bare_url, "/templates/with-edges", {}),
                "rows": (bare_pid, bare_url, "/templates/rows-alone", {}),
            }
            for _ in range(rounds):
                for who, (pid, url, path, sent) in targets.items():
                    rate, lat, cpu = await with_server_cpu(
                        pid, drive(url, path, sent, body, seconds, connections)
                    )
                    rates[who].append(rate)
                    cpus[who].append(cpu)
                    p50s[who].append(percentile(lat, 50))
                    p99s[who].append(percentile(lat, 99))
            figure.ours, figure.baseline = rates["ours"], rates["bare"]
            edged.ours, edged.baseline = rates["ours"], rates["edged"]
            ceiling.ours, ceiling.baseline = rates["ours"], rates["rows"]
            edges.ours, edges.baseline = rates["edged"], rates["bare"]
            rows.ours, rows.baseline = rates["rows"], rates["bare"]
    report("Template creates through HTTP", "bare Litestar+asyncpg", [figure, edges, rows])
    report("Template creates through HTTP", "bare with the same edges", [edged])
    report("Template creates through HTTP", "bare, the rows alone", [ceiling])
    for who in sides:
        print(
            f"  latency {who:5} p50 {statistics.median(p50s[who]) * 1000:7.1f} ms"
            f"   p99 {statistics.median(p99s[who]) * 1000:7.1f} ms  (medians of rounds)"
        )
    ratio = statistics.median(p99s["ours"]) / statistics.median(p99s["bare"])
    verdict = "ok" if ratio <= 2 else "MISSED"
    print(f"  p99 ours / bare: {ratio:.2f}  (target <= 2) {verdict}")
    spent = {who: statistics.median(cpus[who]) for who in sides}
    print(
        f"  server CPU per create: ours {spent['ours'] * 1e6:.0f} us, bare"
        f" {spent['bare'] * 1e6:.0f} us, bare with edges {spent['edged'] * 1e6:.0f} us,"
        f" with the rows alone {spent['rows'] * 1e6:.0f} us"
        f" (bare / ours {spent['bare'] / spent['ours']:.2f})"
    )


async def _created(base: str, path: str, headers: dict[str, str], body: object) -> str:
    """Create an asset and return its id."""
    async with httpx.AsyncClient(base_url=base, headers=headers) as client:
        response = await client.post(path, json=body)
        response.raise_for_status()
        return str(response.json()["meta"]["id"])


async def _put(base: str, path: str, headers: dict[str, str], body: object) -> None:
    async with httpx.AsyncClient(base_url=base, headers=headers) as client:
        (await client.put(path, json=body)).raise_for_status()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--edits", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.seconds, args.connections, args.edits))
