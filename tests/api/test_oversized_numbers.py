"""A number a request writes out (a header, a form's version, a form row) past what any 64-bit
column holds, however long, is refused or ignored as any unreadable number is, never a 500:
`int()` itself raises past 4,300 digits."""

import asyncpg
import pytest
from litestar import Litestar

from tests.api.client import client_for
from tests.api.support import call, console_admin, project_all

pytestmark = [pytest.mark.api, pytest.mark.integration]

PAST_INT_LIMIT = "9" * 5000  # more digits than int() converts (sys.get_int_max_str_digits())
ENVIRONMENTS = "/api/v1/asset/environment"


async def _events(pool: asyncpg.Pool) -> int:
    count: int = await pool.fetchval("SELECT count(*) FROM events")
    return count


@pytest.mark.parametrize("position", [PAST_INT_LIMIT, "9" * 20, "9223372036854775808"])
async def test_a_log_position_past_64_bits_is_a_400_and_nothing_is_written(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, position: str
) -> None:
    before = await _events(clean_pool)
    refused = await call(
        app,
        "POST",
        "/api/v1/clusters",
        admin,
        headers={"X-Trainplate-Min-Position": position},
        json={"name": "c"},
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["code"] == 400
    assert await _events(clean_pool) == before


async def test_a_log_position_of_leading_zeros_is_read_as_its_number(
    app: Litestar, admin: str
) -> None:
    headers = {"X-Trainplate-Min-Position": "0" * 5000 + "1"}
    made = await call(app, "POST", "/api/v1/clusters", admin, headers=headers, json={"name": "c"})
    assert made.status_code in (200, 201, 202), made.text


async def test_a_console_edit_sent_with_a_version_past_64_bits_is_made_on_the_asset_as_it_is(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    made = await call(app, "POST", ENVIRONMENTS, admin, json={
        "meta": {"name": "e", "scope": "tenant"}, "spec": {"image": "python:3.12"},
    })  # fmt: skip
    assert made.status_code == 202, made.text
    await project_all(clean_pool)
    page = f"/console/environments/{made.json()['meta']['id']}"
    async with client_for(app) as client:
        csrf = await console_admin(client, clean_pool)
        answers = {}
        for version in (PAST_INT_LIMIT, "not a number"):  # the form's version is unreadable
            form = {"_csrf_token": csrf, "version": version, "/meta/name": "e"}
            answered = await client.post(page, data={**form, "/spec/image": "python:3.13"})
            answers[version] = (answered.status_code, "python:3.13" in answered.text)
    assert answers[PAST_INT_LIMIT] == answers["not a number"] == (200, True)


@pytest.mark.parametrize(
    ("page", "field"),
    [
        ("/console/templates/new", "/spec/environmentVariables/{}/name"),
        ("/console/compute-resources/new", "/spec/compute/extendedResources/{}/resource"),
    ],
)
async def test_a_console_form_row_past_64_bits_is_a_400_naming_the_field(
    app: Litestar, clean_pool: asyncpg.Pool, page: str, field: str
) -> None:
    async with client_for(app) as client:
        csrf = await console_admin(client, clean_pool)
        before = await _events(clean_pool)
        form = {
            "_csrf_token": csrf,
            "/meta/name": "t",
            "/scope": "tenant",
            field.format(PAST_INT_LIMIT): "x",
        }
        answered = await client.post(page, data=form)
    assert answered.status_code == 400, answered.text[:200]
    assert "at most" in answered.text
    assert await _events(clean_pool) == before
