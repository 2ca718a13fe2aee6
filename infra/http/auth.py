"""Bearer authentication: every route needs a valid access token unless it opts out
(`exclude_from_auth=True`: health, readiness, the token endpoint); one query then settles a read,
a write where it takes effect (consistency.py; docs/decisions/0029-what-a-request-reads.md)."""

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any
from uuid import UUID

import jwt
import msgspec
from litestar import Request
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.middleware.authentication import (
    AbstractAuthenticationMiddleware,
    AuthenticationResult,
)
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from domain import applications
from domain.values import Grant
from infra.errors import TokenSigningUnconfiguredError
from infra.http import consistency
from infra.http.access_cache import AccessCache
from infra.http.headers import header
from infra.http.problems import from_unexpected
from infra.security.access_tokens import ALGORITHM, ExternalTokenVerifier, TokenIssuer
from infra.security.standing import Along, Standing
from services.errors import NotAuthenticatedError


class Principal(msgspec.Struct, frozen=True, kw_only=True):
    """Who is calling: the application a verified token names, or an identity provider's user;
    with what it holds as of the request's start (`grants`) and the org tree's and the
    policies' epochs then (which lineages and policies its reads see; None: read afresh)."""

    subject: str
    client_id: str
    kind: str
    grants: tuple[Grant, ...] = ()
    tree_epoch: int | None = None
    policy_epoch: int | None = None


# What each verification failure is called in the 401 body; the token itself is never echoed.
_REASONS: dict[type[jwt.InvalidTokenError], str] = {
    jwt.ExpiredSignatureError: "the token has expired",
    jwt.InvalidAudienceError: "the token is not for this service (audience)",
    jwt.InvalidIssuerError: "the token's issuer is not familiar",
    jwt.InvalidSignatureError: "the token's signature does not verify",
    jwt.MissingRequiredClaimError: "the token lacks a required claim",
}


