"""Reads through the HTTP API at catalogue sizes (GET by id, list pages, read-your-writes) beside
bare selects of the same rows (bench/bare_api.py). Targets: GET >= 0.8 x bare, a page >= 0.7 (0.5
judged for a project), pages flat in size, check <= 1 ms. Method: decision 0011."""

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Callable
from uuid import uuid4

import httpx

from bench.harness import Figure, nats, postgres, report, with_server_cpu
from bench.template_create import (
    _created,
    drive,
    in_flight,
    percentile,
    server,
    service_env,
    setup,
)
from infra.bootstrap import create_pool
from infra.cli.embedded import free_port
from infra.followers.fanout_runner import NAME as FANOUT
from infra.postgres.read_marks import standing
from infra.settings import DatabaseSettings
from projections import ALL

TEMPLATES = "/api/v1/workload-templates/distributed"


async def read_load(
    base: str, paths: Callable[[], str], headers: dict[str, str], seconds: float, connections: int
) -> tuple[float, list[float]]:
    """GETs/s and latencies (s) with `connections` in flight for `seconds`."""
    return await in_flight(
        base, headers, seconds, connections, lambda s: s.get(paths()), expect=200
    )


async def seed(base: str, headers: dict[str, str], count: int, connections: int) -> None:
    """`count` templates linking one environment and one compute resource, through the API."""
    supports = {"distributed": True, "distFramework": "PyTorch"}
    environment = await _created(base, "/api/v1/asset/environment", headers, {
        "meta": {"name": f"pt-{uuid4().hex[:8]}", "scope": "tenant",
                 "workloadSupportedTypes": supports},
        "spec": {"image": "nvcr.io/nvidia/pytorch:24.05-py3"},
    })  # fmt: skip
    compute = await _created(base, "/api/v1/asset/compute", headers, {
        "meta": {"name": f"gpu-{uuid4().hex[:8]}", "scope": "tenant"},
        "spec": {"gpuDevicesRequest": 8},
    })  # fmt: skip
    names = iter(f"{random.choice('xyz')}{uuid4().hex[:12]}" for _ in range(count))
    made = 0

    def body() -> object:
        nonlocal made
        made += 1
        return {
            "meta": {"name": next(names, f"extra-{uuid4().hex}"), "scopeType": "tenant"},
            "spec": {"distributedFramework": "PyTorch", "numWorkers": 4},
            "assets": {"environment": environment, "compute": compute},
        }

    while made < count:
        await drive(base, TEMPLATES, headers, body, 1.0, connections)


async def policed_project(base: str, headers: dict[str, str]) -> str:
    """A project whose policy caps the GPUs below the seeded templates' 8: every template there
    has a compliance issue, the dearest case of a compliance list."""
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
        cluster = (await client.post("/api/v1/clusters", json={"name": "bench"})).json()["uuid"]
        project = await client.post(
            "/api/v1/org-unit/projects", json={"name": "policed", "clusterId": cluster}
        )
        project_id = str(project.json()["id"])
        policy = {"meta": {"name": "gpus", "scope": "project", "projectId": project_id},
                  "policy": {"defaults": {"worker": {"backoffLimit": 2}},
                             "rules": {"worker": {"compute": {"gpuDevicesRequest": {"max": 4}},
                                                  "backoffLimit": {"max": 3}}}}}  # fmt: skip
        (await client.put("/api/v2/policy/distributed", json=policy)).raise_for_status()
    return project_id


async def more_projects(base: str, headers: dict[str, str], count: int) -> None:
    """`count` projects more: a large tenant, whose every scope a tenant admin's read sees."""
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as client:
        cluster = (await client.post("/api/v1/clusters", json={"name": "many"})).json()["uuid"]
        for index in range(count):
            body = {"name": f"p{index}", "clusterId": cluster}
            (await client.post("/api/v1/org-unit/projects", json=body)).raise_for_status()


async def template_ids(database_url: str) -> list[str]:
    pool = await create_pool(DatabaseSettings(url=database_url, pool_max=1), application_name="b")
    try:
        rows = await pool.fetch("SELECT template_id FROM template_catalogue")
        return [str(row[0]) for row in rows]
    finally:
        await pool.close()


async def caught_up(database_url: str) -> int:
    """Until the template read model holds every template created (the projector trails the
    seed), then analysed; how many that is."""
    pool = await create_pool(DatabaseSettings(url=database_url, pool_max=1), application_name="b")
    try:
        created = await pool.fetchval(
            "SELECT count(*) FROM events WHERE type = 'template.created.v1'"
        )
        while True:
            if await pool.fetchval("SELECT count(*) FROM template_catalogue") >= created:
                # Statistics as autovacuum keeps them in a steady state, not its next round's.
                await pool.execute("ANALYZE template_catalogue")
                return int(created)
            await asyncio.sleep(0.2)  # polled: the projector is another process
    finally:
        await pool.close()


async def check_cost(database_url: str, subject: str, calls: int = 2000) -> tuple[float, float]:
    """p50 (s) of a request's standing query (the read-your-writes check, with the access
    epochs) for a caller with nothing pending, and of a bare `SELECT 1` round trip on the same
    connection."""
    followers = [f"projection:{p.name}" for p in ALL]
    pool = await create_pool(DatabaseSettings(url=database_url, pool_max=1), application_name="b")
    ours: list[float] = []
    bare: list[float] = []
    try:
        async with pool.acquire() as conn:
            for _ in range(calls):
                started = time.perf_counter()
                found = await standing(
                    conn, subject, [*followers, f"projection:{FANOUT}"], followers, reads=True
                )
                ours.append(time.perf_counter() - started)
                assert found.ready, "the caller has writes pending: the projector is not caught up"
                started = time.perf_counter()
                await conn.fetchval("SELECT 1")
                bare.append(time.perf_counter() - started)
    finally:
        await pool.close()
    return statistics.median(ours), statistics.median(bare)


