"""Projections: throughput over a backlog next to a bare read + insert, and lag under a steady
write load. Targets: >= 0.6 x bare, lag p99 <= 15 ms. Method:
docs/decisions/0011-benchmark-methods.md."""

import argparse
import asyncio
import statistics
import time
from uuid import UUID, uuid4

import asyncpg
import msgspec

from bench.harness import Figure, postgres, report
from domain.events import EventMetadata, TemplateCreated, TemplateUpdated
from domain.template_specs import DistributedTemplateSpec
from domain.values import TemplateMeta
from infra.bootstrap import create_pool, freeze_start_up
from infra.followers import fanout_runner, global_log
from infra.followers.checkpoint_moves import CheckpointMoves
from infra.followers.fanout_runner import FanoutRunner
from infra.followers.global_log import START
from infra.followers.log_runner import LogRunner
from infra.followers.log_tap import LogTap
from infra.followers.projection_runner import ProjectionRunner
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import DatabaseSettings, ProjectorSettings
from projections import ALL, template_catalogue
from services.ports.event_store import Append

ACTOR = EventMetadata(actor_subject="bench", actor_kind="application")
SETTINGS = ProjectorSettings(batch_size=500, poll_interval_s=0.05)
LAG_P99_MS = 15
[CATALOGUE] = [p for p in ALL if p.name == template_catalogue.NAME]
SPEC = msgspec.convert(
    {"distributedFramework": "PyTorch", "numWorkers": 4, "image": "nvcr.io/nvidia/pytorch:24.05",
     "command": "torchrun train.py", "compute": {"gpuDevicesRequest": 8}},
    DistributedTemplateSpec,
)  # fmt: skip


def created(template_id: UUID, index: int) -> TemplateCreated:
    meta = TemplateMeta(name=f"t{index:06}", scope="tenant")
    return TemplateCreated(template_id=template_id, meta=meta, spec=SPEC)


def updated(template_id: UUID, index: int) -> TemplateUpdated:
    return TemplateUpdated(template_id=template_id, name=f"t{index:06}", spec=SPEC)


