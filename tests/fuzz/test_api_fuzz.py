"""The API under a property-based fuzzer (schemathesis), over HTTP against a real `trainplate
serve api` process: every operation of the document the service serves, with generated bodies,
paths and queries, signed in as a tenant admin over a small org, must never answer 5xx, and must
answer in the shapes the document promises.

Bounded so the tier stays a matter of minutes: TRAINPLATE_FUZZ_EXAMPLES examples per operation
(default 20), derandomized (the same cases every run, so CI cannot flake on a new one); raise it,
or set TRAINPLATE_FUZZ_SEED, to look further.
"""

import os
import time
from collections.abc import Iterator
from typing import Any

import asyncpg
import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Err
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance

from domain.values import TENANT_ADMIN
from infra.cli.embedded import free_port
from tests.api.support import AUTH, CREDENTIALS, token_for
from tests.processes import serve, wait_until_ready

pytestmark = [pytest.mark.integration, pytest.mark.fuzz]

EXAMPLES = int(os.environ.get("TRAINPLATE_FUZZ_EXAMPLES", "20"))
# Server-sent events answer until the client leaves: every case would wait out its timeout.
# tests/api/test_audit.py reads that stream.
ENDLESS = frozenset({"GET /api/v1/audit/events/stream"})
SEED = os.environ.get("TRAINPLATE_FUZZ_SEED")


@pytest.fixture(scope="module")
def api(postgres_url: str, nats_url: str) -> Iterator[str]:
    """The API, and the projector following the log as in production (reads wait for it)."""
    port = free_port()
    keys = {
        "AUTH__SIGNING_KEY": AUTH.signing_key or "",
        "CREDENTIALS__ENCRYPTION_KEY": CREDENTIALS.encryption_key or "",
    }
    process = serve("api", postgres_url, nats_url, API_PORT=str(port), **keys)
    projector = serve("projector", postgres_url, nats_url, PROJECTOR__POLL_INTERVAL_S="0.05")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(f"{url}/healthz", process, within_s=60)
        yield url
    finally:
        for child in (process, projector):
            child.terminate()
        for child in (process, projector):
            child.wait(30)


@pytest.fixture(scope="module")
async def admin_token(pool: asyncpg.Pool) -> str:
    return await token_for(pool, f"fuzz-admin-{time.monotonic_ns()}", (TENANT_ADMIN,))


@pytest.fixture(scope="module")
def headers(admin_token: str, api: str) -> dict[str, str]:
    """A tenant admin's, over an org with a cluster, a department and a project in it."""
    signed = {"authorization": f"Bearer {admin_token}"}
    with httpx.Client(base_url=api, headers=signed, timeout=30) as http:
        cluster = http.post("/api/v1/clusters", json={"name": f"fuzz-{time.monotonic_ns()}"})
        assert cluster.status_code == 201, cluster.text
        cluster_id = cluster.json()["uuid"]
        department = http.post(
            "/api/v1/org-unit/departments", json={"name": "fuzz", "clusterId": cluster_id}
        )
        assert department.status_code == 201, department.text
        body = {"name": "fuzz", "clusterId": cluster_id, "parentId": department.json()["id"]}
        assert http.post("/api/v1/org-unit/projects", json=body).status_code == 201
    return signed


def test_no_input_gets_a_server_error_or_an_undocumented_answer(
    api: str, headers: dict[str, str]
) -> None:
    served = schemathesis.openapi.from_url(f"{api}/schema/openapi.json", headers=headers)
    failures: list[str] = []
    calls = {"operations": 0, "requests": 0, "5xx": 0, "valid": 0}
    refused: list[str] = []  # requests the document allows that the decoders refused
    for result in served.get_all_operations():
        if isinstance(result, Err):  # the served document itself is broken there
            failures.append(f"the document: {result.err()}")
            continue
        operation = result.ok()
        if operation.label in ENDLESS:
            continue
        calls["operations"] += 1

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            derandomize=SEED is None,
            database=None,
            deadline=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: Any) -> None:
            calls["requests"] += 1
            response = case.call(headers=headers, timeout=30)
            calls["5xx"] += response.status_code >= 500
            if case.meta.generation.mode == GenerationMode.POSITIVE:
                calls["valid"] += 1
                if _refused_for_its_shape(response):
                    refused.append(f"{case.operation.label}: {response.text[:300]}")
            case.validate_response(
                response, checks=[not_a_server_error, response_schema_conformance]
            )

        if SEED is not None:
            fuzz = seed(int(SEED))(fuzz)
        try:
            fuzz()
        except Exception as error:  # every operation is tried; all failures are reported
            failures.append(f"{operation.label}: {str(error)[:2000]}")
    print(f"fuzz: {calls}, {len(refused)} valid requests refused for their shape")
    for line in refused:
        print("  ", line)
    assert calls["operations"] > 100  # the whole document, not a part of it
    assert not failures, "\n\n".join(failures)
    assert not refused, "the document allows what the server refuses:\n" + "\n".join(refused)


