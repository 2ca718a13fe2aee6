"""Linked-asset fan-out: the time from one environment update until its N linked templates' read
models show it and every resulting event is on JetStream. Target: under 3 s, within 3x bare.
Method: docs/decisions/0011-benchmark-methods.md."""

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from uuid import UUID, uuid4

import asyncpg
import msgspec
from nats.js import JetStreamContext

from bench.harness import nats, postgres
from domain.commands import CreateAsset, CreateTemplate, UpdateAsset
from domain.events import EventMetadata
from domain.specs import EnvironmentSpec
from domain.template_specs import DistributedTemplateSpec, TemplateAssets
from domain.templates import TemplateBody
from domain.values import ScopeRef
from infra.bootstrap import connect_nats, create_pool
from infra.followers import global_log
from infra.followers.fanout_runner import FanoutRunner
from infra.followers.projection_runner import ProjectionRunner
from infra.jetstream.outbox_relay import checkpoint_name, ensure_stream
from infra.postgres.migrate import apply_migrations
from infra.postgres.names import name_lookups
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.settings import DatabaseSettings, NatsSettings, ProjectorSettings, RelaySettings
from projections import ALL, template_catalogue
from services.assets import create_asset, update_asset
from services.templates import create_template

ACTOR = EventMetadata(actor_subject="bench", actor_kind="system")
TENANT = ScopeRef("tenant")
WINDOW = 500
RELAY_CHECKPOINT = checkpoint_name(RelaySettings())


def environment(round_: int) -> EnvironmentSpec:
    return msgspec.convert(
        {"image": f"nvcr.io/nvidia/pytorch:24.{round_:02}-py3", "command": "torchrun train.py"},
        EnvironmentSpec,
    )


async def populate(pool: asyncpg.Pool, count: int) -> UUID:
    streams = PostgresStreams(pool, DOMAIN_CODEC)
    env_id = uuid4()
    await create_asset(
        CreateAsset(
            asset_id=env_id, scope=TENANT, name="shared-env", spec=environment(0), metadata=ACTOR
        ),
        streams=streams,
        names=name_lookups(pool),
    )
    spec = DistributedTemplateSpec(distributed_framework="PyTorch", num_workers=2)

    async def one(i: int) -> None:
        body = TemplateBody(spec=spec, assets=TemplateAssets(environment=env_id))
        command = CreateTemplate(
            template_id=uuid4(), scope=TENANT, name=f"t{i:05}", body=body,
            metadata=ACTOR,
        )  # fmt: skip
        await create_template(command, streams=streams, names=name_lookups(pool))

    for start in range(0, count, 32):
        await asyncio.gather(*(one(i) for i in range(start, min(count, start + 32))))
    return env_id


async def checkpoint(pool: asyncpg.Pool, name: str) -> int:
    async with pool.acquire() as conn:
        return (await global_log.load_checkpoint(conn, name)).position


