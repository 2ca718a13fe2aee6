"""The replicas of workloads: `GET /api/v1/workloads/{id}/pods`, `GET /api/v1/workloads/pods`
(filtered, sorted, paged, `verbosity=full`) and `/count`, in Run:ai's shapes, from what the
backends reported (recorded here through the same use case the submitter's backends call)."""

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

import asyncpg
import msgspec
import pytest
from litestar import Litestar

from domain.events import ContainerObserved, PodObserved
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from services import pod_reports
from tests.api.support import call, project_all, token_for
from tests.api.test_workloads import WORKLOADS, setup, submission
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]
START = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def pod(
    job: str, role: str, index: int, phase: str = "Running", node: str = "gpu-1"
) -> PodObserved:
    name = f"{job}-{role}-{index}"
    at = START + timedelta(minutes=index)
    return PodObserved(
        name=name,
        uid=uuid5(NAMESPACE_URL, name),
        role=role,
        phase=phase,  # type: ignore[arg-type]
        node_name=node,
        ip="10.0.0.1",
        created_at=at,
        completed_at=at + timedelta(hours=1) if phase in ("Succeeded", "Failed") else None,
        phase_changed_at=at,
        containers=(ContainerObserved(name="pytorch", image="img:1", started_at=at),),
    )


async def submitted(app: Litestar, admin: str, found: dict[str, Any], name: str) -> dict[str, Any]:
    made = await call(app, "POST", WORKLOADS, admin, json=submission(found, name=name))
    assert made.status_code == 202, made.text
    workload: dict[str, Any] = made.json()
    return workload


