"""A console page is authenticated as an API request is, by the same middleware, with the token
taken from the sealed session cookie instead of an Authorization header."""

from typing import Any

from litestar.connection import ASGIConnection

from infra.http.auth import BearerAuthenticationMiddleware
from services.errors import NotAuthenticatedError

TOKEN: str = "token"  # the session's key for the access token


class ConsoleAuthenticationMiddleware(BearerAuthenticationMiddleware):
    def token_of(self, connection: ASGIConnection[Any, Any, Any, Any]) -> str:
        token = connection.session.get(TOKEN) if "session" in connection.scope else None
        if not isinstance(token, str) or not token:
            raise NotAuthenticatedError("not signed in")
        return token
