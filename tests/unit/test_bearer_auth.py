"""The bearer guard: no valid token, no entry, and the 401 says why without echoing the token;
a token of an application that rotated its secret or was disabled since is revoked."""

from uuid import UUID

import httpx
import pytest
from litestar import Litestar, Request, get
from litestar.datastructures import State
from litestar.middleware import DefineMiddleware

from domain.events import ApplicationCreated, ApplicationSecretRotated, EventMetadata
from domain.values import ScopeRef
from infra.http.access_cache import AccessCache
from infra.http.auth import BearerAuthenticationMiddleware, Principal
from infra.http.problems import EXCEPTION_HANDLERS
from infra.postgres.read_marks import Standing
from infra.security.access_tokens import TokenIssuer
from infra.settings import AuthSettings
from services.ports.event_store import Append
from tests.fakes import InMemoryStreams

AUTH = AuthSettings(signing_key="k" * 48)
APP_ID = UUID(int=42)


@get("/open", sync_to_thread=False, exclude_from_auth=True)
def open_route() -> dict[str, str]:
    return {"open": "yes"}


@get("/closed", sync_to_thread=False)
def closed_route(request: Request[Principal, dict[str, object], State]) -> dict[str, str]:
    return {"subject": request.user.subject, "clientId": request.user.client_id}


SETUP = EventMetadata(actor_subject="setup", actor_kind="system")


async def applications(*, rotated: bool = False) -> InMemoryStreams:
    """The application streams the guard reads (an in-memory fake of the event store port)."""
    store = InMemoryStreams()
    created = ApplicationCreated(
        application_id=APP_ID, name="ci-bot", client_id="ci-bot", grants=()
    )
    await store.append(Append(APP_ID, [created], expected_version=0, metadata=SETUP))
    if rotated:
        rotation = ApplicationSecretRotated(application_id=APP_ID)
        await store.append(Append(APP_ID, [rotation], expected_version=1, metadata=SETUP))
    return store


class NoOrgTree:
    """The org tree port, which authentication never asks."""

    async def lineages(self) -> dict[ScopeRef, tuple[ScopeRef, ...]]:
        raise AssertionError("authentication reads no lineages")


async def settled(connection: object, subject: str, page: object) -> Standing:
    """Every request finds the caller's writes read and the epochs unmoved."""
    return Standing(access_epoch=None, org_epoch=None, ready=True)


class ReadsOnly:
    """The store's side of a request's standing, for requests that write nothing."""

    def begin(self) -> None:
        pass

    def end(self) -> None:
        pass

    def expect(self, assumed: Standing, recheck: object) -> None:
        raise AssertionError("no request here writes")

    def unchecked(self) -> bool:
        return False

    def known(self) -> Standing | None:
        return None

    async def confirm(self) -> None:
        pass


def app(issuer: TokenIssuer | None, registry: InMemoryStreams) -> Litestar:
    return Litestar(
        route_handlers=[open_route, closed_route],
        middleware=[
            DefineMiddleware(BearerAuthenticationMiddleware, issuer=issuer, settle=settled)
        ],
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        state=State({"access": AccessCache(registry, NoOrgTree()), "standings": ReadsOnly()}),
    )


async def call(
    path: str,
    authorization: str | None,
    issuer: TokenIssuer | None,
    registry: InMemoryStreams | None = None,
) -> httpx.Response:
    headers = {"authorization": authorization} if authorization is not None else {}
    served = app(issuer, registry or await applications())
    transport = httpx.ASGITransport(app=served)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        return await client.get(path, headers=headers)


def token(settings: AuthSettings = AUTH) -> str:
    return TokenIssuer(settings).issue(APP_ID, "ci-bot").access_token


async def test_a_valid_token_names_the_caller() -> None:
    response = await call("/closed", f"Bearer {token()}", TokenIssuer(AUTH))
    assert response.status_code == 200
    assert response.json() == {"subject": str(APP_ID), "clientId": "ci-bot"}


async def test_a_token_from_before_a_secret_rotation_is_revoked() -> None:
    response = await call(
        "/closed", f"Bearer {token()}", TokenIssuer(AUTH), await applications(rotated=True)
    )
    assert response.status_code == 401
    assert "revoked" in response.json()["message"]
    current = TokenIssuer(AUTH).issue(APP_ID, "ci-bot", generation=1).access_token
    registry = await applications(rotated=True)
    assert (
        await call("/closed", f"Bearer {current}", TokenIssuer(AUTH), registry)
    ).status_code == 200


async def test_a_token_of_an_application_that_does_not_exist_is_refused() -> None:
    stranger = TokenIssuer(AUTH).issue(UUID(int=7), "ghost").access_token
    response = await call("/closed", f"Bearer {stranger}", TokenIssuer(AUTH))
    assert response.status_code == 401


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


class SignedOut:
    """The record of console sessions signed out: just this one."""

    def __init__(self, session: UUID) -> None:
        self.session = session

    async def signed_out(self, session_id: UUID) -> bool:
        return session_id == self.session


async def test_a_console_sessions_token_is_refused_once_the_session_is_signed_out() -> None:
    issuer = TokenIssuer(AUTH)
    gone, current = UUID(int=1), UUID(int=2)
    served = Litestar(
        route_handlers=[closed_route],
        middleware=[
            DefineMiddleware(BearerAuthenticationMiddleware, issuer=issuer, settle=settled)
        ],
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        state=State(
            {
                "access": AccessCache(await applications(), NoOrgTree(), SignedOut(gone)),
                "standings": ReadsOnly(),
            }
        ),
    )
    transport = httpx.ASGITransport(app=served)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:

        async def status(session: UUID | None) -> int:
            token = issuer.issue(APP_ID, "ci-bot", session=session).access_token
            answer = await client.get("/closed", headers={"authorization": f"Bearer {token}"})
            return answer.status_code

        assert await status(gone) == 401
        assert await status(current) == 200
        assert await status(None) == 200  # an API token names no session
