"""Append throughput: PostgresStreams.append next to a bare INSERT, CPU per event of each side;
each append in a span, recorded only with OTEL_EXPORTER_OTLP_ENDPOINT set (`--otlp-sink`: a
sink on this host). Method: docs/decisions/0011-benchmark-methods.md."""

import argparse
import asyncio
import contextlib
import hashlib
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable

import asyncpg

from bench.harness import CODEC, Figure, cpu_seconds, otlp_sink, postgres, report, sample_event
from domain.events import EventMetadata
from infra.bootstrap import create_pool
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.serialization import encode_metadata
from infra.settings import DatabaseSettings
from infra.telemetry import tracing
from services.ports.event_store import Append

ACTOR = EventMetadata(actor_subject="bench", actor_kind="system")
EVENTS_PER_STREAM = 10

BASELINE_TABLE = """
CREATE TABLE IF NOT EXISTS bench_baseline (
    global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
    event_id uuid NOT NULL UNIQUE, stream_type text NOT NULL, stream_id uuid NOT NULL,
    version integer NOT NULL, type text NOT NULL, schema_version smallint NOT NULL,
    data json NOT NULL, metadata json NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now(),
    prev_hash bytea NOT NULL, hash bytea NOT NULL, UNIQUE (stream_id, version));
CREATE INDEX IF NOT EXISTS bench_baseline_cursor
    ON bench_baseline (transaction_id, global_position);
"""
INSERT_ONE = """
INSERT INTO bench_baseline (event_id, stream_type, stream_id, version, type, schema_version,
                            data, metadata, prev_hash, hash)
VALUES ($1, 'bench', $2, $3, 'bench.run_recorded.v1', 1, $4::json, $5::json, $6, $6)
"""
INSERT_MANY = """
INSERT INTO bench_baseline (event_id, stream_type, stream_id, version, type, schema_version,
                            data, metadata, prev_hash, hash)
SELECT e, 'bench', $2, v, 'bench.run_recorded.v1', 1, d::json, $4::json, $5, $5
  FROM unnest($1::uuid[], $3::int[], $6::text[]) AS u(e, v, d)
"""
PAYLOAD = CODEC.encode(sample_event(1)).data
METADATA = encode_metadata(ACTOR)
HASH = hashlib.sha256(b"x").digest()

Worker = Callable[[int], Awaitable[int]]  # worker(n) -> events written


async def rate(workers: list[Worker], seconds: float) -> tuple[float, int]:
    """Events/s of the workers run side by side for `seconds`, and how many they wrote."""
    deadline = time.perf_counter() + seconds
    counts = [0] * len(workers)

    async def loop(index: int) -> None:
        n = 0
        while time.perf_counter() < deadline:
            counts[index] += await workers[index](n)
            n += 1

    start = time.perf_counter()
    await asyncio.gather(*(loop(i) for i in range(len(workers))))
    return sum(counts) / (time.perf_counter() - start), sum(counts)


class Cpu:
    """CPU seconds per event of each side, split into this process's (the client: encoding,
    the driver) and the database server's: its processes' as /proc shows them, when the server
    runs on this machine (the embedded one does)."""

    def __init__(self) -> None:
        self.client: list[float] = []
        self.server: list[float] = []

    async def measured(self, pool: asyncpg.Pool, run: Awaitable[tuple[float, int]]) -> float:
        pids = [row[0] for row in await pool.fetch("SELECT pid FROM pg_stat_activity")]
        client, server = time.process_time(), _server_cpu(pids)
        events_per_s, events = await run
        self.client.append((time.process_time() - client) / events)
        if server is not None and (after := _server_cpu(pids)) is not None:
            # A process that exited during the round (an autovacuum worker) takes its CPU with
            # it: only those seen at both ends are counted.
            used = sum(after[pid] - server[pid] for pid in server.keys() & after.keys())
            self.server.append(used / events)
        return events_per_s

    def __str__(self) -> str:
        client = f"client {statistics.median(self.client) * 1e6:5.1f}"
        if not self.server:
            return f"{client} us/event"
        return f"{client} + database {statistics.median(self.server) * 1e6:5.1f} us/event"


