"""A console page is authenticated as an API request is, by the same middleware, with the token
taken from the sealed session cookie instead of an Authorization header."""

from dataclasses import dataclass
from typing import Any

from litestar import types
from litestar.connection import ASGIConnection

from infra.http import consistency
from infra.http.auth import BearerAuthenticationMiddleware
from infra.security.access_tokens import ExternalTokenVerifier, TokenIssuer
from services.errors import NotAuthenticatedError

TOKEN: str = "token"  # the session's key for the access token


class ConsoleAuthenticationMiddleware(BearerAuthenticationMiddleware):
    def token_of(self, connection: ASGIConnection[Any, Any, Any, Any]) -> str:
        token = connection.session.get(TOKEN) if "session" in connection.scope else None
        if not isinstance(token, str) or not token:
            raise NotAuthenticatedError("not signed in")
        return token


@dataclass(frozen=True)
class Verifiers:
    """What the middleware verifies tokens with, shared and never copied: Litestar copies a
    router's definition when it registers it, and a key set client holds a lock."""

    issuer: TokenIssuer | None
    external: ExternalTokenVerifier | None
    settle: consistency.Settle

    def __deepcopy__(self, memo: dict[int, Any]) -> "Verifiers":
        return self


def console_authentication(app: types.ASGIApp, verifiers: Verifiers) -> types.ASGIApp:
    return ConsoleAuthenticationMiddleware(
        app, verifiers.issuer, verifiers.external, settle=verifiers.settle
    )
