"""An id a request names that belongs to a stream of another kind (a cluster id that is an
environment's, a data volume id that is a template's) is answered as the unknown id it is for
that kind: a 404 or the field's 400, never a 422 that quotes the other stream's events, and to a
caller without roles no differently from an id nobody holds."""

from uuid import uuid4

import asyncpg
import pytest
from litestar import Litestar

from tests.api.support import call, token_for
from tests.api.test_workloads import setup, submission

pytestmark = [pytest.mark.api, pytest.mark.integration]

ENVIRONMENTS = "/api/v1/asset/environment"


async def _environment(app: Litestar, admin: str) -> str:
    made = await call(app, "POST", ENVIRONMENTS, admin, json={
        "meta": {"name": "hidden", "scope": "tenant"}, "spec": {"image": "python:3.12"},
    })  # fmt: skip
    assert made.status_code == 202, made.text
    return str(made.json()["meta"]["id"])


async def test_a_cluster_id_that_is_another_streams_is_no_cluster_to_a_caller_without_roles(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    hidden = await _environment(app, admin)
    nobody = await token_for(clean_pool, "nobody", ())
    for method, body in (("DELETE", None), ("PUT", {"name": "x"})):
        unknown = await call(app, method, f"/api/v1/clusters/{uuid4()}", nobody, json=body)
        foreign = await call(app, method, f"/api/v1/clusters/{hidden}", nobody, json=body)
        assert unknown.status_code == foreign.status_code == 404, foreign.text
        assert "Environment" not in foreign.text


async def test_a_department_under_a_cluster_id_that_is_another_streams_names_the_field(
    app: Litestar, admin: str
) -> None:
    hidden = await _environment(app, admin)
    refused = await call(
        app, "POST", "/api/v1/org-unit/departments", admin, json={"name": "d", "clusterId": hidden}
    )
    assert refused.status_code in (400, 404), refused.text
    assert "Environment" not in refused.text
    assert "clusterId" in refused.text


async def test_a_submission_mounting_an_id_of_another_kind_as_a_data_volume_is_a_400(
    app: Litestar, admin: str
) -> None:
    found = await setup(app, admin)
    answers = []
    for volume_id in (str(uuid4()), found["template"]["meta"]["id"]):
        storage = {"dataVolume": [{"id": volume_id, "mountPath": "/data"}]}
        body = submission(found, spec={"storage": storage})
        answered = await call(app, "POST", "/api/v1/workloads/distributed", admin, json=body)
        assert answered.status_code == 400, answered.text
        assert "Template" not in answered.text
        answers.append(answered.json()["code"])
    assert answers[0] == answers[1]
