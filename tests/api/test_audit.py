"""The event query API for audit tooling: filters, cursor pages both ways, the scopes a caller may
audit, the live tail resuming from its cursor without loss, and the tamper check (from the
anchor of pruned audit records)."""

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar

from domain.values import Grant
from infra.postgres.audit_records import PostgresAuditRecords
from infra.postgres.audit_retention import prune_records
from tests.api.client import client_for
from tests.api.support import call, project_all, token_for
from tests.api.test_templates import IMAGE
from tests.integration.test_audit_records import record

pytestmark = [pytest.mark.api, pytest.mark.integration]

EVENTS = "/api/v1/audit/events"


async def world(app: Litestar, admin: str) -> dict[str, Any]:
    """A cluster with projects a and b, an environment in each, a template in a, updated once."""
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "east"})).json()
    made: dict[str, Any] = {"cluster": cluster}
    for name in ("a", "b"):
        body = {"name": name, "clusterId": cluster["uuid"]}
        project = (await call(app, "POST", "/api/v1/org-unit/projects", admin, json=body)).json()
        environment = {
            "meta": {"name": f"env-{name}", "scope": "project", "projectId": int(project["id"])},
            "spec": {"image": IMAGE},
        }
        env = await call(app, "POST", "/api/v1/asset/environment", admin, json=environment)
        assert env.status_code == 202, env.text
        made[name] = {"project": project, "environment": env.json()["meta"]["id"]}
    template = {
        "meta": {"name": "ddp", "scopeType": "project", "scopeId": made["a"]["project"]["id"]},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2, "image": IMAGE},
    }
    created = await call(
        app, "POST", "/api/v1/workload-templates/distributed", admin, json=template
    )
    made["template"] = created.json()["meta"]["id"]
    path = f"/api/v1/workload-templates/distributed/{made['template']}"
    await call(app, "PATCH", path, admin, json={"spec": {"numWorkers": 3}})
    return made


async def events(app: Litestar, token: str, **params: Any) -> dict[str, Any]:
    answer = await call(app, "GET", EVENTS, token, params=params)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


