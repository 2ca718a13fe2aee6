"""Input of any shape gets a clear 4xx naming what is wrong, never a 500, and writes nothing.

Each case is the request an attacker or a fuzzer sent: a NUL character (which PostgreSQL's jsonb
and text refuse, so an event carrying one would wedge every read model that applies it), numbers
past 64 bits, JSON nested a thousand levels deep, a body that is not JSON, a 20-digit log position,
a name of 3,000 characters or one that reads as another, at every edge that takes a name, and
every sort key and filter field a list's document gives it.
"""

import json
from typing import Any

import asyncpg
import pytest
from litestar import Litestar

from projections.list_grammar import OPERATORS
from tests.api.client import client_for
from tests.api.support import call, project_all, sent
from tests.openapi import DOCUMENT

pytestmark = [pytest.mark.api, pytest.mark.integration]

ENVIRONMENTS = "/api/v1/asset/environment"
ENVIRONMENT: dict[str, Any] = {
    "meta": {"name": "ok", "scope": "tenant"},
    "spec": {"image": "python:3.12"},
}


async def events(pool: asyncpg.Pool) -> int:
    count: int = await pool.fetchval("SELECT count(*) FROM events")
    return count


def problem_naming(response: Any, status: int, pointer: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert (body["status"], body["code"]) == (status, status)
    assert [error["pointer"] for error in body["errors"]] == [pointer]
    return str(body["message"])


async def test_a_nul_character_anywhere_in_a_body_is_refused_naming_it(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    before = await events(clean_pool)
    image = {**ENVIRONMENT, "spec": {"image": "img\u0000x"}}
    refused = await call(app, "POST", ENVIRONMENTS, admin, json=image)
    assert "NUL" in problem_naming(refused, 400, "/spec/image")
    named = {**ENVIRONMENT, "meta": {"name": "a\u0000", "scope": "tenant"}}
    problem_naming(await call(app, "POST", ENVIRONMENTS, admin, json=named), 400, "/meta/name")
    variables = {
        **ENVIRONMENT,
        "spec": {"image": "i", "environmentVariables": [{"name": "X", "value": "\u0000"}]},
    }
    refused = await call(app, "POST", ENVIRONMENTS, admin, json=variables)
    problem_naming(refused, 400, "/spec/environmentVariables/0/value")
    key = {**ENVIRONMENT, "spec": {"image": "i", "k\u0000": 1}}
    problem_naming(await call(app, "POST", ENVIRONMENTS, admin, json=key), 400, "/spec/k\u0000")
    assert await events(clean_pool) == before


async def test_after_a_refused_nul_every_read_model_keeps_up(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """The finding itself: a NUL accepted once wedged the asset catalogue for good."""
    await call(app, "POST", ENVIRONMENTS, admin, json={**ENVIRONMENT, "spec": {"image": "\u0000"}})
    made = await call(app, "POST", ENVIRONMENTS, admin, json=ENVIRONMENT)
    assert made.status_code == 202, made.text
    await project_all(clean_pool)
    found = await call(app, "GET", f"{ENVIRONMENTS}/{made.json()['meta']['id']}", admin)
    assert found.status_code == 200, found.text


async def test_a_nul_or_broken_utf8_in_a_path_or_query_is_refused(
    app: Litestar, admin: str
) -> None:
    refused = await call(app, "GET", f"{ENVIRONMENTS}?name=a%00b", admin)
    assert "NUL" in problem_naming(refused, 400, "name")
    refused = await call(app, "GET", f"{ENVIRONMENTS}?name=%ff", admin)
    assert "UTF-8" in refused.json()["message"]
    assert refused.status_code == 400
    refused = await call(app, "GET", "/api/v1/org-unit/departments/a%00b", admin)
    problem_naming(refused, 400, "path")


async def test_numbers_past_64_bits_are_refused_naming_the_field(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    before = await events(clean_pool)
    body = {**ENVIRONMENT, "spec": {"image": "i", "runAsUid": 10**20}}
    refused = await call(app, "POST", ENVIRONMENTS, admin, json=body)
    assert "out of range" in problem_naming(refused, 400, "/spec/runAsUid")
    assert await events(clean_pool) == before
    refused = await call(app, "GET", "/api/v1/org-unit/departments/123456789012345678901", admin)
    assert refused.status_code in (400, 404), refused.text


async def test_json_nested_a_thousand_levels_deep_is_refused(app: Litestar) -> None:
    deep = b'{"a":' * 1000 + b"1" + b"}" * 1000
    headers = {"content-type": "application/json"}
    refused = await call(app, "POST", "/api/v1/token", None, headers=headers, content=deep)
    assert "deeper" in refused.json()["message"]
    assert refused.status_code == 400
    deeper = b"[" * 5000 + b"]" * 5000  # past the decoder's own recursion limit
    refused = await call(app, "POST", "/api/v1/token", None, headers=headers, content=deeper)
    assert refused.status_code == 400, refused.text


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml", None]
)
async def test_a_body_that_is_not_json_is_415(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, content_type: str | None
) -> None:
    before = await events(clean_pool)
    headers = {} if content_type is None else {"content-type": content_type}
    body = b'{"meta": {"name": "x", "scope": "tenant"}, "spec": {"image": "i"}}'
    refused = await call(app, "POST", ENVIRONMENTS, admin, headers=headers, content=body)
    assert refused.status_code == 415, refused.text
    assert refused.json()["code"] == 415
    assert await events(clean_pool) == before


async def test_a_log_position_past_64_bits_is_refused_even_unauthenticated(
    app: Litestar,
) -> None:
    headers = {"X-Trainplate-Min-Position": "12345678901234567890"}
    refused = await call(app, "GET", "/healthz", None, headers=headers)
    problem_naming(refused, 400, "X-Trainplate-Min-Position")
    refused = await call(app, "GET", "/healthz", None, headers={"X-Trainplate-Min-Position": "-1"})
    assert refused.status_code == 400


async def test_a_log_position_in_digits_other_than_ascii_is_refused(app: Litestar) -> None:
    """Latin-1's "²" is a digit to str.isdigit(), not to int()."""
    for digits in (b"\xb2", b"1\xb9", b"\xbd"):
        headers: Any = {"X-Trainplate-Min-Position": digits}
        refused = await call(app, "GET", "/healthz", None, headers=headers)
        problem_naming(refused, 400, "X-Trainplate-Min-Position")


async def test_a_grant_type_of_any_shape_but_a_string_is_400_naming_it(app: Litestar) -> None:
    for grant in ([], {}, 1, None, ["app_token"], {"app_token": 1}):
        body = {"grantType": grant, "appId": "x", "appSecret": "y"}
        refused = await call(app, "POST", "/api/v1/token", None, json=body)
        problem_naming(refused, 400, "/grantType")


async def test_a_cursor_past_64_bits_is_refused_naming_it(app: Litestar, admin: str) -> None:
    refused = await call(app, "GET", "/api/v1/audit/events?after=99999999999999999999", admin)
    assert "out of range" in problem_naming(refused, 400, "after")
    refused = await call(app, "GET", f"/api/v1/asset/{'9' * 5000}/history", admin)
    assert refused.status_code in (400, 404), refused.text


async def test_a_time_without_a_zone_is_read_as_utc(app: Litestar, admin: str) -> None:
    made = await call(app, "POST", ENVIRONMENTS, admin, json=ENVIRONMENT)
    asset_id = made.json()["meta"]["id"]
    before = await call(
        app, "GET", f"/api/v1/asset/{asset_id}/as-of?time=2000-01-01T00:00:00", admin
    )
    assert before.status_code in (400, 404), before.text  # it did not exist yet: not a 500
    now = await call(app, "GET", f"/api/v1/asset/{asset_id}/as-of?time=2999-01-01T00:00:00", admin)
    assert now.status_code == 200, now.text
    listed = await call(
        app,
        "GET",
        "/api/v1/workload-templates?filterBy=createdAt>=2000-01-01T00:00:00",
        admin,
    )
    assert listed.status_code == 200, listed.text


async def test_an_org_unit_body_with_malformed_resources_is_400(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """`resources` is also the name of a dependency of the handlers: an invalid value there was
    taken for the server's own failure (500)."""
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "c"})).json()
    malformed: list[object] = ["abc", {}, [1]]
    for resources in malformed:
        body = {"name": "d", "clusterId": cluster["uuid"], "resources": resources}
        refused = await call(app, "POST", "/api/v1/org-unit/departments", admin, json=body)
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"].startswith("/resources")


async def test_an_access_rule_id_past_int32_is_not_found(app: Litestar, admin: str) -> None:
    for method in ("GET", "DELETE"):
        path = "/api/v1/authorization/access-rules/27038270741040"
        assert (await call(app, method, path, admin)).status_code == 404


async def test_an_unauthenticated_request_never_waits_for_a_log_position(app: Litestar) -> None:
    headers = {"X-Trainplate-Min-Position": str(10**15)}  # a position the log will not reach
    answered = await call(app, "GET", "/healthz", None, headers=headers)
    assert answered.status_code == 200
    assert "X-Trainplate-Stale" not in answered.headers  # no wait ran (and ran out)


async def test_a_body_past_ten_mebibytes_is_413(app: Litestar, admin: str) -> None:
    huge = b'{"meta": {"name": "' + b"x" * (10 * 1024 * 1024) + b'"}}'
    headers = {"content-type": "application/json"}
    refused = await call(app, "POST", ENVIRONMENTS, admin, headers=headers, content=huge)
    assert refused.status_code == 413, refused.text[:200]


# A name past what a btree index holds: 3,000 distinct characters, 9,000 bytes that do not
# compress (PostgreSQL refused such a one as "index row requires 12048 bytes": a 500); one past
# every bound that any pattern takes; look-alikes: a bidi override, a zero-width space, a line
# break.
LONG = "".join(map(chr, range(0x4E00, 0x4E00 + 3000)))
UNNAMEABLE = (LONG, "n" * 256, "ab\u202ecd", "a\u200bb", "a\nb")
Body = dict[str, Any]


async def named_edges(app: Litestar, admin: str) -> list[tuple[str, str, Any, str]]:
    """Every create edge that takes a name: method, path, the body for a name, the pointer."""
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "c"})).json()
    secret = {"meta": {"name": "s", "scope": "tenant"}, "spec": {"user": "u", "password": "p"}}
    made = await call(app, "POST", "/api/v1/asset/credentials/password", admin, json=secret)
    sources: dict[str, Body] = {
        "nfs": {"server": "nfs.example.com", "path": "/exports", "mountPath": "/data"},
        "pvc": {"path": "/ckpt", "claimInfo": {"size": "1Gi"}},
        "s3": {"bucket": "datasets", "path": "/imagenet"},
        "git": {"repository": "https://example.com/a.git", "path": "/code"},
        "host-path": {"path": "/mnt/ssd", "mountPath": "/scratch"},
        "config-map": {"configMap": "train-config", "mountPath": "/etc/train"},
        "secrets": {"credentialAssetId": made.json()["meta"]["id"], "mountPath": "/secrets"},
    }
    credentials: dict[str, Body] = {
        "access-key": {"accessKeyId": "a", "secretAccessKey": "b"},
        "password": {"user": "u", "password": "p"},
        "docker-registry": {"user": "u", "password": "p", "url": "nvcr.io"},
        "generic-secret": {"keyValuePairs": [{"key": "k", "value": "v"}]},
        "ngc-api-key": {"ngc_api_key": "k"},
    }
    registry = {"url": "https://r.example.com", "credentialKind": "password", "user": "u",
                "password": "p"}  # fmt: skip
    framework = {"distributedFramework": "PyTorch", "numWorkers": 2}
    assets: dict[str, Body] = {
        "environment": {"image": "python:3.12"},
        "compute": {"gpuDevicesRequest": 1},
        "registries": registry,
        **{f"datasource/{kind}": spec for kind, spec in sources.items()},
        **{f"credentials/{kind}": spec for kind, spec in credentials.items()},
    }

    def asset(spec: Body) -> Any:
        return lambda name: {"meta": {"name": name, "scope": "tenant"}, "spec": spec}

    unit = cluster["uuid"]
    return [
        ("POST", "/api/v1/workload-templates/distributed", lambda name: {
            "meta": {"name": name, "scopeType": "tenant"}, "spec": framework}, "/meta/name"),
        *[("POST", f"/api/v1/asset/{path}", asset(spec), "/meta/name")
          for path, spec in assets.items()],
        ("POST", "/api/v1/clusters", lambda name: {"name": name}, "/name"),
        ("POST", "/api/v1/org-unit/departments", lambda n: {"name": n, "clusterId": unit}, "/name"),
        ("POST", "/api/v1/org-unit/projects", lambda n: {"name": n, "clusterId": unit}, "/name"),
        ("POST", "/api/v1/node-pools", lambda n: {
            "name": n, "clusterId": unit, "labelKey": "k", "labelValue": "v"}, "/name"),
        ("POST", "/api/v1/storage-class-configuration", lambda n: {
            "scopeType": "cluster", "scopeId": unit, "name": n}, "/name"),
        ("POST", "/api/v1/service-accounts", lambda name: {"name": name}, "/name"),
        ("POST", "/api/v1/apps", lambda name: {"name": name}, "/name"),
        ("POST", "/api/v1/authorization/access-rules", lambda name: {
            "subjectId": name, "subjectType": "user", "roleId": 4, "scopeId": "tenant",
            "scopeType": "tenant"}, "/subjectId"),
        ("PUT", "/api/v2/policy/distributed", lambda name: {
            "meta": {"name": name, "scope": "tenant"}, "policy": {}}, "/meta/name"),
    ]  # fmt: skip


