"""Relay throughput: events from the table to acknowledged JetStream publishes, next to bare
nats-py publishing the same messages. Method: docs/decisions/0011-benchmark-methods.md."""

import argparse
import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

import asyncpg
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from bench.harness import CODEC, Figure, nats, postgres, report, sample_event
from infra.bootstrap import connect_nats, create_pool, freeze_start_up
from infra.followers import global_log
from infra.followers.global_log import START, LogEntry
from infra.jetstream.cloudevents import headers_for, subject_for
from infra.jetstream.outbox_relay import Relay, ensure_stream
from infra.postgres.migrate import apply_migrations
from infra.settings import DatabaseSettings, NatsSettings, RelaySettings

WINDOW = 500

# Events of many streams, interleaved as concurrent writers would leave them (version 1 of every
# stream, then version 2, ...). The relay does not look at hashes, so these rows carry dummy ones.
FILL = """
INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                    metadata, recorded_at, prev_hash, hash)
SELECT gen_random_uuid(), 'bench', s.id, v, 'bench.run_recorded.v1', 1, $1::json,
       '{"actorSubject":"bench","actorKind":"system"}', now(), '\\x00', '\\x00'
  FROM generate_series(1, $3) AS v,
       (SELECT gen_random_uuid() AS id, n FROM generate_series(1, $2) AS n) AS s
 ORDER BY v, s.n
"""


async def fresh_stream(js: JetStreamContext, settings: NatsSettings) -> None:
    with contextlib.suppress(NotFoundError):
        await js.delete_stream(settings.stream)
    await ensure_stream(js, settings)


async def relay_rate(relay: Relay, pool: asyncpg.Pool, total: int) -> float:
    async with pool.acquire() as conn:
        await conn.execute("TRUNCATE consumer_checkpoints")
        start = time.perf_counter()
        cursor, done = START, 0
        while done < total:
            cursor, read = await relay.relay_once(conn, cursor)
            done += read
        return total / (time.perf_counter() - start)


async def bare_rate(js: JetStreamContext, settings: NatsSettings, entries: list[LogEntry]) -> float:
    messages = [
        (subject_for(settings.subject_prefix, e), e.data.encode(), headers_for(e)) for e in entries
    ]
    start = time.perf_counter()
    for i in range(0, len(messages), WINDOW):
        await asyncio.gather(
            *(
                js.publish(subject, body, headers=headers, timeout=settings.publish_timeout_s)
                for subject, body, headers in messages[i : i + WINDOW]
            )
        )
    return len(messages) / (time.perf_counter() - start)


async def main(rounds: int, events: int, streams: int) -> None:
    with postgres() as pg_url, nats() as nats_url:
        pool = await create_pool(DatabaseSettings(url=pg_url), application_name="bench")
        async with pool.acquire() as conn:
            await apply_migrations(conn)
            await conn.execute("TRUNCATE events, consumer_checkpoints")
            await conn.execute(
                FILL, CODEC.encode(sample_event(1)).data, streams, max(1, events // streams)
            )
            entries = await global_log.read_after(conn, START, 10 * events)
        settings = NatsSettings(url=nats_url)
        nc = await connect_nats(settings, name="bench-relay")
        js = nc.jetstream()
        relay = Relay(pool, nc, settings, RelaySettings())
        freeze_start_up()  # as the relay process does before it starts
        figure = Figure(f"{len(entries):,} events, {streams:,} streams", target=0.7)
        for round_ in range(rounds):
            sides: list[tuple[list[float], Callable[[], Awaitable[float]]]] = [
                (figure.ours, lambda: relay_rate(relay, pool, len(entries))),
                (figure.baseline, lambda: bare_rate(js, settings, entries)),
            ]
            for results, run in sides if round_ % 2 == 0 else sides[::-1]:  # alternate the order
                await fresh_stream(js, settings)
                results.append(await run())
        await nc.close()
        await pool.close()
    report("Relay: table -> acknowledged JetStream publish", "bare nats-py publish", [figure])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--streams", type=int, default=2_000)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.events, args.streams))