async def test_a_workloads_pods_read_back_as_its_backend_reported_them(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    first = await submitted(app, admin, found, "first")
    second = await submitted(app, admin, found, "second")
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    job_1, job_2 = (f"{w['name']}-{w['workloadId'].replace('-', '')[:8]}" for w in (first, second))
    running = [
        pod(job_1, "master", 0),
        pod(job_1, "worker", 0),
        pod(job_1, "worker", 1, node="gpu-2"),
    ]
    await pod_reports.observed(UUID(first["workloadId"]), 1, running, store=store)
    await pod_reports.observed(UUID(first["workloadId"]), 1, running, store=store)  # no change
    await pod_reports.observed(
        UUID(second["workloadId"]), None, [pod(job_2, "worker", 0, "Succeeded")], store=store
    )
    await project_all(clean_pool)

    got = await call(app, "GET", f"/api/v1/workloads/{first['workloadId']}/pods", admin)
    assert got.status_code == 200, got.text
    body = got.json()
    pods = body["pods"]
    for entry in pods:
        assert_matches("Pod1", entry)
    assert [p["name"] for p in pods] == [
        f"{job_1}-master-0",
        f"{job_1}-worker-0",
        f"{job_1}-worker-1",
    ]
    assert {p["k8sPhase"] for p in pods} == {"Running"}
    assert pods[0]["workloadId"] == first["workloadId"]
    assert pods[0]["requestedResources"]["gpu"] == {"request": 8.0, "limit": None}
    assert pods[0]["containers"] == [
        {"name": "pytorch", "image": "img:1", "startedAt": "2026-12-01T08:00:00Z"}
    ]
    assert "workloadName" not in pods[0]
    recorded = await clean_pool.fetchval(
        "SELECT count(*) FROM events WHERE type = 'workload.pods_changed.v1'"
    )
    assert recorded == 2  # the unchanged report wrote nothing

    everything = await call(
        app, "GET", "/api/v1/workloads/pods", admin,
        params={"verbosity": "full", "sortBy": "createdAt", "sortOrder": "desc"},
    )  # fmt: skip
    assert everything.status_code == 200, everything.text
    listed = everything.json()["pods"]
    assert len(listed) == 4
    assert listed[0]["workloadName"] == first["name"]
    assert listed[0]["projectName"] == "llm"
    on_gpu_2 = await call(
        app, "GET", "/api/v1/workloads/pods", admin, params={"filterBy": "nodeName==gpu-2"}
    )
    assert [p["name"] for p in on_gpu_2.json()["pods"]] == [f"{job_1}-worker-1"]
    done = await call(app, "GET", "/api/v1/workloads/pods", admin, params={"completed": "true"})
    assert [p["name"] for p in done.json()["pods"]] == [f"{job_2}-worker-0"]
    paged = await call(app, "GET", "/api/v1/workloads/pods", admin, params={"limit": 3})
    assert (len(paged.json()["pods"]), paged.json()["next"]) == (3, 3)
    counted = await call(
        app, "GET", "/api/v1/workloads/pods/count", admin,
        params={"filterBy": f"workloadId=={first['workloadId']}"},
    )  # fmt: skip
    assert counted.json() == {"count": 3}

    # A new report replaces the set; deleting the workload keeps its pods, marked deleted.
    await pod_reports.observed(UUID(first["workloadId"]), 1, running[:1], store=store)
    deleted = await call(app, "DELETE", f"{WORKLOADS}/{first['workloadId']}", admin)
    assert deleted.status_code == 202
    await project_all(clean_pool)
    live = await call(app, "GET", "/api/v1/workloads/pods/count", admin)
    assert live.json() == {"count": 1}
    gone = await call(app, "GET", "/api/v1/workloads/pods", admin, params={"deleted": "true"})
    (entry,) = gone.json()["pods"]
    assert entry["name"] == f"{job_1}-master-0"
    assert entry["deletedAt"]


async def test_each_report_changes_the_pods_it_names_and_drops_those_gone(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    workload = await submitted(app, admin, found, "changing")
    workload_id = UUID(workload["workloadId"])
    job = f"{workload['name']}-{workload['workloadId'].replace('-', '')[:8]}"
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    path = f"/api/v1/workloads/{workload_id}/pods"

    async def phases() -> dict[str, str]:
        await project_all(clean_pool)
        got = await call(app, "GET", path, admin)
        assert got.status_code == 200, got.text
        return {p["name"].removeprefix(f"{job}-"): p["k8sPhase"] for p in got.json()["pods"]}

    master, first = pod(job, "master", 0), pod(job, "worker", 0)
    await pod_reports.observed(workload_id, 1, [master, first], store=store)
    assert await phases() == {"master-0": "Running", "worker-0": "Running"}
    done, second = pod(job, "worker", 0, "Succeeded"), pod(job, "worker", 1, "Pending")
    await pod_reports.observed(workload_id, 1, [master, done, second], store=store)
    assert await phases() == {"master-0": "Running", "worker-0": "Succeeded", "worker-1": "Pending"}
    await pod_reports.observed(workload_id, 1, [pod(job, "worker", 1)], store=store)
    assert await phases() == {"worker-1": "Running"}
    written = await clean_pool.fetch(
        "SELECT data::jsonb AS data FROM events WHERE stream_id = $1"
        " AND type = 'workload.pods_changed.v1' ORDER BY version",
        workload_id,
    )
    changes = [msgspec.json.decode(row["data"]) for row in written]
    assert [(len(c["pods"]), c.get("gone", [])) for c in changes] == [
        (2, []),
        (2, []),
        (1, [f"{job}-master-0", f"{job}-worker-0"]),
    ]  # only what changed, each time


async def test_a_report_split_into_several_events_shows_every_pod(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """As a report of 19,000 replicas is under the 512 KiB limit: here 300 under 16 KiB."""
    found = await setup(app, admin)
    workload = await submitted(app, admin, found, "wide")
    workload_id = UUID(workload["workloadId"])
    store = PostgresStreams(clean_pool, DOMAIN_CODEC, max_event_bytes=16 * 1024)
    pods = [pod("wide", "worker", i) for i in range(300)]
    await pod_reports.observed(workload_id, 1, pods, store=store)
    written = await clean_pool.fetch(
        "SELECT (data::jsonb->>'part')::int AS part, (data::jsonb->>'parts')::int AS parts,"
        " octet_length(data::text) AS size FROM events WHERE stream_id = $1"
        " AND type = 'workload.pods_changed.v1' ORDER BY version",
        workload_id,
    )
    assert len(written) > 1
    assert [(row["part"], row["parts"]) for row in written] == [
        (number, len(written)) for number in range(1, len(written) + 1)
    ]
    assert all(row["size"] <= 16 * 1024 for row in written)
    await project_all(clean_pool)
    count = "/api/v1/workloads/pods/count"
    params = {"filterBy": f"workloadId=={workload_id}"}
    assert (await call(app, "GET", count, admin, params=params)).json() == {"count": 300}
    await pod_reports.observed(workload_id, 1, pods[:100], store=store)  # 200 gone at once
    await project_all(clean_pool)
    assert (await call(app, "GET", count, admin, params=params)).json() == {"count": 100}


async def test_a_caller_sees_only_the_pods_of_the_projects_it_may_see(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    workload = await submitted(app, admin, found, "hidden")
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    await pod_reports.observed(
        UUID(workload["workloadId"]), 1, [pod("h", "worker", 0)], store=store
    )
    await project_all(clean_pool)
    stranger = await token_for(clean_pool, "stranger", ())
    assert (await call(app, "GET", "/api/v1/workloads/pods", stranger)).json()["pods"] == []
    assert (await call(app, "GET", "/api/v1/workloads/pods/count", stranger)).json() == {"count": 0}
    one = await call(app, "GET", f"/api/v1/workloads/{workload['workloadId']}/pods", stranger)
    assert one.status_code == 404


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"filterBy": "colour==red"}, "/filterBy/0"),
        ({"filterBy": "createdAt==yesterday"}, "/filterBy/0"),
        ({"completed": "maybe"}, "/completed"),
        ({"sortBy": "colour"}, None),
    ],
)
async def test_a_bad_query_is_a_400_naming_it(
    app: Litestar, admin: str, params: dict[str, str], field: str | None
) -> None:
    got = await call(app, "GET", "/api/v1/workloads/pods", admin, params=params)
    assert got.status_code == 400, got.text
    if field is not None:
        assert field in got.text
