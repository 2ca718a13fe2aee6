"""A page of the workload list at catalogue sizes, next to a bare select of the same page's rows.
Target: a page's p50 at the largest size <= 1.5 x at the smallest (a page costs a page). Method:
docs/decisions/0011-benchmark-methods.md."""

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

from bench.harness import postgres
from domain import workloads
from domain.events import (
    EventMetadata,
    RecordedEvent,
    WorkloadDeleted,
    WorkloadRequested,
    WorkloadSnapshot,
)
from domain.template_specs import DistributedTemplateSpec
from infra.bootstrap import create_pool
from infra.http.workload_queries import GRAMMAR
from infra.http.workload_views import workload_of
from infra.postgres.migrate import apply_migrations
from infra.settings import DatabaseSettings
from projections import org_units, workload_catalogue, workload_list

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
META = EventMetadata(actor_subject="bench", actor_kind="user")
SPEC = DistributedTemplateSpec(distributed_framework="PyTorch", num_workers=4)
BARE = (
    f"SELECT {workload_catalogue.COLUMNS} FROM workload_catalogue"
    " WHERE project_id = ANY($1::text[]) AND deleted_at IS NULL"
    " ORDER BY created_at DESC, workload_id LIMIT 50"
)


def _recorded(event: Any, version: int, at: datetime) -> RecordedEvent:
    return RecordedEvent(
        position=0,
        event_id=uuid4(),
        stream_type="workload",
        stream_id=event.workload_id,
        version=version,
        recorded_at=at,
        metadata=META,
        event=event,
    )


def _requested(name: str, project_id: str) -> WorkloadRequested:
    workload_id = uuid4()
    return WorkloadRequested(
        workload_id=workload_id,
        name=name,
        requested_name=name,
        cluster_id=UUID(int=1),
        project_id=project_id,
        project_name=f"project-{project_id}",
        namespace=f"runai-project-{project_id}",
        job_name=workloads.job_name(name, workload_id),
        snapshot=WorkloadSnapshot(spec=SPEC, master_spec_same_as_worker=True),
    )


async def seed(conn: Any, start: int, stop: int, projects: int) -> None:
    """Workloads `start` to `stop` (exclusive), newest last."""
    async with conn.transaction():
        for index in range(start, stop):
            requested = _requested(f"w{index:06}", str(index % projects + 1))
            at = EPOCH + timedelta(seconds=index)
            await workload_catalogue.apply(conn, _recorded(requested, 1, at))
            if index % 3 == 0:
                gone = WorkloadDeleted(workload_id=requested.workload_id)
                await workload_catalogue.apply(conn, _recorded(gone, 2, at))


async def p50_ms(call: Callable[[], Awaitable[object]], seconds: float) -> float:
    timings = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        began = time.perf_counter()
        await call()
        timings.append(time.perf_counter() - began)
    return statistics.median(timings) * 1000


async def run(url: str, sizes: list[int], seconds: float, projects: int) -> None:
    pool = await create_pool(DatabaseSettings(url=url, pool_max=2), application_name="bench")
    seen = [str(p + 1) for p in range(projects)]
    named = GRAMMAR.parse(["name=^w0001"])
    results: dict[str, list[tuple[int, float, float]]] = {}
    try:
        async with pool.acquire() as conn:
            await apply_migrations(conn)
            await conn.execute("TRUNCATE workload_catalogue")
            seeded = 0

            async def shown(conditions: list[Any]) -> None:
                rows, _ = await workload_list.page(
                    conn, seen, conditions, deleted=False, search=None, offset=0, limit=50
                )
                ids = {d for r in rows if (d := r.workload.request.department_id) is not None}
                departments = await org_units.names_of(conn, "department", ids)
                [workload_of(row, departments) for row in rows]

            async def bare() -> None:
                rows = await conn.fetch(BARE, seen)
                [workload_catalogue.row_of(row) for row in rows]

            async def counted() -> None:
                await workload_list.count(conn, seen, [], deleted=False, search=None)

            async def bare_count() -> None:
                await conn.fetchval(
                    "SELECT count(*) FROM workload_catalogue WHERE deleted_at IS NULL"
                )

            cases = {
                "newest page (limit=50)": (lambda: shown([]), bare),
                "filterBy=name=^w0001": (lambda: shown(named), bare),
                "count": (counted, bare_count),
            }
            for size in sizes:
                await seed(conn, seeded, size, projects)
                seeded = size
                await conn.execute("ANALYZE workload_catalogue")
                for case, (ours, baseline) in cases.items():
                    mine, theirs = await p50_ms(ours, seconds), await p50_ms(baseline, seconds)
                    results.setdefault(case, []).append((size, mine, theirs))
    finally:
        await pool.close()
    print(f"\nworkload list, p50 ms ({seconds:g} s per figure; bare asyncpg select as baseline)")
    print(f"{'':26} {'size':>7} {'trainplate':>11} {'bare':>8} {'ratio':>6}")
    for case, rows in results.items():
        for size, mine, theirs in rows:
            print(f"{case:26} {size:>7,} {mine:>11.2f} {theirs:>8.2f} {mine / theirs:>6.2f}")
        growth = rows[-1][1] / rows[0][1]
        if case == "count":  # a count reads every row it counts, as the bare one does
            print(f"{'':26} largest / smallest p50: {growth:.2f} (no target)")
            continue
        verdict = "ok" if growth <= 1.5 else "MISSED"
        print(f"{'':26} largest / smallest p50: {growth:.2f} (target <= 1.5) {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,20000")
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--projects", type=int, default=20)
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    with postgres() as url:
        asyncio.run(run(url, sizes, args.seconds, args.projects))


if __name__ == "__main__":
    main()
