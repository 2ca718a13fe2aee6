"""At scale: a million events over 100,000 templates. Rebuilding every read model from zero next to
a bare read of the whole log; list and GET p50 next to bare selects (bench/bare_api.py); the API
process's memory. Method: docs/decisions/0011-benchmark-methods.md."""

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections.abc import Callable
from uuid import uuid4

import asyncpg

from bench.harness import nats, postgres
from bench.projection import ACTOR, created, updated
from bench.read import TEMPLATES, template_ids
from bench.template_create import in_flight, server, service_env, setup
from domain.events import Event
from infra.bootstrap import create_pool
from infra.cli.embedded import free_port
from infra.followers import fanout_runner, global_log
from infra.followers.global_log import START
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import DatabaseSettings
from projections import ALL
from services.ports.event_store import Append

_HEAD = """SELECT transaction_id, global_position FROM events
            ORDER BY transaction_id DESC, global_position DESC LIMIT 1"""


async def seed(pool: asyncpg.Pool, templates: int, per_template: int) -> None:
    """`templates` streams of one creation and `per_template - 1` updates each, 32 in flight."""
    store = PostgresStreams(pool, DOMAIN_CODEC)

    async def one(index: int) -> None:
        template_id = uuid4()
        events: list[Event] = [created(template_id, index)]
        events += [updated(template_id, index) for _ in range(per_template - 1)]
        await store.append(Append(template_id, events, expected_version=0, metadata=ACTOR))

    for start in range(0, templates, 32):
        await asyncio.gather(*(one(i) for i in range(start, min(templates, start + 32))))


async def bare_read(pool: asyncpg.Pool) -> float:
    """Seconds to read the whole log in the followers' order and batches, decoding nothing."""
    async with pool.acquire() as conn:
        started, cursor = time.perf_counter(), START
        while entries := await global_log.read_after(conn, cursor, 500):
            cursor = entries[-1].cursor
        return time.perf_counter() - started


async def rebuilt(pool: asyncpg.Pool, started: float) -> float:
    """Seconds from `started` until every read model's and the fan-out's checkpoint holds the
    log's last event (polled: the projector is another process)."""
    head = await pool.fetchrow(_HEAD)
    assert head is not None
    names = [*(f"projection:{p.name}" for p in ALL), fanout_runner.CHECKPOINT]
    while True:
        there = await pool.fetchval(
            "SELECT count(*) FROM consumer_checkpoints WHERE name = ANY($3::text[])"
            " AND (transaction_id, global_position) >= ($1::xid8, $2::bigint)",
            head["transaction_id"],
            head["global_position"],
            names,
        )
        if there == len(names):
            return time.perf_counter() - started
        await asyncio.sleep(0.5)


def memory_mib(pid: int) -> tuple[float, float]:
    """The process's resident memory now and at its peak (VmRSS, VmHWM), MiB."""
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


async def p50_ms(
    base: str, path: Callable[[], str], headers: dict[str, str], seconds: float
) -> float:
    """Median latency of one request at a time, ms."""
    _, latencies = await in_flight(base, headers, seconds, 1, lambda s: s.get(path()), expect=200)
    return statistics.median(latencies) * 1000


async def main(templates: int, per_template: int, rounds: int, seconds: float) -> None:
    with postgres() as database_url, nats() as nats_url:
        token, _ = await setup(database_url)
        pool = await create_pool(
            DatabaseSettings(url=database_url, pool_max=40), application_name="b"
        )
        started = time.perf_counter()
        await seed(pool, templates, per_template)
        events = await pool.fetchval("SELECT count(*) FROM events")
        print(f"seeded {events:,} events over {templates:,} templates"
              f" in {time.perf_counter() - started:.0f} s")  # fmt: skip
        port, bare_port = free_port(), free_port()
        env = service_env(database_url, nats_url, port)
        ours, bare = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{bare_port}"
        projector = [sys.executable, "-m", "infra.cli", "serve", "projector"]
        api = [sys.executable, "-m", "infra.cli", "serve", "api"]
        reads = [await bare_read(pool) for _ in range(rounds)]
        metrics = free_port()
        started = time.perf_counter()  # the projector's start-up is part of a rebuild
        with server(projector, {**env, "TRAINPLATE_PROJECTOR__METRICS_PORT": str(metrics)},
                    f"http://127.0.0.1:{metrics}/metrics"):  # fmt: skip
            rebuild = await rebuilt(pool, started)
        headers = {"authorization": f"Bearer {token}"}
        with (
            server(api, env, f"{ours}/healthz") as api_pid,
            server([sys.executable, "-m", "bench.bare_api", str(bare_port)],
                   {"BARE_DATABASE_URL": database_url}, bare),
        ):  # fmt: skip
            ids = await template_ids(database_url)
            cases: list[tuple[str, Callable[[], str], Callable[[], str] | None]] = [
                ("GET by id", lambda: f"{TEMPLATES}/{random.choice(ids)}",
                 lambda: f"/templates/{random.choice(ids)}"),
                ("list limit=50", lambda: f"{TEMPLATES}?limit=50", lambda: "/templates"),
                ("list limit=50 offset=50000", lambda: f"{TEMPLATES}?limit=50&offset=50000", None),
            ]  # fmt: skip
            lines = []
            for label, path, bare_path in cases:
                ours_ms = [await p50_ms(ours, path, headers, seconds) for _ in range(rounds)]
                bare_ms = (
                    [await p50_ms(bare, bare_path, {}, seconds) for _ in range(rounds)]
                    if bare_path
                    else []
                )
                line = f"  {label:28} p50 ours {statistics.median(ours_ms):6.2f} ms"
                if bare_ms:
                    line += f"  bare {statistics.median(bare_ms):6.2f} ms"
                lines.append(line)
            rss, peak = memory_mib(api_pid)
        await pool.close()
    print(f"\nAt scale: {events:,} events, {templates:,} templates (medians of {rounds} rounds)")
    print(f"  rebuild every read model from zero: {rebuild:.1f} s, {events / rebuild:,.0f} events/s"
          f"  (bare read of the log: {statistics.median(reads):.1f} s)")  # fmt: skip
    print("\n".join(lines))
    print(f"  API process memory after the reads: {rss:.0f} MiB (peak {peak:.0f} MiB)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--templates", type=int, default=100_000)
    parser.add_argument("--events-per-template", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    asyncio.run(main(args.templates, args.events_per_template, args.rounds, args.seconds))
