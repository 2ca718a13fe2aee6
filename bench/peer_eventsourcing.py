"""trainplate's event store beside the `eventsourcing` library's PostgreSQL recorder on the same
server in one run: appends (1 event a transaction on 1 and 8 connections, 100 on 1), a read of the
whole log in pages, and a bare INSERT of our rows beside the peer (what the table alone allows)."""

import argparse
import asyncio
import time
from urllib.parse import urlsplit

import asyncpg
from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore

from bench.append import (
    BASELINE_TABLE,
    EVENTS_PER_STREAM,
    MODES,
    PAYLOAD,
    Streams,
    Worker,
    baseline,
    ours,
    rate,
)
from bench.harness import CODEC, Figure, postgres, report
from infra.bootstrap import create_pool, freeze_start_up
from infra.followers.global_log import START
from infra.followers.log_tap import LogTap
from infra.postgres.connections import Connection
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.settings import DatabaseSettings

TOPIC = "bench:RunRecorded"
PAGE = 1000


def recorder(url: str, connections: int) -> PostgresApplicationRecorder:
    parts = urlsplit(url)
    datastore = PostgresDatastore(
        dbname=parts.path.lstrip("/"),
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 5432,
        user=parts.username or "postgres",
        password=parts.password or "",
        pool_size=connections,
    )
    made = PostgresApplicationRecorder(datastore, events_table_name="peer_events")
    made.create_table()
    return made


def peer(store: PostgresApplicationRecorder, batch: int) -> Worker:
    """Its recorder is synchronous (psycopg's pool): each connection's work runs in a thread."""
    streams = Streams(max(EVENTS_PER_STREAM, batch))

    def insert() -> int:
        stream, version = streams.next(batch)
        store.insert_events(
            [StoredEvent(stream, version + i + 1, TOPIC, PAYLOAD.encode()) for i in range(batch)]
        )
        return batch

    async def append(n: int) -> int:
        return await asyncio.to_thread(insert)

    return append


async def our_read(tap: LogTap, conn: Connection) -> tuple[float, int]:
    started, cursor, read = time.perf_counter(), START, 0
    while found := await tap.after(conn, cursor, PAGE, since=0.0):
        read += len(found)
        cursor = found[-1].entry.cursor
    return read / (time.perf_counter() - started), read


def peer_read(store: PostgresApplicationRecorder) -> tuple[float, int]:
    started, start, read = time.perf_counter(), 1, 0
    while found := store.select_notifications(start, PAGE):
        read += len(found)
        start = found[-1].id + 1
    return read / (time.perf_counter() - started), read


BACKLOG = 1000  # transactions of 100 events each side writes before the reads


async def _read_ours(pool: asyncpg.Pool, store: PostgresStreams) -> float:
    await pool.execute("TRUNCATE events")
    append = ours(store, 100)
    for n in range(BACKLOG):
        await append(n)
    await pool.execute("ANALYZE events")  # steady state: plans as autovacuum's statistics make them
    async with pool.acquire() as conn:
        return (await our_read(LogTap(pool, CODEC, batch_size=PAGE), conn))[0]


async def _read_theirs(pool: asyncpg.Pool, store: PostgresApplicationRecorder) -> float:
    await pool.execute("TRUNCATE peer_events RESTART IDENTITY")
    append = peer(store, 100)
    for n in range(BACKLOG):
        await append(n)
    await pool.execute("ANALYZE peer_events")
    return await asyncio.to_thread(lambda: peer_read(store)[0])


async def main(rounds: int, seconds: float) -> None:
    figures = [Figure(name, target=3.0) for name, _, _ in MODES]
    # The same rows by a bare INSERT (the table's keys and indexes, no chain, no checks): how
    # far ahead of the peer the table alone lets an append be.
    bare = [Figure(name, target=None) for name, _, _ in MODES]
    reading = Figure("read the whole log, 1,000 a page", target=3.0)
    with postgres() as url:
        pool = await create_pool(
            DatabaseSettings(url=url, pool_min=8, pool_max=8),
            application_name="bench",
            session_free=True,
        )
        async with pool.acquire() as conn:
            await apply_migrations(conn)
            await conn.execute(BASELINE_TABLE)
        store = PostgresStreams(pool, CODEC)
        theirs = {n: recorder(url, n) for n in {c for _, c, _ in MODES}}
        freeze_start_up()  # the garbage collection of a follower's process, for both sides
        for round_ in range(rounds):
            for figure, inserts, (_, connections, batch) in zip(figures, bare, MODES, strict=True):
                sides = [
                    (figure.ours, [ours(store, batch) for _ in range(connections)]),
                    (
                        figure.baseline,
                        [peer(theirs[connections], batch) for _ in range(connections)],
                    ),
                    (inserts.ours, [baseline(pool, batch) for _ in range(connections)]),
                ]
                for results, workers in sides if round_ % 2 == 0 else sides[::-1]:
                    await pool.execute("TRUNCATE events, peer_events, bench_baseline")
                    results.append((await rate(workers, seconds))[0])
                inserts.baseline.append(figure.baseline[-1])
            reading.ours.append(await _read_ours(pool, store))
            reading.baseline.append(await _read_theirs(pool, theirs[1]))
        await pool.close()
    report("The event store beside eventsourcing's", "eventsourcing", [*figures, reading])
    report("A bare INSERT of the same rows beside eventsourcing's", "eventsourcing", bare, "bare")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.seconds))
