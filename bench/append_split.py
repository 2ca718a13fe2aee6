import asyncio, time, sys
import psutil
from bench.append import ours, baseline, rate, BASELINE_TABLE
from bench.harness import CODEC, postgres
from infra.bootstrap import create_pool
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.settings import DatabaseSettings


def pg_cpu() -> float:
    total = 0.0
    for p in psutil.process_iter(["name", "cpu_times"]):
        if p.info["name"] and p.info["name"].startswith("postgres"):
            t = p.info["cpu_times"]
            total += t.user + t.system
    return total


async def main(conns: int, batch: int, seconds: float, rounds: int) -> None:
    with postgres() as url:
        pool = await create_pool(DatabaseSettings(url=url, pool_min=8, pool_max=8), application_name="bench", session_free=True)
        async with pool.acquire() as conn:
            await apply_migrations(conn)
            await conn.execute(BASELINE_TABLE)
        store = PostgresStreams(pool, CODEC)
        for r in range(rounds):
            for name, make in (("ours", lambda: ours(store, batch)), ("bare", lambda: baseline(pool, batch))):
                await pool.execute("TRUNCATE events, bench_baseline")
                c0, p0, w0 = time.process_time(), pg_cpu(), time.perf_counter()
                ev = await rate([make() for _ in range(conns)], seconds)
                c1, p1, w1 = time.process_time(), pg_cpu(), time.perf_counter()
                n = ev * (w1 - w0)
                print(f"{name}: {ev:8.0f}/s client {1e6*(c1-c0)/n:6.1f} us/ev  pg {1e6*(p1-p0)/n:6.1f} us/ev", flush=True)
        await pool.close()

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])))
