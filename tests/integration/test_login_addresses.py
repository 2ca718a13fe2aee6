"""The per-address login limit keys on the connection's peer, over a real `trainplate serve api`:
a caller on this machine (a local workload, say) cannot pose as other addresses with
X-Forwarded-For, unless the operator names the proxy that sets it; under either ASGI server."""

from collections.abc import Iterator

import asyncpg
import httpx
import pytest

from infra.cli.embedded import free_port
from tests.api.support import AUTH
from tests.processes import serve, wait_until_ready

pytestmark = pytest.mark.integration

LIMIT = 3


def _api(postgres_url: str, nats_url: str, **settings: str) -> Iterator[str]:
    port = free_port()
    process = serve(
        "api",
        postgres_url,
        nats_url,
        API_PORT=str(port),
        AUTH__SIGNING_KEY=AUTH.signing_key or "",
        AUTH__LOGIN_FAILURES_PER_ADDRESS=str(LIMIT),
        AUTH__LOGIN_FAILURES_PER_CLIENT="1000",
        **settings,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(f"{url}/healthz", process, within_s=60)
        yield url
    finally:
        process.terminate()
        process.wait(30)


# Both ASGI servers the API may run under (`TRAINPLATE_API_SERVER`) read the peer alike.
SERVERS = ["uvicorn", "granian"]


@pytest.fixture(scope="module", params=SERVERS)
def api(
    request: pytest.FixtureRequest, postgres_url: str, nats_url: str, pool: asyncpg.Pool
) -> Iterator[str]:
    yield from _api(postgres_url, nats_url, API_SERVER=request.param)


@pytest.fixture(scope="module", params=SERVERS)
def api_behind_proxy(
    request: pytest.FixtureRequest, postgres_url: str, nats_url: str, pool: asyncpg.Pool
) -> Iterator[str]:
    yield from _api(
        postgres_url, nats_url, API_SERVER=request.param, API_TRUSTED_PROXIES="127.0.0.1"
    )


def _wrong_logins(url: str, count: int, prefix: str) -> list[int]:
    """Failed logins, each with another client id and another claimed address."""
    statuses = []
    with httpx.Client(base_url=url, timeout=30) as http:
        for i in range(count):
            body = {"grantType": "app_token", "AppId": f"{prefix}-{i}", "AppSecret": "wrong"}
            claimed = {"x-forwarded-for": f"198.51.100.{i + 1}"}
            statuses.append(http.post("/api/v1/token", json=body, headers=claimed).status_code)
    return statuses


def test_a_forwarded_address_from_an_untrusted_peer_does_not_escape_the_limit(api: str) -> None:
    statuses = _wrong_logins(api, LIMIT + 2, "untrusted")
    assert statuses == [401] * LIMIT + [429, 429]


def test_behind_a_named_proxy_each_forwarded_address_has_its_own_limit(
    api_behind_proxy: str,
) -> None:
    statuses = _wrong_logins(api_behind_proxy, LIMIT + 2, "proxied")
    assert statuses == [401] * (LIMIT + 2)
