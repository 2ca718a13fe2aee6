"""Access tokens: signed JWTs (HS256) naming the application, with issuer, audience and expiry."""

import time
from typing import Final
from uuid import UUID

import jwt
import msgspec

from infra.settings import AuthSettings

ALGORITHM: Final = "HS256"


class IssuedToken(msgspec.Struct, frozen=True):
    access_token: str
    expires_in: int


class TokenIssuer:
    def __init__(self, settings: AuthSettings) -> None:
        if len(settings.signing_key) < 32:
            raise ValueError("auth.signing_key must be at least 32 characters")
        self._settings = settings

    def issue(self, application_id: UUID, client_id: str) -> IssuedToken:
        now = int(time.time())
        claims = {
            "iss": self._settings.issuer,
            "aud": self._settings.audience,
            "sub": str(application_id),
            "client_id": client_id,
            "kind": "application",
            "iat": now,
            "exp": now + self._settings.token_ttl_s,
        }
        token = jwt.encode(claims, self._settings.signing_key, algorithm=ALGORITHM)
        return IssuedToken(token, self._settings.token_ttl_s)

    def verify(self, token: str) -> dict[str, object]:
        """The token's claims; raises jwt.InvalidTokenError for a bad signature, issuer,
        audience or an expired token."""
        claims: dict[str, object] = jwt.decode(
            token,
            self._settings.signing_key,
            algorithms=[ALGORITHM],
            audience=self._settings.audience,
            issuer=self._settings.issuer,
            options={"require": ["exp", "iat", "sub", "iss", "aud"]},
        )
        return claims