async def main(
    sizes: list[int], rounds: int, seconds: float, connections: int, projects: int
) -> None:
    with postgres() as database_url, nats() as nats_url:
        token, _ = await setup(database_url)
        ours_port, bare_port = free_port(), free_port()
        env = service_env(database_url, nats_url, ours_port)
        api = [sys.executable, "-m", "infra.cli", "serve", "api"]
        projector = [sys.executable, "-m", "infra.cli", "serve", "projector"]
        bare = [sys.executable, "-m", "bench.bare_api", str(bare_port)]
        ours_url, bare_url = f"http://127.0.0.1:{ours_port}", f"http://127.0.0.1:{bare_port}"
        headers = {"authorization": f"Bearer {token}"}
        figures: list[Figure] = []
        list_p50: dict[int, float] = {}
        lines: list[str] = []
        with (
            server(api, env, f"{ours_url}/healthz") as ours_pid,
            server(projector, env, f"{ours_url}/healthz"),
            server(bare, {"BARE_DATABASE_URL": database_url}, bare_url) as bare_pid,
        ):
            seeded = 0
            policed = await policed_project(ours_url, headers)
            await more_projects(ours_url, headers, projects)
            for size in sizes:
                await seed(ours_url, headers, size - seeded, 64)
                seeded = await caught_up(database_url)
                ids = await template_ids(database_url)

                def by_id(prefix: str, ids: list[str] = ids) -> Callable[[], str]:
                    return lambda: f"{prefix}/{random.choice(ids)}"

                cases = [
                    ("GET by id", by_id(TEMPLATES), by_id("/templates"), 0.8),
                    ("list limit=50", lambda: f"{TEMPLATES}?limit=50", lambda: "/templates", 0.7),
                    (
                        "list name=^x sorted",
                        lambda: f"{TEMPLATES}?limit=50&filterBy=name%3D%5Ex&sortBy=name",
                        lambda: "/templates?prefix=x",
                        None,
                    ),
                    (
                        "list limit=50 complyToProject",
                        lambda: f"{TEMPLATES}?limit=50&complyToProject={policed}",
                        lambda: "/templates",
                        0.5,
                    ),
                ]
                for label, ours_path, bare_path, target in cases:
                    figure = Figure(name=f"{label} at {seeded:,}", target=target)
                    p50: dict[str, list[float]] = {"ours": [], "bare": []}
                    p99: dict[str, list[float]] = {"ours": [], "bare": []}
                    cpu: dict[str, list[float]] = {"ours": [], "bare": []}  # s per request
                    for _ in range(rounds):
                        rate, lat, spent = await with_server_cpu(
                            ours_pid,
                            read_load(ours_url, ours_path, headers, seconds, connections),
                        )
                        cpu["ours"].append(spent)
                        figure.ours.append(rate)
                        p50["ours"].append(percentile(lat, 50))
                        p99["ours"].append(percentile(lat, 99))
                        rate, lat, spent = await with_server_cpu(
                            bare_pid, read_load(bare_url, bare_path, {}, seconds, connections)
                        )
                        cpu["bare"].append(spent)
                        figure.baseline.append(rate)
                        p50["bare"].append(percentile(lat, 50))
                        p99["bare"].append(percentile(lat, 99))
                    figures.append(figure)
                    if label == "list limit=50":
                        list_p50[seeded] = statistics.median(p50["ours"])
                    lines.append(
                        f"  {figure.name:34} p50 ours {statistics.median(p50['ours']) * 1000:6.1f}"
                        f" ms  bare {statistics.median(p50['bare']) * 1000:6.1f} ms   p99 ours"
                        f" {statistics.median(p99['ours']) * 1000:6.1f} ms"
                        f"  bare {statistics.median(p99['bare']) * 1000:6.1f} ms   server CPU"
                        f" ours {statistics.median(cpu['ours']) * 1e6:5.0f} us"
                        f"  bare {statistics.median(cpu['bare']) * 1e6:5.0f} us"
                    )
            subject = await _subject(database_url)
            check, round_trip = await check_cost(database_url, subject)
    report("Reads through HTTP", "bare Litestar+asyncpg", figures)
    print("\n".join(lines))
    smallest, largest = min(list_p50), max(list_p50)
    growth = list_p50[largest] / list_p50[smallest]
    verdict = "ok" if growth <= 1.5 else "MISSED"
    print(f"  list p50 at {largest:,} / at {smallest:,}: {growth:.2f}  (target <= 1.5) {verdict}")
    verdict = "ok" if check <= 0.001 else "MISSED"
    print(
        f"  read-your-writes check, nothing pending: p50 {check * 1000:.3f} ms"
        f" (bare SELECT 1: {round_trip * 1000:.3f} ms; target <= 1 ms) {verdict}"
    )


async def _subject(database_url: str) -> str:
    """The benchmark admin's subject: the actor of the templates it created."""
    pool = await create_pool(DatabaseSettings(url=database_url, pool_max=1), application_name="b")
    try:
        subject = await pool.fetchval(
            "SELECT metadata->>'actorSubject' FROM events WHERE type LIKE 'template.%' LIMIT 1"
        )
        return str(subject)
    finally:
        await pool.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--projects", type=int, default=0, help="projects more (a large tenant)")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    asyncio.run(main(sizes, args.rounds, args.seconds, args.connections, args.projects))