def _server_cpu(pids: list[int]) -> dict[int, float] | None:
    """The CPU seconds each of the server's processes still running has used so far, or None
    when they are not on this machine."""
    used = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip().startswith("postgres"):
                    used[pid] = cpu_seconds(pid)
        except OSError:  # (a worker that has exited since)
            continue
    return used or None


class Streams:
    """Hands out (stream, version) pairs: a fresh stream every EVENTS_PER_STREAM events."""

    def __init__(self, per_stream: int = EVENTS_PER_STREAM) -> None:
        self._per_stream = per_stream
        self._stream = uuid.uuid4()
        self._version = 0

    def next(self, count: int = 1) -> tuple[uuid.UUID, int]:
        if self._version + count > self._per_stream:
            self._stream, self._version = uuid.uuid4(), 0
        taken = (self._stream, self._version)
        self._version += count
        return taken


def ours(store: PostgresStreams, batch: int) -> Worker:
    streams = Streams(max(EVENTS_PER_STREAM, batch))
    events = [sample_event(i) for i in range(batch)]

    async def append(n: int) -> int:
        stream, version = streams.next(batch)
        with tracing.span("append"):  # a request's span: recorded only when exported
            await store.append(Append(stream, events, expected_version=version, metadata=ACTOR))
        return batch

    return append


def baseline(pool: asyncpg.Pool, batch: int) -> Worker:
    streams = Streams(max(EVENTS_PER_STREAM, batch))

    async def insert(n: int) -> int:
        stream, version = streams.next(batch)
        if batch == 1:
            await pool.execute(
                INSERT_ONE, uuid.uuid4(), stream, version + 1, PAYLOAD, METADATA, HASH
            )
        else:
            await pool.execute(
                INSERT_MANY,
                [uuid.uuid4() for _ in range(batch)],
                stream,
                list(range(version + 1, version + batch + 1)),
                METADATA,
                HASH,
                [PAYLOAD] * batch,
            )
        return batch

    return insert


MODES = [  # (name, connections, events per transaction)
    ("1 event/txn, 1 connection", 1, 1),
    ("1 event/txn, 8 connections", 8, 1),
    ("100 events/txn, 1 connection", 1, 100),
]


async def main(rounds: int, seconds: float, batch: int | None) -> None:
    modes = [mode for mode in MODES if batch is None or mode[2] == batch]
    traced = tracing.configure("trainplate-bench", os.environ)
    print(f"spans {'recorded and exported over OTLP' if traced else 'not recorded'}")
    with postgres() as url:
        pool = await create_pool(
            DatabaseSettings(url=url, pool_min=8, pool_max=8),
            application_name="bench",
            session_free=True,  # as the API, which appends, configures its pool
        )
        async with pool.acquire() as conn:
            await apply_migrations(conn)
            await conn.execute(BASELINE_TABLE)
        store = PostgresStreams(pool, CODEC)
        figures = [Figure(name) for name, _, _ in modes]
        cpus = [(Cpu(), Cpu()) for _ in modes]
        for round_ in range(rounds):
            for figure, cpu, (_, connections, batch) in zip(figures, cpus, modes, strict=True):
                sides = [
                    (figure.ours, cpu[0], [ours(store, batch) for _ in range(connections)]),
                    (figure.baseline, cpu[1], [baseline(pool, batch) for _ in range(connections)]),
                ]
                # Alternate which side goes first, so neither always meets the disk's state
                # (WAL segments, checkpoints) left by the other.
                for results, spent, workers in sides if round_ % 2 == 0 else sides[::-1]:
                    await pool.execute("TRUNCATE events, bench_baseline")
                    results.append(await spent.measured(pool, rate(workers, seconds)))
        await pool.close()
    report("Append", "bare asyncpg INSERT", figures)
    print("  CPU per event, medians of rounds (on 2 cores, both parts share them):")
    for figure, (mine, bare) in zip(figures, cpus, strict=True):
        print(f"  {figure.name:32}  ours {mine}   bare {bare}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--batch", type=int, choices=[1, 100], help="only the modes of this size")
    parser.add_argument("--otlp-sink", action="store_true", help="export to a sink on this host")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.otlp_sink:
            os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = stack.enter_context(otlp_sink())
        asyncio.run(main(args.rounds, args.seconds, args.batch))
        tracing.shutdown()
