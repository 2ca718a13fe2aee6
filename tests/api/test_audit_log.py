"""Run:ai's audit log: each write's entry from its events (who, what, which thing, where, through
which request), sign-ins and refused writes beside them, filtered, sorted and paged; the file
downloads; who may read it; and no input answered with a 500."""

import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import pytest
from litestar import Litestar

from domain.values import Grant
from tests.api.client import client_for
from tests.api.support import call, project_all, sent, token_for
from tests.api.test_audit import world
from tests.openapi import assert_matches

pytestmark = [pytest.mark.api, pytest.mark.integration]

LOG = "/api/v1/audit/log"
TOKEN = "/api/v1/token"
_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')


def window(**moved: float) -> dict[str, str]:
    """The last hour and the next (`moved`: hours to shift either end by)."""
    now = datetime.now(UTC)
    start = now - timedelta(hours=1 - moved.get("start", 0))
    end = now + timedelta(hours=1 + moved.get("end", 0))
    return {"start": start.isoformat(), "end": end.isoformat()}


async def log(app: Litestar, token: str, **params: Any) -> dict[str, Any]:
    answer = await call(app, "GET", LOG, token, params={**window(), **params})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def sign_in(client_id: str, secret: str) -> dict[str, str]:
    return {"grantType": "app_token", "AppId": client_id, "AppSecret": secret}