async def test_filters_by_stream_type_actor_scope_and_time(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await world(app, admin)
    await project_all(clean_pool)
    history = (await events(app, admin, streamId=made["template"]))["events"]
    assert [(e["type"], e["version"]) for e in history] == [
        ("template.created.v1", 1),
        ("template.updated.v1", 2),
    ]
    assert history[1]["data"]["spec"]["numWorkers"] == 3
    assert history[0]["scope"] == {"type": "project", "id": made["a"]["project"]["id"]}
    assert history[0]["metadata"]["actorKind"] == "application"
    environments = await events(app, admin, type="environment.created.v1")
    assert len(environments["events"]) == 2
    only_a = await events(app, admin, scopeType="project", scopeId=made["a"]["project"]["id"])
    assert {e["streamType"] for e in only_a["events"]} == {"project", "environment", "template"}
    under_cluster = await events(app, admin, scopeType="cluster", scopeId=made["cluster"]["uuid"])
    assert len(under_cluster["events"]) == 1 + 2 + 2 + 2  # cluster, projects, envs, template
    actor = history[0]["actor"]
    assert len((await events(app, admin, actor=actor))["events"]) >= 7
    assert (await events(app, admin, actor="nobody"))["events"] == []
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    assert (await events(app, admin, **{"from": future}))["events"] == []
    assert len((await events(app, admin, to=future))["events"]) >= 8


async def test_cursor_pages_oldest_first_and_newest_first(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    await world(app, admin)
    await project_all(clean_pool)
    everything = [e["cursor"] for e in (await events(app, admin, limit=1000))["events"]]
    for order, expected in (("asc", everything), ("desc", everything[::-1])):
        seen: list[int] = []
        page = await events(app, admin, limit=3, order=order)
        while True:
            seen += [e["cursor"] for e in page["events"]]
            if page["next"] is None:
                break
            page = await events(app, admin, limit=3, order=order, after=page["next"])
        assert seen == expected


async def test_an_auditor_sees_only_the_scopes_it_holds_a_grant_on(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await world(app, admin)
    project_a = made["a"]["project"]["id"]
    auditor = await token_for(
        clean_pool, "auditor", (Grant(role="viewer", scope_kind="project", scope_id=project_a),)
    )
    await project_all(clean_pool)
    seen = (await events(app, auditor, limit=1000))["events"]
    assert seen
    assert {(e["scope"]["type"], e["scope"]["id"]) for e in seen} == {("project", project_a)}
    other = await events(app, auditor, scopeType="project", scopeId=made["b"]["project"]["id"])
    assert other["events"] == []
    assert (await call(app, "GET", "/api/v1/audit/verify", auditor)).status_code == 403


async def tail(
    client: httpx.AsyncClient, token: str, count: int, **params: Any
) -> list[dict[str, Any]]:
    """Read `count` events from the live tail, then disconnect."""
    headers = {"authorization": f"Bearer {token}"}
    if "last_event_id" in params:
        headers["last-event-id"] = str(params.pop("last_event_id"))
    answer = await client.get(
        f"{EVENTS}/stream", params={"maxEvents": count, **params}, headers=headers
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/event-stream")
    found = []
    for block in answer.text.split("\r\n\r\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines:
            event = json.loads(lines["data"])
            assert lines["id"] == str(event["cursor"])
            found.append(event)
    return found


async def test_the_live_tail_resumes_from_its_cursor_and_misses_nothing(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    await project_all(clean_pool)
    start = (await events(app, admin, order="desc", limit=1))["events"][0]["cursor"]
    auth = {"authorization": f"Bearer {admin}"}
    async with client_for(app) as client:  # one client (one app lifespan) for everything

        async def produce() -> None:
            for i in range(6):
                made = await client.post("/api/v1/clusters", json={"name": f"c{i}"}, headers=auth)
                assert made.status_code in (200, 201, 202), made.text
                await project_all(clean_pool)
                await asyncio.sleep(0.05)

        # Connected before anything happens: events arrive while it listens.
        first, _ = await asyncio.gather(tail(client, admin, 2, after=start), produce())
        assert [e["data"]["name"] for e in first] == ["c0", "c1"]
        # Disconnected while c2..c5 were written: it resumes from its Last-Event-ID.
        rest = await tail(client, admin, 4, last_event_id=first[-1]["cursor"])
    assert [e["data"]["name"] for e in rest] == ["c2", "c3", "c4", "c5"]
    assert [e["cursor"] for e in first + rest] == sorted(e["cursor"] for e in first + rest)


async def test_verify_reports_an_intact_store_then_the_first_broken_link(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await world(app, admin)
    await project_all(clean_pool)
    intact = (await call(app, "GET", "/api/v1/audit/verify", admin)).json()
    assert intact["intact"] is True
    assert intact["firstBreak"] is None
    assert intact["streams"] >= 6
    async with clean_pool.acquire() as conn:
        await conn.execute("SET session_replication_role = replica")  # past the immutability
        await conn.execute(
            "DELETE FROM events WHERE stream_id = $1 AND version = 2", made["template"]
        )  # the template's last event: its chain alone cannot tell
        await conn.execute("RESET session_replication_role")
    broken = (await call(app, "GET", "/api/v1/audit/verify", admin)).json()
    assert broken["intact"] is False
    assert broken["firstBreak"]["streamId"] == made["template"]
    assert broken["firstBreak"]["version"] == 2
    assert "deleted" in broken["firstBreak"]["reason"]


async def test_verify_says_where_a_pruned_records_chain_starts(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    records = PostgresAuditRecords(clean_pool)
    for n in range(2):
        await records.append(record(n))
    async with clean_pool.acquire() as conn:
        anchor = await prune_records(conn, datetime.now(UTC))
    assert anchor is not None
    await records.append(record(2))
    found = (await call(app, "GET", "/api/v1/audit/verify", admin)).json()["auditRecords"]
    assert (found["records"], found["intact"]) == (1, True)
    assert found["anchor"]["seq"] == anchor.seq
    assert (found["anchor"]["hash"], found["anchor"]["deleted"]) == (anchor.hash, 2)
