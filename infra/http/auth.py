"""Bearer authentication: every route needs a valid access token unless it opts out
(`exclude_from_auth=True`: health, readiness and the token endpoint itself)."""

from typing import Any

import jwt
import msgspec
from litestar.connection import ASGIConnection
from litestar.middleware.authentication import (
    AbstractAuthenticationMiddleware,
    AuthenticationResult,
)
from litestar.types import ASGIApp

from infra.errors import TokenSigningUnconfiguredError
from infra.tokens import TokenIssuer
from services.errors import NotAuthenticatedError


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
    def __init__(self, app: ASGIApp, issuer: TokenIssuer | None, **options: Any) -> None:
        super().__init__(app, **options)
        self._issuer = issuer

    async def authenticate_request(
        self, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> AuthenticationResult:
        scheme, _, token = connection.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise NotAuthenticatedError("an Authorization: Bearer <token> header is required")
        if self._issuer is None:
            raise TokenSigningUnconfiguredError()
        try:
            claims = self._issuer.verify(token.strip())
        except jwt.InvalidTokenError as exc:
            reason = next(
                (text for kind, text in _REASONS.items() if isinstance(exc, kind)),
                "the token is malformed",
            )
            raise NotAuthenticatedError(reason) from exc
        principal = Principal(
            subject=str(claims["sub"]),
            client_id=str(claims.get("client_id", "")),
            kind=str(claims.get("kind", "application")),
        )
        return AuthenticationResult(user=principal, auth=claims)