async def test_each_write_is_an_entry_naming_its_subject_thing_cluster_and_request(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await world(app, admin)
    await project_all(clean_pool)
    entries = (await log(app, admin, filterBy="entity_type==template"))["audit_logs"]
    assert [(e["action"], e["entity_id"]) for e in entries] == [
        ("create", made["template"]),
        ("update", made["template"]),
    ]
    created = entries[0]
    assert (created["subject"], created["subject_type"]) == ("root-admin", "App")
    assert created["metadata"]["subjectId"]  # the application's id, its name being the subject
    assert (created["entity_type"], created["entity_name"]) == ("template", "ddp")
    assert (created["cluster_name"], created["cluster_id"]) == ("east", made["cluster"]["uuid"])
    assert created["http_method"] == "POST"
    assert created["url"] == "/api/v1/workload-templates/distributed"
    assert (created["http_status_code"], created["result"]) == (202, "Succeeded")
    assert created["metadata"]["eventType"] == "template.created.v1"
    assert created["tenant_id"] == "1"
    UUID(created["request_id"])
    assert entries[1]["http_method"] == "PATCH"
    assert entries[1]["http_status_code"] == 200
    # The service's own writes: the applications made by the tests' setup.
    setup = (await log(app, admin, filterBy="subject==setup"))["audit_logs"]
    assert {(e["action"], e["entity_type"], e["subject_type"]) for e in setup} == {
        ("create", "application", "App")
    }
    assert all("http_method" not in e for e in setup)


async def test_pages_by_offset_in_the_order_asked_with_the_total(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    await world(app, admin)
    await project_all(clean_pool)
    everything = await log(app, admin, numberOfSamples=1000)
    ids = [e["id"] for e in everything["audit_logs"]]
    assert everything["total"] == len(ids) >= 8
    assert "next" not in everything
    times = [e["timestamp"] for e in everything["audit_logs"]]
    assert times == sorted(times)
    seen: list[str] = []
    page = await log(app, admin, numberOfSamples=4)
    while True:
        assert page["total"] == len(ids)
        seen += [e["id"] for e in page["audit_logs"]]
        if "next" not in page:
            break
        page = await log(app, admin, numberOfSamples=4, offset=page["next"])
    assert seen == ids
    limited = await log(app, admin, limit=2, offset=1)  # `limit`, as the other lists call it
    assert [e["id"] for e in limited["audit_logs"]] == ids[1:3]
    newest = await log(app, admin, sortBy="entity_type", sortOrder="desc", numberOfSamples=1000)
    kinds = [e.get("entity_type", "") for e in newest["audit_logs"]]
    assert kinds == sorted(kinds, reverse=True)
    assert len(kinds) == len(ids)
    assert (await log(app, admin, numberOfSamples=0))["audit_logs"] == []
    future = datetime.now(UTC) + timedelta(minutes=30)
    later = await log(app, admin, filterBy=f"timestamp>={future.isoformat()}")
    assert later == {"total": 0, "audit_logs": []}
    gone = await log(app, admin, **window(start=-3, end=-3))  # four hours ago, to two
    assert gone["total"] == 0


async def test_sign_ins_are_entries_and_no_secret_is_kept(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    wrong = await call(app, "POST", TOKEN, None, json=sign_in("root-admin", "wrong-secret"))
    assert wrong.status_code == 401
    right = await call(app, "POST", TOKEN, None, json=sign_in("root-admin", "root-admin-secret"))
    assert right.status_code == 200
    stranger = await call(app, "POST", TOKEN, None, json=sign_in("nobody", "guess"))
    assert stranger.status_code == 401
    found = await log(app, admin, filterBy="action==sign-in")
    assert [(e["subject"], e["result"], e["http_status_code"]) for e in found["audit_logs"]] == [
        ("root-admin", "Failed", 401),
        ("root-admin", "Succeeded", 200),
        ("nobody", "Failed", 401),
    ]
    first = found["audit_logs"][0]
    assert (first["http_method"], first["url"], first["source_ip"]) == ("POST", TOKEN, "127.0.0.1")
    assert "subjectId" in found["audit_logs"][1]["metadata"]
    failed = await log(app, admin, filterBy="action==sign-in,result==Failed,subject==nobody")
    assert failed["total"] == 1
    kept = await clean_pool.fetchval(
        "SELECT string_agg(row_to_json(r)::text, '') FROM audit_records r"
    )
    for secret in ("wrong-secret", "root-admin-secret", "guess", right.json()["accessToken"]):
        assert secret not in kept
        assert secret not in json.dumps(found)


async def test_console_sign_ins_and_outs_are_entries(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    await token_for(
        clean_pool, "person", (Grant(role="viewer", scope_kind="tenant", scope_id="tenant"),)
    )
    async with client_for(app) as client:
        page = await client.get("/console/sign-in")
        csrf = _CSRF.search(page.text)
        assert csrf is not None
        form = {"client_id": "person", "client_secret": "not-it", "_csrf_token": csrf[1]}
        assert (await client.post("/console/sign-in", data=form)).status_code == 401
        form["client_secret"] = "person-secret"
        assert (await client.post("/console/sign-in", data=form)).status_code == 303
        csrf = _CSRF.search((await client.get("/console/templates")).text)
        assert csrf is not None
        out = await client.post("/console/sign-out", data={"_csrf_token": csrf[1]})
        assert out.status_code == 303
    found = (await log(app, admin, filterBy="url=^/console/"))["audit_logs"]
    assert [(e["action"], e["result"], e["http_status_code"]) for e in found] == [
        ("sign-in", "Failed", 401),
        ("sign-in", "Succeeded", 303),
        ("sign-out", "Succeeded", 303),
    ]
    assert {e["subject"] for e in found} == {"person"}


async def test_a_refused_write_is_an_entry_a_refused_question_or_stranger_none(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    viewer = await token_for(
        clean_pool, "looker", (Grant(role="viewer", scope_kind="tenant", scope_id="tenant"),)
    )
    forbidden = await call(app, "POST", "/api/v1/clusters", viewer, json={"name": "west"})
    assert forbidden.status_code == 403
    unnamed = await call(app, "POST", "/api/v1/org-unit/projects", admin, json={})
    assert unnamed.status_code in (400, 422)
    missing = uuid4()
    path = f"/api/v1/workload-templates/distributed/{missing}"
    assert (await call(app, "DELETE", path, admin)).status_code == 404
    question = await call(app, "POST", "/api/v1/authorization/permitted-scopes", admin, json={})
    assert question.status_code == 400
    stranger = await call(app, "POST", "/api/v1/clusters", None, json={"name": "west"})
    assert stranger.status_code == 401
    failed = (await log(app, admin, filterBy="result==Failed"))["audit_logs"]
    assert [
        (e["subject"], e["subject_type"], e["action"], e["entity_type"], e["http_status_code"])
        for e in failed
    ] == [
        ("looker", "App", "create", "cluster", 403),
        ("root-admin", "App", "create", "project", unnamed.status_code),
        ("root-admin", "App", "delete", "template", 404),
    ]
    assert failed[2]["entity_id"] == str(missing)
    assert failed[2]["url"] == path
    assert forbidden.headers["x-request-id"] == failed[0]["request_id"]


async def test_a_request_id_sent_is_the_entrys(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    given = str(uuid4())
    made = await call(
        app, "POST", "/api/v1/clusters", admin, headers={"x-request-id": given}, json={"name": "n"}
    )
    assert made.status_code == 201
    assert made.headers["x-request-id"] == given
    own = await call(
        app,
        "POST",
        "/api/v1/clusters",
        admin,
        headers={"x-request-id": "job-7"},
        json={"name": "m"},
    )
    assert own.headers["x-request-id"] == "job-7"
    await project_all(clean_pool)
    clusters = (await log(app, admin, filterBy="entity_type==cluster"))["audit_logs"]
    assert clusters[0]["request_id"] == given
    assert "request_id" not in clusters[1]  # Run:ai's is a UUID: a client's own goes beside it
    assert clusters[1]["metadata"]["requestId"] == "job-7"


async def test_only_a_tenant_admin_reads_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "c"})).json()
    grants = {
        "tenant viewer": Grant(role="viewer", scope_kind="tenant", scope_id="tenant"),
        "cluster admin": Grant(role="admin", scope_kind="cluster", scope_id=cluster["uuid"]),
    }
    for name, grant in grants.items():
        token = await token_for(clean_pool, name.replace(" ", "-"), (grant,))
        for path in (LOG, f"{LOG}/file"):
            refused = await call(app, "GET", path, token, params=window())
            assert refused.status_code == 403, (name, path, refused.text)
    assert (await call(app, "GET", LOG, None, params=window())).status_code == 401
    held = await call(app, "GET", "/api/v1/authorization/permissions", admin)
    assert {"resourceType": "events-history", "displayName": "Event history", "groupId": "iam",
            "actions": ["read"]} in held.json()  # fmt: skip


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"start": None}, "start"),
        ({"end": "yesterday"}, "end"),
        ({"start": "9999-12-31T23:00:00-05:00"}, "start"),
        ({"start": "2030-01-02T00:00:00Z", "end": "2030-01-01T00:00:00Z"}, "start"),
        ({"numberOfSamples": 1001}, "numberOfSamples"),
        ({"numberOfSamples": -1}, "numberOfSamples"),
        ({"numberOfSamples": 5, "limit": 6}, "limit"),
        ({"offset": -1}, "offset"),
        ({"offset": 2**63}, "offset"),
        ({"sortBy": "password"}, "sortBy"),
        ({"sortOrder": "sideways"}, "sortOrder"),
        ({"filterBy": "secret==x"}, "filterBy"),
        ({"filterBy": "timestamp=@2024"}, "filterBy"),
        ({"filterBy": "timestamp>=not-a-time"}, "filterBy"),
    ],
)
async def test_bad_input_is_refused_naming_it(
    app: Litestar, admin: str, params: dict[str, Any], named: str
) -> None:
    sent_params = {k: v for k, v in {**window(), **params}.items() if v is not None}
    answer = await call(app, "GET", LOG, admin, params=sent_params)
    assert answer.status_code == 400, answer.text
    assert named in answer.text