async def test_a_name_too_long_or_with_unseen_characters_is_refused_at_every_create(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    edges = await named_edges(app, admin)
    before = await events(clean_pool)
    for method, path, body, pointer in edges:
        for name in UNNAMEABLE:
            refused = await call(app, method, path, admin, json=body(name))
            problem_naming(refused, 400, pointer)
    assert await events(clean_pool) == before
    for i, (method, path, body, _) in enumerate(edges):  # each body is otherwise a valid one
        made = await call(app, method, path, admin, json=body(f"ok-{i}"))
        assert made.status_code < 300, (path, made.text)


async def test_a_rename_is_held_to_the_same_rule(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    templates = "/api/v1/workload-templates/distributed"
    framework = {"distributedFramework": "PyTorch", "numWorkers": 2}
    nfs = {"server": "nfs.example.com", "path": "/exports", "mountPath": "/data"}
    made = {
        templates: {"meta": {"name": "t", "scopeType": "tenant"}, "spec": framework},
        ENVIRONMENTS: ENVIRONMENT,
        "/api/v1/asset/datasource/nfs": {"meta": {"name": "d", "scope": "tenant"}, "spec": nfs},
        "/api/v1/asset/credentials/password": {
            "meta": {"name": "p", "scope": "tenant"}, "spec": {"user": "u", "password": "p"}},
        "/api/v1/asset/registries": {"meta": {"name": "r", "scope": "tenant"}, "spec": {
            "url": "https://r.example.com", "credentialKind": "password", "user": "u",
            "password": "p"}},
        "/api/v1/clusters": {"name": "c"},
    }  # fmt: skip
    ids = {}
    for path, body in made.items():
        created = (await call(app, "POST", path, admin, json=body)).json()
        ids[path] = created["uuid"] if "uuid" in created else created["meta"]["id"]
    renames: list[tuple[str, str, Any, str]] = [
        ("PUT", templates, lambda n: {"meta": {"name": n}, "spec": framework}, "/meta/name"),
        ("PATCH", templates, lambda n: {"meta": {"name": n}}, "/meta/name"),
        ("PUT", ENVIRONMENTS, lambda n: {"meta": {"name": n}, "spec": {"image": "i"}},
         "/meta/name"),
        ("PUT", "/api/v1/asset/datasource/nfs", lambda n: {"meta": {"name": n}, "spec": nfs},
         "/meta/name"),
        ("PUT", "/api/v1/asset/credentials/password", lambda n: {"meta": {"name": n}},
         "/meta/name"),
        ("PUT", "/api/v1/asset/registries", lambda n: {"meta": {"name": n}}, "/meta/name"),
        ("PUT", "/api/v1/clusters", lambda n: {"name": n}, "/name"),
    ]  # fmt: skip
    before = await events(clean_pool)
    for method, path, body, pointer in renames:
        for name in UNNAMEABLE:
            refused = await call(app, method, f"{path}/{ids[path]}", admin, json=body(name))
            problem_naming(refused, 400, pointer)
    assert await events(clean_pool) == before
    for method, path, body, _ in renames:
        renamed = await call(app, method, f"{path}/{ids[path]}", admin, json=body(f"{method}-ok"))
        assert renamed.status_code < 300, (path, renamed.text)


async def test_a_name_no_template_or_data_volume_could_have_is_not_said_to_be_available(
    app: Litestar, admin: str
) -> None:
    cluster = (await call(app, "POST", "/api/v1/clusters", admin, json={"name": "c"})).json()
    for name in UNNAMEABLE:
        query = {"templateName": name, "scopeType": "tenant"}
        asked = await call(app, "GET", "/api/v1/workload-templates/name-availability", admin,
                           params=query)  # fmt: skip
        problem_naming(asked, 400, "/templateName")
        query = {"dataName": name, "clusterId": cluster["uuid"]}
        asked = await call(app, "GET", "/api/v1/datavolumes/name-availability", admin, params=query)
        problem_naming(asked, 400, "/dataName")


def lists_by(document: Body, parameter: str) -> dict[str, tuple[list[Any], Body]]:
    """Each list of the served document that takes `parameter`: its schema's enum (if any),
    and the query parameters it requires (the first value each allows; a time range's `start`
    and `end`, this century)."""
    found = {}
    for path, item in document["paths"].items():
        given = {p["name"]: p for p in item.get("get", {}).get("parameters", [])}
        if parameter in given:
            required = {
                name: _required_value(name, p["schema"])
                for name, p in given.items()
                if p.get("required") and p["in"] == "query"
            }
            found[path] = (given[parameter]["schema"].get("enum", []), required)
    return found


def _required_value(name: str, schema: Body) -> Any:
    if schema.get("format") == "date-time":
        return "2100-01-01T00:00:00Z" if name == "end" else "2000-01-01T00:00:00Z"
    return schema["enum"][0]


async def test_every_documented_sort_key_of_every_list_answers(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool
) -> None:
    """Each `sortBy` value the served document gives a list, in each order, sorts it (ordering
    by a constant, `currentNodepool` was a 500); a value it does not give is a 400 naming it."""
    template = {
        "meta": {"name": "t", "scopeType": "tenant"},
        "spec": {"distributedFramework": "JAX"},
    }
    await call(app, "POST", "/api/v1/workload-templates/distributed", admin, json=template)
    await project_all(clean_pool)
    async with client_for(app) as client:
        document = (await sent(client, "GET", "/schema/openapi.json", admin)).json()
        walked = []
        for path, (keys, required) in lists_by(document, "sortBy").items():
            for key in [key for key in keys if key is not None]:
                for order in ("asc", "desc"):
                    query = {**required, "sortBy": key, "sortOrder": order}
                    answered = await sent(client, "GET", path, admin, params=query)
                    assert answered.status_code == 200, (path, key, answered.text)
                walked.append(f"{path} {key}")
            query = {**required, "sortBy": "nodepool"}
            problem_naming(await sent(client, "GET", path, admin, params=query), 400, "sortBy")
    assert "/api/v1/workloads/pods currentNodepool" in walked
    assert len(walked) > 30


# Each operator with a value text and numbers take; two that compare, with a time too.
FILTER_CASES = [
    *[(operator, "1") for operator in OPERATORS],
    *[(operator, "2026-01-01T00:00:00Z") for operator in ("==", ">=")],
]


def documented_filters() -> dict[str, list[str]]:
    """Each list's `filterBy` fields, as Run:ai's document gives them (in its item pattern)."""
    document = json.loads(DOCUMENT.read_text())
    shared = document["components"]["parameters"]
    found = {}
    for path, item in document["paths"].items():
        for given in item.get("get", {}).get("parameters", []):
            parameter = shared[given["$ref"].split("/")[-1]] if "$ref" in given else given
            schema = parameter.get("schema", {})
            pattern = schema.get("items", schema).get("pattern", "")
            if parameter["name"] == "filterBy" and pattern.startswith("^("):
                found[path] = pattern[2 : pattern.index(")")].split("|")
    return found


async def test_every_documented_filter_of_every_list_answers_or_names_the_item(
    app: Litestar, admin: str
) -> None:
    """Each field Run:ai's document gives a list served here, with each operator, as a time and
    as a number: an answer, or a 400 naming the item (a field not kept, a time for a number)."""
    filters = documented_filters()
    async with client_for(app) as client:
        document = (await sent(client, "GET", "/schema/openapi.json", admin)).json()
        served = lists_by(document, "filterBy")
        # A count reads its list's filter as the list does: the lists are walked.
        lists = {path: given for path, given in served.items() if not path.endswith("/count")}
        assert len(lists) >= 8
        for path, (_, required) in lists.items():
            for field in filters.get(path, []):
                for operator, value in FILTER_CASES:
                    query = {**required, "filterBy": f"{field}{operator}{value}"}
                    answered = await sent(client, "GET", path, admin, params=query)
                    if answered.status_code != 200:
                        problem_naming(answered, 400, "/filterBy/0")