# What a generator rarely draws, sent on purpose: every sort key a list's document gives it, and
# a name of 3,000 distinct characters (9,000 bytes past any index row) in every body with one.
LONG = "".join(map(chr, range(0x4E00, 0x4E00 + 3000)))
NAMED = 3  # generated bodies per operation that takes a name


# A list's required parameters: a choice (the first taken), or the audit log's time range.
SPAN = {"start": "2000-01-01T00:00:00Z", "end": "2100-01-01T00:00:00Z"}


def _required(name: str, parameter: dict[str, Any]) -> Any:
    schema = parameter.get("schema", {})
    return schema["enum"][0] if "enum" in schema else SPAN[name]


def test_every_sort_key_and_a_name_past_every_bound_get_no_server_error(
    api: str, headers: dict[str, str]
) -> None:
    served = schemathesis.openapi.from_url(f"{api}/schema/openapi.json", headers=headers)
    checks = [not_a_server_error, response_schema_conformance]
    failures: list[str] = []
    calls = {"sorted": 0, "named": 0}
    for result in served.get_all_operations():
        if isinstance(result, Err) or result.ok().label in ENDLESS:
            continue
        operation = result.ok()
        parameters = {p.name: p.definition for p in operation.iter_parameters()}
        for key in parameters.get("sortBy", {}).get("schema", {}).get("enum", []):
            if key is None:
                continue
            calls["sorted"] += 1
            required = {
                name: _required(name, p)
                for name, p in parameters.items()
                if p.get("required") and p["in"] == "query"
            }
            case = operation.Case(query={**required, "sortBy": key, "sortOrder": "desc"})
            try:
                case.validate_response(case.call(headers=headers, timeout=30), checks=checks)
            except Exception as error:
                failures.append(f"{operation.label} sortBy={key}: {str(error)[:500]}")
        if operation.method.upper() not in ("POST", "PUT", "PATCH"):
            continue
        for case in _drawn(operation, NAMED):
            if not _name(case.body, LONG):  # a body without a name
                continue
            calls["named"] += 1
            try:
                case.validate_response(case.call(headers=headers, timeout=30), checks=checks)
            except Exception as error:
                failures.append(f"{operation.label} with a long name: {str(error)[:500]}")
    print(f"fuzz: {calls}")
    assert calls["sorted"] > 30
    assert calls["named"] > 30
    assert not failures, "\n\n".join(failures)


def _drawn(operation: Any, count: int) -> list[Any]:
    """`count` valid cases of the operation, the same ones every run."""
    drawn: list[Any] = []

    @given(case=operation.as_strategy())
    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))  # fmt: skip
    def draw(case: Any) -> None:
        drawn.append(case)

    draw()
    return drawn


def _name(body: Any, name: str) -> bool:
    """Give the body `name` where it has one (at its top or in its `meta`); whether it had."""
    for holder in (body, body.get("meta") if isinstance(body, dict) else None):
        if isinstance(holder, dict) and isinstance(holder.get("name"), str):
            holder["name"] = name
            return True
    return False


def _refused_for_its_shape(response: Any) -> bool:
    """Refused by the request decoders (Litestar's validation of the handler's types), not by a
    domain rule or the store's limits that the document's description states: the document
    allowed what the decoders do not."""
    if response.status_code != 400:
        return False
    return bool(str(response.json().get("detail", "")).startswith("Validation failed for"))
