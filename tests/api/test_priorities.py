"""The workload priority dictionary over HTTP, in Run:ai's shape, and a template's priority
taken from it."""

import pytest
from litestar import Litestar

from tests.api.support import call

pytestmark = [pytest.mark.api, pytest.mark.integration]

PRIORITIES = "/api/v1/workload-priorities"
NAMES = ["very-low", "low", "medium-low", "medium", "medium-high", "high", "very-high"]


async def test_the_dictionary_is_read_sorted_and_filtered(app: Litestar, admin: str) -> None:
    listed = await call(app, "GET", PRIORITIES, admin)  # checked against Run:ai's schema
    assert listed.status_code == 200, listed.text
    entries = listed.json()["priorities"]
    assert [p["name"] for p in entries] == NAMES
    assert [p["value"] for p in entries] == [25, 40, 65, 80, 90, 125, 150]
    assert {p["source"] for p in entries} == {"Run:ai"}
    by_name = await call(app, "GET", PRIORITIES, admin, params={"sortBy": "name"})
    assert [p["name"] for p in by_name.json()["priorities"]] == sorted(NAMES)
    descending = await call(
        app, "GET", PRIORITIES, admin, params={"sortBy": "value", "sortOrder": "desc"}
    )
    assert [p["name"] for p in descending.json()["priorities"]] == NAMES[::-1]
    medium = await call(
        app, "GET", PRIORITIES, admin, params={"filterBy": "name=^medium,value>=80"}
    )
    assert [p["name"] for p in medium.json()["priorities"]] == ["medium", "medium-high"]


@pytest.mark.parametrize(
    ("params", "pointer"),
    [
        ({"sortBy": "colour"}, "sortBy"),
        ({"filterBy": "name==low,colour==red"}, "/filterBy/1"),
        ({"filterBy": "value>=many"}, "/filterBy/0"),
    ],
)
async def test_a_bad_query_is_refused_naming_it(
    app: Litestar, admin: str, params: dict[str, str], pointer: str
) -> None:
    refused = await call(app, "GET", PRIORITIES, admin, params=params)
    assert refused.status_code == 400, refused.text
    assert [e["pointer"] for e in refused.json()["errors"]] == [pointer]


async def test_the_dictionary_needs_a_token(app: Litestar) -> None:
    assert (await call(app, "GET", PRIORITIES, None)).status_code == 401