@pytest.mark.parametrize("params", [{"file_type": "XML"}, {"file_type": "CSV", "fileType": "json"}])
async def test_a_bad_file_type_is_refused(
    app: Litestar, admin: str, params: dict[str, str]
) -> None:
    answer = await call(app, "GET", f"{LOG}/file", admin, params={**window(), **params})
    assert answer.status_code == 400, answer.text


async def test_the_file_is_csv_or_json(app: Litestar, admin: str, clean_pool: asyncpg.Pool) -> None:
    await world(app, admin)
    formula = "=HYPERLINK(1)"
    await call(app, "POST", TOKEN, None, json=sign_in(formula, "x"))
    await project_all(clean_pool)
    listed = (await log(app, admin, numberOfSamples=1000))["audit_logs"]
    async with client_for(app) as client:
        as_json = await sent(
            client, "GET", f"{LOG}/file", admin,
            params={**window(), "fileType": "JSON", "numberOfSamples": 1000},
        )  # fmt: skip
        as_csv = await sent(
            client, "GET", f"{LOG}/file", admin, params={**window(), "numberOfSamples": 1000}
        )
        params = {**window(), "file_type": "json", "numberOfSamples": 2}
        first_two = await sent(client, "GET", f"{LOG}/file", admin, params=params)
    assert as_json.status_code == 200, as_json.text
    assert as_json.headers["content-type"].startswith("application/octet-stream")
    assert as_json.headers["content-disposition"] == 'attachment; filename="audit-log.json"'
    entries = json.loads(as_json.content)
    assert entries == listed
    for entry in entries:
        assert_matches("AuditLog", entry)
    assert json.loads(first_two.content) == listed[:2]
    assert as_csv.headers["content-disposition"] == 'attachment; filename="audit-log.csv"'
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert [r["id"] for r in rows] == [e["id"] for e in listed]
    assert list(rows[0])[:5] == ["id", "timestamp", "tenant_id", "subject", "subject_type"]
    signed = next(r for r in rows if r["action"] == "sign-in")
    assert signed["subject"] == f"'{formula}"  # never a formula in a spreadsheet
    assert json.loads(rows[0]["metadata"])["eventType"]
