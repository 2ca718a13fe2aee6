"""Signing out of the console ends that session on the server: its cookie, replayed, opens no
page, and the access token sealed in it is refused by the API; another session of the same
application, and the application's API tokens, stay good."""

import re
from uuid import uuid4

import asyncpg
import httpx
import pytest
from litestar import Litestar
from litestar.middleware.session.client_side import ClientSideSessionBackend

from domain.values import TENANT_ADMIN
from infra.console.authentication import TOKEN
from infra.console.session import SESSION_COOKIE, session_config
from tests.api.client import client_for
from tests.api.support import AUTH, token_for

pytestmark = [pytest.mark.api, pytest.mark.integration]

_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')


async def _signed_in(client: httpx.AsyncClient, name: str) -> dict[str, str]:
    """Sign in through the console's form; the cookies the browser then holds."""
    page = await client.get("/console/sign-in")
    found = _CSRF.search(page.text)
    assert found is not None, page.text
    form = {"client_id": name, "client_secret": f"{name}-secret", "_csrf_token": found[1]}
    answer = await client.post("/console/sign-in", data=form)
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == "/console/templates"
    return dict(client.cookies)


def _token_in(cookies: dict[str, str]) -> str:
    """The access token the sealed session cookie holds (the test has the key)."""
    backend = ClientSideSessionBackend(config=session_config(AUTH))
    token = backend.load_data([cookies[SESSION_COOKIE].strip('"').encode()])[TOKEN]
    assert isinstance(token, str)
    return token


def _browser(app: Litestar, cookies: dict[str, str] | None = None) -> httpx.AsyncClient:
    """A client of its own (its own cookies) over the app, whose lifespan the test holds."""
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]  # ASGI types differ in name only
    return httpx.AsyncClient(transport=transport, base_url="http://testserver", cookies=cookies)


async def _page(app: Litestar, cookies: dict[str, str]) -> httpx.Response:
    """A console page asked for with these cookies, as a client replaying them would."""
    async with _browser(app, cookies) as client:
        return await client.get("/console/templates")


async def _api(client: httpx.AsyncClient, token: str) -> int:
    answer = await client.get(
        "/api/v1/workload-templates", headers={"authorization": f"Bearer {token}"}
    )
    return answer.status_code


async def test_a_signed_out_session_and_its_token_are_refused_and_the_others_are_not(
    app: Litestar, clean_pool: asyncpg.Pool
) -> None:
    name = f"console-{uuid4().hex[:8]}"
    api_token = await token_for(clean_pool, name, (TENANT_ADMIN,))
    async with client_for(app) as api, _browser(app) as first, _browser(app) as second:
        leaving = await _signed_in(first, name)
        staying = await _signed_in(second, name)
        held = _token_in(leaving)
        assert (await _page(app, leaving)).status_code == 200
        assert await _api(api, held) == 200

        page = await first.get("/console/templates")
        csrf = _CSRF.search(page.text)
        assert csrf is not None
        out = await first.post("/console/sign-out", data={"_csrf_token": csrf[1]})
        assert out.status_code == 303
        assert out.headers["location"] == "/console/sign-in"

        replayed = await _page(app, leaving)
        assert replayed.status_code == 303, replayed.text
        assert replayed.headers["location"] == "/console/sign-in"
        assert await _api(api, held) == 401
        assert (await _page(app, staying)).status_code == 200
        assert await _api(api, _token_in(staying)) == 200
        assert await _api(api, api_token) == 200
