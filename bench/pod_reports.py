"""Pod reports through a run's start and end, as the submitter records them, next to a bare
INSERT. Target: the last quarter within 0.8 x the first (a report must not cost more as the run
grows). Method: docs/decisions/0011-benchmark-methods.md."""

import argparse
import asyncio
import statistics
import time
from datetime import UTC, datetime
from uuid import uuid4

import asyncpg

from bench.harness import Figure, postgres, report
from domain import workloads
from domain.events import (
    EventMetadata,
    PodObserved,
    WorkloadPodsChanged,
    WorkloadRequested,
    WorkloadSnapshot,
)
from domain.template_specs import DistributedTemplateSpec
from infra.bootstrap import create_pool
from infra.postgres.migrate import apply_migrations
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC, encode_metadata
from infra.settings import DatabaseSettings
from services import pod_reports
from services.ports.event_store import Append

SETUP = EventMetadata(actor_subject="bench", actor_kind="system")
AT = datetime(2026, 1, 1, tzinfo=UTC)
BARE = """
CREATE TABLE IF NOT EXISTS bench_pods (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, stream_id uuid NOT NULL,
    version integer NOT NULL, data json NOT NULL, metadata json NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(), UNIQUE (stream_id, version))
"""
INSERT = "INSERT INTO bench_pods (stream_id, version, data, metadata) VALUES ($1, $2, $3, $4)"


def sets(replicas: int) -> list[list[PodObserved]]:
    """The replica sets a run is seen as: each replica starts, then each ends."""
    uids = [uuid4() for _ in range(replicas)]

    def pod(i: int, phase: str) -> PodObserved:
        return PodObserved(
            name=f"job-worker-{i}", uid=uids[i], role="worker", phase=phase,  # type: ignore[arg-type]
            node_name=f"node-{i // 8}", ip=f"10.0.{i // 250}.{i % 250}",
            created_at=AT, phase_changed_at=AT,
        )  # fmt: skip

    pods = [pod(i, "Pending") for i in range(replicas)]
    seen = []
    for phase in ("Running", "Succeeded"):
        for i in range(replicas):
            pods[i] = pod(i, phase)
            seen.append(list(pods))
    return seen


def quarters(stamps: list[float]) -> tuple[float, float]:
    """Reports/s over the first and the last quarter of a run's reports."""
    q = len(stamps) // 4
    return q / (stamps[q] - stamps[0]), q / (stamps[-1] - stamps[-1 - q])


async def ours(store: PostgresStreams, kept: pod_reports.Observed, replicas: int) -> list[float]:
    workload_id = uuid4()
    spec = DistributedTemplateSpec(distributed_framework="PyTorch", num_workers=replicas)
    requested = WorkloadRequested(
        workload_id=workload_id, name="job", requested_name="job", cluster_id=uuid4(),
        project_id="1", project_name="team", namespace="runai-team",
        job_name=workloads.job_name("job", workload_id), snapshot=WorkloadSnapshot(spec=spec),
    )  # fmt: skip
    await store.append(Append(workload_id, [requested], expected_version=0, metadata=SETUP))
    stamps = [time.perf_counter()]
    for pods in sets(replicas):
        await pod_reports.observed(workload_id, None, pods, store=store, kept=kept)
        stamps.append(time.perf_counter())
    return stamps


async def bare(pool: asyncpg.Pool, replicas: int) -> list[float]:
    """The same events inserted (made before the clock): the first report's every replica, then
    each report's one changed replica."""
    stream_id, metadata = uuid4(), encode_metadata(SETUP)
    changes = [
        tuple(pods) if not step else (pods[step % replicas],)
        for step, pods in enumerate(sets(replicas))
    ]
    payloads = [
        DOMAIN_CODEC.encode(WorkloadPodsChanged(workload_id=stream_id, run=1, pods=pods)).data
        for pods in changes
    ]
    stamps = [time.perf_counter()]
    for version, payload in enumerate(payloads, start=2):
        await pool.execute(INSERT, stream_id, version, payload, metadata)
        stamps.append(time.perf_counter())
    return stamps


async def main(rounds: int, replicas: int) -> None:
    with postgres() as url:
        pool = await create_pool(DatabaseSettings(url=url, pool_max=2), application_name="bench")
        async with pool.acquire() as conn:
            await apply_migrations(conn)
            await conn.execute(BARE)
        store = PostgresStreams(pool, DOMAIN_CODEC)
        kept = pod_reports.Observed()
        first = Figure(name="reports, first quarter of the run", target=None)
        last = Figure(name="reports, last quarter of the run", target=None)
        growth: list[float] = []
        for _ in range(rounds):
            early, late = quarters(await ours(store, kept, replicas))
            first.ours.append(early)
            last.ours.append(late)
            growth.append(late / early)
            early, late = quarters(await bare(pool, replicas))
            first.baseline.append(early)
            last.baseline.append(late)
        await pool.close()
    report(f"Pod reports of a run of {replicas} replicas", "bare INSERT", [first, last])
    held = statistics.median(growth)
    verdict = "ok" if held >= 0.8 else "MISSED"
    print(f"  last quarter / first quarter: {held:.2f}  (target >= 0.8) {verdict}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--replicas", type=int, default=256)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.replicas))
