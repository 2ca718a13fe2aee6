"""The read side under input of odd shapes that the OpenAPI fuzzer does not reach: `filterBy`
items in the list grammar (times at the edges of what a zone can shift), the audit tail's
`Last-Event-ID` header, a workload's `/logs` replica name, offsets at the 64-bit limit on the
lists paged in SQL, and the console's GET pages. Every answer must be a 4xx problem naming the
field, or the page asked for; never a 500 (nor a 503 that blames the database)."""

import asyncio
from typing import Any

import asyncpg
import httpx
import pytest
from litestar import Litestar

from tests.api.client import client_for
from tests.api.support import call, console_admin, project_all
from tests.api.test_workloads import setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]

TEMPLATES = "/api/v1/workload-templates"
WORKLOADS = "/api/v1/workloads"
# Times Python holds whose UTC does not fit a datetime: asyncpg converts each to UTC to send it.
BEFORE_YEAR_ONE = "0001-01-01T00:00:00+01:00"
AFTER_YEAR_9999 = "9999-12-31T23:59:59-01:00"
LAST = 2**63 - 1


def refused(answer: httpx.Response, pointer: str) -> None:
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert [e["pointer"] for e in answer.json()["errors"]] == [pointer]


@pytest.mark.parametrize(
    "path",
    [
        TEMPLATES,
        f"{TEMPLATES}/count",
        f"{TEMPLATES}/distributed",
        WORKLOADS,
        f"{WORKLOADS}/count",
        f"{WORKLOADS}/pods",
        f"{WORKLOADS}/pods/count",
    ],
)
@pytest.mark.parametrize("moment", [BEFORE_YEAR_ONE, AFTER_YEAR_9999])
async def test_a_filter_time_whose_utc_is_out_of_range_is_a_400_naming_the_item(
    app: Litestar, admin: str, path: str, moment: str
) -> None:
    answer = await call(app, "GET", path, admin, params={"filterBy": f"createdAt>={moment}"})
    refused(answer, "/filterBy/0")


@pytest.mark.parametrize(("name", "moment"), [("from", BEFORE_YEAR_ONE), ("to", AFTER_YEAR_9999)])
async def test_an_audit_time_whose_utc_is_out_of_range_is_a_400_naming_it(
    app: Litestar, admin: str, name: str, moment: str
) -> None:
    answer = await call(app, "GET", "/api/v1/audit/events", admin, params={name: moment})
    refused(answer, name)


async def test_a_last_event_id_past_64_bits_is_a_400_naming_it(app: Litestar, admin: str) -> None:
    headers = {"authorization": f"Bearer {admin}", "last-event-id": "9" * 20}
    async with client_for(app) as client:
        answer = await asyncio.wait_for(
            client.get("/api/v1/audit/events/stream", params={"maxEvents": 1}, headers=headers),
            10,
        )
    refused(answer, "Last-Event-ID")


async def test_a_replica_name_too_long_for_a_file_is_a_400_naming_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    found = await setup(app, admin)
    made = await call(app, "POST", f"{WORKLOADS}/distributed", admin, json=submission(found))
    assert made.status_code == 202, made.text
    await project_all(clean_pool)
    path = f"{WORKLOADS}/{made.json()['workloadId']}/logs"
    answer = await call(app, "GET", path, admin, params={"replica": "worker-" + "0" * 5000})
    refused(answer, "replica")  # the query parameter, as Litestar names it


async def test_a_filter_value_ending_in_a_newline_is_not_read_without_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    body = {
        "meta": {"name": "t", "scopeType": "tenant"},
        "spec": {"distributedFramework": "PyTorch"},
    }
    made = await call(app, "POST", f"{TEMPLATES}/distributed", admin, json=body)
    assert made.status_code == 202, made.text
    await project_all(clean_pool)
    listed = await call(app, "GET", TEMPLATES, admin, params={"filterBy": "name==t\n"})
    assert listed.status_code == 200, listed.text
    assert listed.json()["entries"] == []  # no template is named "t\n"


@pytest.mark.parametrize(
    ("path", "extra"),
    [
        (TEMPLATES, {"limit": "500"}),
        (f"{TEMPLATES}/distributed", {}),
        (WORKLOADS, {"limit": "500"}),
        (f"{WORKLOADS}/pods", {"limit": "500"}),
        ("/api/v1/authorization/access-rules", {}),
        ("/api/v1/authorization/me/access-rules", {}),
    ],
)
async def test_an_offset_at_the_64_bit_limit_is_an_empty_page(
    app: Litestar, admin: str, path: str, extra: dict[str, str]
) -> None:
    """The next offset (`offset + limit`) passes 64 bits; the SQL's OFFSET does not."""
    answer = await call(app, "GET", path, admin, params={"offset": str(LAST), **extra})
    assert answer.status_code == 200, answer.text


async def test_a_filter_time_with_a_zone_inside_the_range_is_read(
    app: Litestar, admin: str
) -> None:
    for moment in ("0001-01-01T00:00:00-01:00", "9999-12-31T23:59:59+01:00", "2026-01-01"):
        for path in (TEMPLATES, WORKLOADS, f"{WORKLOADS}/pods"):
            answer = await call(
                app, "GET", path, admin, params={"filterBy": f"createdAt<={moment}"}
            )
            assert answer.status_code == 200, (path, moment, answer.text)


async def test_the_consoles_reads_answer_odd_queries_with_a_page_or_a_4xx(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    async with client_for(app) as client:
        await console_admin(client, clean_pool)
        answers: dict[str, Any] = {}
        for query in (
            "page=100000",
            "name=a,b",
            "name=%0A",
            "name=%F4%8F%BF%BF",
        ):
            answers[query] = (await client.get(f"/console/templates?{query}")).status_code
        assert set(answers.values()) == {200}, answers
        for query in ("page=0", "page=abc", "sort=projectId", "order=up", "name=" + "x" * 201):
            answer = await client.get(f"/console/templates?{query}")
            assert answer.status_code == 400, (query, answer.text[:200])
        for scope in ("cluster:abc", "project:abc", "department", f"project:{LAST}", "x:y:z"):
            answer = await client.get(
                "/console/templates/name-check", params={"scope": scope, "name": "x"}
            )
            assert answer.status_code == 200, (scope, answer.text)
            assert answer.json()["free"] is None
        unknown = "00000000-0000-0000-0000-000000000000"
        for page in (
            f"/console/templates/{unknown}?from=1&to=x",
            f"/console/templates/{unknown}/edit",
            f"/console/data-sources/nfs/{unknown}",
            f"/console/data-sources/zzz/{unknown}",
            "/console/data-sources/zzz/new",
            f"/console/workloads/{unknown}/status",
        ):
            assert (await client.get(page)).status_code == 404, page