class BearerAuthenticationMiddleware(AbstractAuthenticationMiddleware):
    """The service's own tokens (HS256) name applications; with an external identity provider
    configured, tokens signed otherwise are its users' and are checked against its JWKS."""

    def __init__(
        self,
        app: ASGIApp,
        issuer: TokenIssuer | None,
        external: ExternalTokenVerifier | None = None,
        *,
        settle: consistency.Settle,
        **options: Any,
    ) -> None:
        super().__init__(app, **options)
        self._issuer = issuer
        self._external = external
        self._settle = settle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        standings: consistency.Standings = scope["app"].state.standings
        consistency.begin(standings)  # every request, authenticated or not, starts anew
        if scope["type"] == ScopeType.HTTP:
            send = _answering(scope, receive, send, standings)
        try:
            await super().__call__(scope, receive, send)
        finally:
            standings.end()

    def token_of(self, connection: ASGIConnection[Any, Any, Any, Any]) -> str:
        """The access token the request carries: an `Authorization: Bearer` header."""
        given = header(connection.scope["headers"], b"authorization") or ""
        scheme, _, token = given.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise NotAuthenticatedError("an Authorization: Bearer <token> header is required")
        return token

    async def authenticate_request(
        self, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> AuthenticationResult:
        token = self.token_of(connection)
        if self._external is not None:  # only then can a token be another kind than ours
            try:
                algorithm = jwt.get_unverified_header(token).get("alg")
            except jwt.InvalidTokenError as exc:
                raise NotAuthenticatedError("the token is malformed") from exc
            if algorithm != ALGORITHM:
                return await self._as_user(connection, token)
        issuer = self._issuer
        if issuer is None:
            raise TokenSigningUnconfiguredError()
        claims = _checked(lambda: issuer.verify(token))
        try:
            application_id = UUID(str(claims["sub"]))
            generation = int(str(claims.get("gen", 0)))
        except ValueError as exc:
            raise NotAuthenticatedError("the token is malformed") from exc
        access: AccessCache = connection.app.state.access

        async def principal(standing: Standing) -> Principal:
            state = await access.application(application_id, standing.access_epoch)
            if state is None or not applications.token_is_current(state, generation):
                raise NotAuthenticatedError(
                    "the token was revoked: its application's secret was regenerated since, or"
                    " the application was disabled or deleted"
                )
            if await _signed_out(claims, access, standing.access_epoch):
                raise NotAuthenticatedError(
                    "the token was revoked: its console session was signed out"
                )
            return Principal(
                subject=str(application_id),
                client_id=str(claims.get("client_id", "")),
                kind=str(claims.get("kind", "application")),
                grants=state.effective_grants,
                tree_epoch=standing.org_epoch,
                policy_epoch=standing.policy_epoch,
            )

        return await self._settled(connection, str(application_id), claims, principal)

    async def _settled(
        self,
        connection: ASGIConnection[Any, Any, Any, Any],
        subject: str,
        claims: dict[str, object],
        principal: Callable[[Standing], Awaitable[Principal]],
    ) -> AuthenticationResult:
        """The caller as of the request's standing. A write's standing is assumed: should the
        database's turn out another where the write takes effect, the caller is looked at again
        under it then (the store's writer_standing.py), and refused there if revoked."""
        standing = await self._settle(connection, subject, await _page(connection, principal))
        user = await principal(standing)
        if standing.assumed:

            async def recheck(found: Standing) -> None:
                connection.scope["user"] = await principal(found)

            consistency.standings_of(connection).expect(standing, recheck)
        return AuthenticationResult(user=user, auth=claims)

    async def _as_user(
        self, connection: ASGIConnection[Any, Any, Any, Any], token: str
    ) -> AuthenticationResult:
        external = self._external
        assert external is not None
        try:
            claims = await asyncio.to_thread(_checked, lambda: external.verify(token))
        except jwt.PyJWKClientError as exc:
            raise NotAuthenticatedError("the token's signing key is not known") from exc
        subject = str(claims["sub"])
        access: AccessCache = connection.app.state.access

        async def principal(standing: Standing) -> Principal:
            return Principal(
                subject=subject,
                client_id="",
                kind="user",
                grants=await access.user_grants(subject, standing.access_epoch),
                tree_epoch=standing.org_epoch,
                policy_epoch=standing.policy_epoch,
            )

        return await self._settled(connection, subject, claims, principal)


async def _page(
    connection: ASGIConnection[Any, Any, Any, Any],
    principal: Callable[[Standing], Awaitable[Principal]],
) -> Along | None:
    """A list's page statement for the caller as of the epochs last found, to be read with the
    standing (the handler uses what it found only if it makes the same statement)."""
    make: consistency.PageRead | None = connection.route_handler.opt.get(
        consistency.PAGE_WITH_STANDING
    )
    guess = consistency.standings_of(connection).known()
    if make is None or guess is None or not consistency.reads(connection):
        return None
    try:
        user = await principal(guess)
    except NotAuthenticatedError:  # under those epochs: the standing's tell
        return None
    return await make(connection, user)


def _answering(
    scope: Scope, receive: Receive, send: Send, standings: consistency.Standings
) -> Send:
    """`send`, once a write that never used the database has had its assumed standing checked
    (the pool checks it on the way: infra/bootstrap.py); a caller revoked since is answered 401
    instead of what the handler made."""
    refused = False

    async def answer(message: Message) -> None:
        nonlocal refused
        if refused:
            return
        if message["type"] == "http.response.start" and standings.unchecked():
            try:
                await standings.confirm()
            except Exception as exc:  # answered as the route answers it
                refused = True
                await _refuse(scope, receive, send, exc)
                return
        await send(message)

    return answer


async def _refuse(scope: Scope, receive: Receive, send: Send, exc: Exception) -> None:
    """Answer as the route answers `exc`: a caller it no longer knows (401; the console: sign
    in again), or the database away (503)."""
    handlers = scope["route_handler"].resolve_exception_handlers()
    handler = next((handlers[c] for c in type(exc).__mro__ if c in handlers), from_unexpected)
    request: Request[Any, Any, Any] = Request(scope, receive)
    await handler(request, exc).to_asgi_response(None, request)(scope, receive, send)


async def _signed_out(claims: dict[str, object], access: AccessCache, epoch: int | None) -> bool:
    """Whether the token is a console session's (`sid`) that was signed out since."""
    session = claims.get("sid")
    if session is None:
        return False
    try:
        session_id = UUID(str(session))
    except ValueError as exc:
        raise NotAuthenticatedError("the token is malformed") from exc
    return await access.signed_out(session_id, epoch)


def _checked(verify: Callable[[], dict[str, object]]) -> dict[str, object]:
    """Run a verification; a rejected token becomes a 401 that says why, never quoting it."""
    try:
        return verify()
    except jwt.PyJWKClientError:
        raise
    except jwt.InvalidTokenError as exc:
        reason = next(
            (text for kind, text in _REASONS.items() if isinstance(exc, kind)),
            "the token is malformed",
        )
        raise NotAuthenticatedError(reason) from exc
