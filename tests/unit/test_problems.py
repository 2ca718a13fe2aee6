"""Errors become RFC 9457 problem documents that are also Run:ai error bodies."""

from uuid import UUID

import httpx
import msgspec
from litestar import Litestar, get, post
from litestar.params import JSONBody

from infra.errors import StoreUnavailableError
from infra.http.problems import EXCEPTION_HANDLERS
from services.errors import VersionConflictError

STREAM = UUID(int=7)


class Body(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    name: str
    gpu_devices_request: int


@get("/conflict", sync_to_thread=False)
def conflict() -> None:
    raise VersionConflictError(STREAM, expected=3, actual=5)


@get("/store-down", sync_to_thread=False)
def store_down() -> None:
    raise StoreUnavailableError("append")


@get("/bug", sync_to_thread=False)
def bug() -> None:
    raise RuntimeError("secret internals: password=hunter2")


@post("/things", sync_to_thread=False)
def create(data: JSONBody[Body]) -> dict[str, str]:
    return {"name": data.name}


APP = Litestar(
    route_handlers=[conflict, store_down, bug, create],
    exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
)


async def call(method: str, path: str, **kwargs: object) -> httpx.Response:
    transport = httpx.ASGITransport(app=APP)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return await client.request(method, path, **kwargs)  # type: ignore[arg-type]


async def test_a_version_conflict_that_reaches_a_client_is_503_with_its_versions() -> None:
    response = await call("GET", "/conflict")
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    assert int(response.headers["retry-after"]) > 0
    body = response.json()
    assert body["type"] == "/problems/version-conflict"
    assert (body["status"], body["code"]) == (503, 503)
    assert "at version 3 and found at version 5" in body["message"]
    assert (body["expected"], body["actual"], body["stream_id"]) == (3, 5, str(STREAM))


async def test_an_unreachable_store_is_503() -> None:
    response = await call("GET", "/store-down")
    assert response.status_code == 503
    assert response.json()["code"] == 503


async def test_an_unexpected_error_is_500_and_says_nothing_internal() -> None:
    response = await call("GET", "/bug")
    assert response.status_code == 500
    assert response.json()["message"] == "Something went wrong."
    assert "hunter2" not in response.text
    assert "RuntimeError" not in response.text


async def test_an_unknown_route_is_a_run_ai_404() -> None:
    response = await call("GET", "/nowhere")
    assert response.status_code == 404
    body = response.json()
    assert body["code"] == 404
    assert body["message"] == "Resource id not found."
    assert body["type"] == "/problems/not-found"


async def test_an_invalid_body_names_each_field_as_a_json_pointer() -> None:
    response = await call("POST", "/things", json={"name": "x", "gpuDevicesRequest": "two"})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == 400
    assert "/gpuDevicesRequest" in body["message"]
    assert [e["pointer"] for e in body["errors"]] == ["/gpuDevicesRequest"]