class Followers:
    """The fan-out and the template catalogue, running from `start` until `stop`."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        settings = ProjectorSettings(batch_size=500, poll_interval_s=0.05)
        self.fanout = FanoutRunner(pool, DOMAIN_CODEC, settings)
        [catalogue_projection] = [p for p in ALL if p.name == template_catalogue.NAME]
        self.catalogue = ProjectionRunner(pool, catalogue_projection, DOMAIN_CODEC, settings)
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(r.run(self._stop)) for r in (self.fanout, self.catalogue)
        ]

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks)


async def our_seconds(
    pool: asyncpg.Pool, followers: Followers, env_id: UUID, round_: int, *, quiet: bool = False
) -> float:
    """From the update's append until the catalogue and the relay have both passed the last
    fan-out event."""
    streams = PostgresStreams(pool, DOMAIN_CODEC)
    fanout, catalogue = followers.fanout, followers.catalogue
    last = await pool.fetchval("SELECT max(global_position) FROM events")
    for name in (fanout.checkpoint_name, catalogue.checkpoint_name, RELAY_CHECKPOINT):
        while await checkpoint(pool, name) < last:  # noqa: ASYNC110 (all three lead, then idle)
            await asyncio.sleep(0.05)
    started = time.perf_counter()
    update = UpdateAsset(
        asset_id=env_id, name="shared-env", spec=environment(round_), metadata=ACTOR
    )
    await update_asset(update, streams=streams, names=name_lookups(pool))
    last = await pool.fetchval("SELECT max(global_position) FROM events")
    # Polling the followers' checkpoints (one-row reads) is the measurement.
    while await checkpoint(pool, fanout.checkpoint_name) < last:  # noqa: ASYNC110
        await asyncio.sleep(0.005)
    fanned = time.perf_counter() - started
    last = await pool.fetchval("SELECT max(global_position) FROM events")
    stages = {"catalogue": catalogue.checkpoint_name, "relay": RELAY_CHECKPOINT}
    done: dict[str, float] = {}
    while len(done) < len(stages):
        for stage, name in stages.items():
            if stage not in done and await checkpoint(pool, name) >= last:
                done[stage] = time.perf_counter() - started
        await asyncio.sleep(0.005)
    elapsed = max(done.values())
    if not quiet:
        print(
            f"  round {round_}: fan-out appended by {fanned:.2f} s, catalogue by "
            f"{done['catalogue']:.2f} s, relay acknowledged by {done['relay']:.2f} s",
            flush=True,
        )
    return elapsed


async def check(pool: asyncpg.Pool, env_id: UUID, count: int, version: int) -> None:
    """Not timed: every template records the new version."""
    recorded = await pool.fetchval(
        "SELECT count(*) FROM template_catalogue, jsonb_array_elements(body->'assetVersions') v"
        " WHERE v->>'assetId' = $1 AND (v->>'version')::int = $2",
        str(env_id), version,
    )  # fmt: skip
    assert recorded == count, f"{recorded} of {count} templates on version {version}"


async def bare_insert_seconds(pool: asyncpg.Pool, count: int) -> float:
    data = json.dumps({"templateId": str(uuid4()), "assetId": str(uuid4()), "assetVersion": 2})
    records = [
        (uuid4(), "template", uuid4(), 2, "template.linked_asset_updated.v1", data)
        for _ in range(count)
    ]
    async with pool.acquire() as conn:
        await conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS bare_events (event_id uuid PRIMARY KEY,"
            " stream_type text, stream_id uuid, version int, type text, data json,"
            " recorded_at timestamptz DEFAULT now(), UNIQUE (stream_id, version))"
        )
        await conn.execute("TRUNCATE bare_events")
        started = time.perf_counter()
        async with conn.transaction():
            await conn.copy_records_to_table(
                "bare_events",
                records=records,
                columns=["event_id", "stream_type", "stream_id", "version", "type", "data"],
            )
        return time.perf_counter() - started


async def bare_publish_seconds(js: JetStreamContext, count: int) -> float:
    body = json.dumps({"templateId": str(uuid4()), "assetVersion": 2}).encode()
    subjects = [f"trainplate.template.{uuid4()}.linked_asset_updated" for _ in range(count)]
    started = time.perf_counter()
    for i in range(0, count, WINDOW):
        await asyncio.gather(
            *(
                js.publish(s, body, headers={"Nats-Msg-Id": str(uuid4())})
                for s in subjects[i : i + WINDOW]
            )
        )
    return time.perf_counter() - started


async def main(rounds: int, count: int, edits: int) -> None:
    with postgres() as pg_url, nats() as nats_url:
        pool = await create_pool(
            DatabaseSettings(url=pg_url, pool_max=20), application_name="bench", session_free=False
        )
        async with pool.acquire() as conn:
            await apply_migrations(conn)
        nats_settings = NatsSettings(url=nats_url)
        nc = await connect_nats(nats_settings, name="bench-fanout")
        js = nc.jetstream()
        await ensure_stream(js, nats_settings)
        relay = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "infra.cli", "serve", "relay"),
            env={
                **os.environ,
                "TRAINPLATE_DATABASE_URL": pg_url,
                "TRAINPLATE_NATS_URL": nats_url,
                "TRAINPLATE_LOG_LEVEL": "WARNING",
            },
        )
        followers = Followers(pool)
        try:
            print(f"creating {count:,} templates linking one environment ...", flush=True)
            env_id = await populate(pool, count)
            followers.start()
            # Bring the fan-out index, the catalogue and JetStream up to date (not timed).
            await our_seconds(pool, followers, env_id, 1)
            if edits:
                print(f"updating the environment {edits:,} times ...", flush=True)
            for edit in range(edits):
                await our_seconds(pool, followers, env_id, 2 + edit, quiet=True)
            ours, inserts, publishes = [], [], []
            for round_ in range(2 + edits, rounds + 2 + edits):
                ours.append(await our_seconds(pool, followers, env_id, round_))
                await check(pool, env_id, count, round_ + 1)  # created as 1, one update a round
                inserts.append(await bare_insert_seconds(pool, count))
                publishes.append(await bare_publish_seconds(js, count))
        finally:
            await followers.stop()
            relay.terminate()
            await asyncio.wait_for(relay.wait(), 30)
        await nc.close()
        await pool.close()
    median = statistics.median
    baseline = median(inserts) + median(publishes)
    print(f"\nFan-out of one environment update to {count:,} linked templates "
          f"(seconds; median [min-max] of {rounds} rounds)")  # fmt: skip
    print(f"  trainplate (update -> all read models and all JetStream acks): "
          f"{median(ours):.2f} [{min(ours):.2f}-{max(ours):.2f}]")  # fmt: skip
    print(f"  bare batched insert of {count:,} events:  {median(inserts):.3f} "
          f"[{min(inserts):.3f}-{max(inserts):.3f}]")  # fmt: skip
    print(f"  bare pipelined publish of {count:,} messages: {median(publishes):.3f} "
          f"[{min(publishes):.3f}-{max(publishes):.3f}]")  # fmt: skip
    ratio = median(ours) / baseline
    verdict = "ok" if median(ours) < 3.0 and ratio <= 3.0 else "MISSED"
    print(f"  ratio to the sum of the baselines: {ratio:.2f}  (target: < 3 s and <= 3.0) {verdict}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--templates", type=int, default=10_000)
    parser.add_argument("--edits", type=int, default=0)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(args.rounds, args.templates, args.edits))
