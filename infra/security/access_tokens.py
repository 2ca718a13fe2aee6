"""Access tokens: the service's own (HS256 JWTs naming an application, with issuer, audience and
expiry) and, optionally, those of an external identity provider, verified against its JWKS."""

import time
from typing import Final
from uuid import UUID

import jwt
import msgspec

from domain.bounded import Bounded
from infra.settings import AuthSettings

ALGORITHM: Final = "HS256"
VERIFIED_CACHE: Final = 10_000  # tokens whose signature was checked, newest kept


class IssuedToken(msgspec.Struct, frozen=True):
    access_token: str
    expires_in: int


class TokenIssuer:
    def __init__(self, settings: AuthSettings) -> None:
        if len(settings.signing_key) < 32:
            raise ValueError("auth.signing_key must be at least 32 characters")
        self._settings = settings
        # A token's signature, issuer and audience cannot change, so each is checked once;
        # its expiry is checked on every use.
        self._verified: Bounded[str, dict[str, object]] = Bounded(VERIFIED_CACHE)

    def issue(
        self,
        application_id: UUID,
        client_id: str,
        generation: int = 0,
        *,
        session: UUID | None = None,
    ) -> IssuedToken:
        """A token for the application, good while its token generation (domain/applications.py)
        stays `generation`; one for a console `session` names it (`sid`), and is good no longer
        than the session is signed in (infra/postgres/signed_out.py)."""
        now = int(time.time())
        claims: dict[str, object] = {
            "iss": self._settings.issuer,
            "aud": self._settings.audience,
            "sub": str(application_id),
            "client_id": client_id,
            "kind": "application",
            "gen": generation,
            "iat": now,
            "exp": now + self._settings.token_ttl_s,
        }
        if session is not None:
            claims["sid"] = str(session)
        token = jwt.encode(claims, self._settings.signing_key, algorithm=ALGORITHM)
        return IssuedToken(token, self._settings.token_ttl_s)

    def verify(self, token: str) -> dict[str, object]:
        """The token's claims; raises jwt.InvalidTokenError for a bad signature, issuer,
        audience or an expired token."""
        known = self._verified.get(token)
        expiry = known.get("exp") if known is not None else None
        if known is not None and isinstance(expiry, int) and expiry > time.time():
            return known
        self._verified.pop(token)
        claims = self._decode(token)
        self._verified.put(token, claims)
        return claims

    def _decode(self, token: str) -> dict[str, object]:
        claims: dict[str, object] = jwt.decode(
            token,
            self._settings.signing_key,
            algorithms=[ALGORITHM],
            audience=self._settings.audience,
            issuer=self._settings.issuer,
            options={"require": ["exp", "iat", "sub", "iss", "aud"]},
        )
        return claims


class ExternalTokenVerifier:
    """Tokens of an external identity provider. Its signing keys come from its JWKS document
    (PyJWT's client, cached for `jwks_cache_s`); fetching is blocking, so callers run `verify`
    in a thread."""

    def __init__(self, settings: AuthSettings) -> None:
        if not (settings.jwks_url and settings.external_issuer and settings.external_audience):
            raise ValueError("auth.jwks_url needs auth.external_issuer and auth.external_audience")
        self._settings = settings
        self._algorithms = [a.strip() for a in settings.external_algorithms.split(",") if a.strip()]
        if ALGORITHM in self._algorithms:
            raise ValueError("external tokens must not use the service's own HS256")
        self._keys = jwt.PyJWKClient(
            settings.jwks_url, cache_keys=True, lifespan=settings.jwks_cache_s
        )

    def verify(self, token: str) -> dict[str, object]:
        """The claims; raises jwt.InvalidTokenError (or jwt.PyJWKClientError when the key is
        unknown or the JWKS cannot be fetched)."""
        key = self._keys.get_signing_key_from_jwt(token)
        claims: dict[str, object] = jwt.decode(
            token,
            key.key,
            algorithms=self._algorithms,
            audience=self._settings.external_audience,
            issuer=self._settings.external_issuer,
            options={"require": ["exp", "sub", "iss", "aud"]},
        )
        return claims