async def write_backlog(store: PostgresStreams, count: int) -> None:
    """Half creations, half updates of those templates (two events per stream)."""

    async def one(index: int) -> None:
        template_id = uuid4()
        await store.append(Append(template_id, [created(template_id, index)], expected_version=0,
                           metadata=ACTOR))  # fmt: skip
        await store.append(Append(template_id, [updated(template_id, index)], expected_version=1,
                           metadata=ACTOR))  # fmt: skip

    for start in range(0, count // 2, 64):
        await asyncio.gather(*(one(i) for i in range(start, min(count // 2, start + 64))))


async def our_throughput(pool: asyncpg.Pool, count: int) -> float:
    await pool.execute("TRUNCATE template_catalogue")
    runner = ProjectionRunner(pool, CATALOGUE, DOMAIN_CODEC, SETTINGS, checkpoint=f"b:{uuid4()}")
    async with pool.acquire() as conn:
        started, cursor, done = time.perf_counter(), START, 0
        while done < count:
            cursor, read = await runner.step(conn, cursor)
            done += read
        return done / (time.perf_counter() - started)


async def bare_throughput(pool: asyncpg.Pool, count: int) -> float:
    async with pool.acquire() as conn:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS bench_rows (event_id uuid PRIMARY KEY, stream_id uuid,"
            " data jsonb); TRUNCATE bench_rows"
        )
        started, cursor, done = time.perf_counter(), START, 0
        while done < count:
            entries = await global_log.read_after(conn, cursor, SETTINGS.batch_size)
            async with conn.transaction():
                await conn.executemany(
                    "INSERT INTO bench_rows (event_id, stream_id, data) VALUES ($1, $2, $3::jsonb)",
                    [(e.event_id, e.stream_id, e.data) for e in entries],
                )
            cursor, done = entries[-1].cursor, done + len(entries)
        return done / (time.perf_counter() - started)


async def lag_under_load(pool: asyncpg.Pool, rate: int, seconds: float) -> list[float]:
    store = PostgresStreams(pool, DOMAIN_CODEC)
    tap = LogTap(pool, DOMAIN_CODEC, batch_size=SETTINGS.batch_size)  # shared, as the process's
    moves = CheckpointMoves()
    runners: list[LogRunner] = [
        ProjectionRunner(pool, p, DOMAIN_CODEC, SETTINGS, tap=tap, moves=moves) for p in ALL
    ]
    runners.append(FanoutRunner(pool, DOMAIN_CODEC, SETTINGS, tap=tap, moves=moves))
    catalogue = next(r for r in runners if r.checkpoint_name.endswith(template_catalogue.NAME))
    stop = asyncio.Event()
    tasks = [asyncio.create_task(r.run(stop)) for r in runners]
    await asyncio.sleep(1.0)  # every runner leads and has caught up
    appended: list[tuple[int, float]] = []  # position, when the append returned
    lags: list[float] = []

    async def write() -> None:
        interval, next_at = 1 / rate, time.perf_counter()
        for index in range(int(rate * seconds)):
            template_id = uuid4()
            result = await store.append(Append(template_id, [created(template_id, index)],
                                        expected_version=0, metadata=ACTOR))  # fmt: skip
            appended.append((result.positions[-1], time.perf_counter()))
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))

    async def watch() -> None:
        seen = 0
        while seen < int(rate * seconds):
            async with pool.acquire() as conn:
                position = (
                    await global_log.load_checkpoint(conn, catalogue.checkpoint_name)
                ).position
            now = time.perf_counter()
            while seen < len(appended) and appended[seen][0] <= position:
                lags.append(now - appended[seen][1])
                seen += 1
            await asyncio.sleep(0.005)

    await asyncio.gather(write(), watch())
    stop.set()
    await asyncio.gather(*tasks)
    await tap.close()
    return lags


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(rounds: int, backlog: int, rate: int, seconds: float) -> None:
    with postgres() as pg_url:
        pool = await create_pool(
            DatabaseSettings(url=pg_url, pool_max=20), application_name="bench"
        )
        async with pool.acquire() as conn:
            await apply_migrations(conn)
            await conn.execute("TRUNCATE events, consumer_checkpoints, template_catalogue")
        await write_backlog(PostgresStreams(pool, DOMAIN_CODEC), backlog)
        freeze_start_up()  # as the projector process does before its runners start
        figure = Figure(f"{backlog:,} template events", target=0.6)
        for round_ in range(rounds):
            sides = [(figure.ours, our_throughput), (figure.baseline, bare_throughput)]
            for results, run in sides if round_ % 2 == 0 else sides[::-1]:
                results.append(await run(pool, backlog))
        report("Projection throughput: template catalogue, from zero",
               "bare read+insert", [figure])  # fmt: skip
        print(f"\nLag under a steady {rate} events/s for {seconds:.0f} s (template catalogue):")
        for round_ in range(rounds):
            await pool.execute("TRUNCATE template_catalogue")
            async with pool.acquire() as conn:  # start the live runners at the end of the log
                head = await conn.fetchrow(
                    "SELECT transaction_id, global_position FROM events"
                    " ORDER BY transaction_id DESC, global_position DESC LIMIT 1"
                )
                assert head is not None
                for name in [*(f"projection:{p.name}" for p in ALL), fanout_runner.CHECKPOINT]:
                    await global_log.save_checkpoint(
                        conn, name,
                        global_log.Cursor(head["transaction_id"], head["global_position"]),
                    )  # fmt: skip
            lags = await lag_under_load(pool, rate, seconds)
            ms = [lag * 1000 for lag in lags]
            p99 = percentile(ms, 0.99)
            verdict = "ok" if p99 <= LAG_P99_MS else "MISSED"
            print(f"  round {round_ + 1}: {len(ms)} events, lag p50 {statistics.median(ms):.1f} ms,"
                  f" p99 {p99:.1f} ms (target <= {LAG_P99_MS} ms) {verdict},"
                  f" max {max(ms):.1f} ms")  # fmt: skip
        await pool.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backlog", type=int, default=20_000)
    parser.add_argument("--rate", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.backlog, args.rate, args.seconds))
