"""The bearer guard: no valid token, no entry, and the 401 says why without echoing the token."""

from uuid import UUID

import httpx
import pytest
from litestar import Litestar, Request, get
from litestar.datastructures import State
from litestar.middleware import DefineMiddleware

from infra.http.auth import BearerAuthenticationMiddleware, Principal
from infra.http.problems import EXCEPTION_HANDLERS
from infra.security.access_tokens import TokenIssuer
from infra.settings import AuthSettings

AUTH = AuthSettings(signing_key="k" * 48)
APP_ID = UUID(int=42)


@get("/open", sync_to_thread=False, exclude_from_auth=True)
def open_route() -> dict[str, str]:
    return {"open": "yes"}


@get("/closed", sync_to_thread=False)
def closed_route(request: Request[Principal, dict[str, object], State]) -> dict[str, str]:
    return {"subject": request.user.subject, "clientId": request.user.client_id}


def app(issuer: TokenIssuer | None) -> Litestar:
    return Litestar(
        route_handlers=[open_route, closed_route],
        middleware=[DefineMiddleware(BearerAuthenticationMiddleware, issuer=issuer)],
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
    )


async def call(path: str, authorization: str | None, issuer: TokenIssuer | None) -> httpx.Response:
    headers = {"authorization": authorization} if authorization is not None else {}
    transport = httpx.ASGITransport(app=app(issuer))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return await client.get(path, headers=headers)


def token(settings: AuthSettings = AUTH) -> str:
    return TokenIssuer(settings).issue(APP_ID, "ci-bot").access_token


async def test_a_valid_token_names_the_caller() -> None:
    response = await call("/closed", f"Bearer {token()}", TokenIssuer(AUTH))
    assert response.status_code == 200
    assert response.json() == {"subject": str(APP_ID), "clientId": "ci-bot"}


async def test_routes_that_opt_out_need_no_token() -> None:
    response = await call("/open", None, TokenIssuer(AUTH))
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("authorization", "reason"),
    [
        (None, "Authorization: Bearer"),
        ("Basic dXNlcjpwYXNz", "Authorization: Bearer"),
        ("Bearer ", "Authorization: Bearer"),
        ("Bearer not-a-jwt", "malformed"),
        (f"Bearer {token(AuthSettings(signing_key='x' * 48))}", "signature"),
        (f"Bearer {token(AuthSettings(signing_key='k' * 48, audience='other'))}", "audience"),
        (f"Bearer {token(AuthSettings(signing_key='k' * 48, issuer='elsewhere'))}", "issuer"),
        (f"Bearer {token(AuthSettings(signing_key='k' * 48, token_ttl_s=-60))}", "expired"),
    ],
)
async def test_no_valid_token_is_401_saying_why(authorization: str | None, reason: str) -> None:
    response = await call("/closed", authorization, TokenIssuer(AUTH))
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == 401
    assert reason in body["message"]
    if authorization and len(authorization) > 20:
        assert authorization.split(" ", 1)[1] not in response.text


async def test_without_a_signing_key_protected_routes_are_503() -> None:
    response = await call("/closed", f"Bearer {token()}", None)
    assert response.status_code == 503
