"""Bearer authentication: every route needs a valid access token unless it opts out
(`exclude_from_auth=True`: health, readiness and the token endpoint itself)."""

import asyncio
from collections.abc import Callable
from typing import Any
from uuid import UUID

import jwt
import msgspec
from litestar.connection import ASGIConnection
from litestar.middleware.authentication import (
    AbstractAuthenticationMiddleware,
    AuthenticationResult,
)
from litestar.types import ASGIApp

from domain import applications
from infra.errors import TokenSigningUnconfiguredError
from infra.security.access_tokens import ALGORITHM, ExternalTokenVerifier, TokenIssuer
from services.errors import NotAuthenticatedError
from services.ports import StreamLoader


class Principal(msgspec.Struct, frozen=True, kw_only=True):
    """Who is calling: the application a verified token names."""

    subject: str
    client_id: str
    kind: str


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
        **options: Any,
    ) -> None:
        super().__init__(app, **options)
        self._issuer = issuer
        self._external = external

    async def authenticate_request(
        self, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> AuthenticationResult:
        scheme, _, token = connection.headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise NotAuthenticatedError("an Authorization: Bearer <token> header is required")
        if self._external is not None:  # only then can a token be another kind than ours
            try:
                algorithm = jwt.get_unverified_header(token).get("alg")
            except jwt.InvalidTokenError as exc:
                raise NotAuthenticatedError("the token is malformed") from exc
            if algorithm != ALGORITHM:
                return await self._as_user(token)
        issuer = self._issuer
        if issuer is None:
            raise TokenSigningUnconfiguredError()
        claims = _checked(lambda: issuer.verify(token))
        await _still_current(connection, claims)
        principal = Principal(
            subject=str(claims["sub"]),
            client_id=str(claims.get("client_id", "")),
            kind=str(claims.get("kind", "application")),
        )
        return AuthenticationResult(user=principal, auth=claims)

    async def _as_user(self, token: str) -> AuthenticationResult:
        external = self._external
        assert external is not None
        try:
            claims = await asyncio.to_thread(_checked, lambda: external.verify(token))
        except jwt.PyJWKClientError as exc:
            raise NotAuthenticatedError("the token's signing key is not known") from exc
        principal = Principal(subject=str(claims["sub"]), client_id="", kind="user")
        return AuthenticationResult(user=principal, auth=claims)


async def _still_current(
    connection: ASGIConnection[Any, Any, Any, Any], claims: dict[str, object]
) -> None:
    """A token of ours speaks for its application only while the application is live and has
    not moved past the token's generation (a rotated secret, a disabling): read from its stream
    on every request, so a revocation applies at once, on every API process."""
    try:
        application_id = UUID(str(claims["sub"]))
        generation = int(str(claims.get("gen", 0)))
    except ValueError as exc:
        raise NotAuthenticatedError("the token is malformed") from exc
    registry: StreamLoader = connection.app.state.registry
    state = applications.fold((await registry.load(application_id)).events)
    if not applications.token_is_current(state, generation):
        raise NotAuthenticatedError(
            "the token was revoked: its application's secret was regenerated since, or the"
            " application was disabled or deleted"
        )


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
