"""A token is checked once, but its expiry on every use."""

import time
from datetime import datetime, tzinfo
from uuid import uuid4

import jwt
import pytest

from infra.security.access_tokens import TokenIssuer
from infra.settings import AuthSettings

AUTH = AuthSettings(signing_key="k" * 48, token_ttl_s=60)


def test_a_verified_token_still_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    issuer = TokenIssuer(AUTH)
    token = issuer.issue(uuid4(), "bot").access_token
    assert issuer.verify(token)["client_id"] == "bot"
    assert issuer.verify(token)["client_id"] == "bot"  # from the cache
    later = time.time() + 120

    class Later(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> "Later":
            return cls.fromtimestamp(later, tz)

    # Two minutes on, for the cache and for PyJWT's own expiry check alike.
    monkeypatch.setattr(time, "time", lambda: later)
    monkeypatch.setattr(jwt.api_jwt, "datetime", Later)
    with pytest.raises(jwt.ExpiredSignatureError):
        issuer.verify(token)


def test_a_forged_token_is_refused_even_after_a_good_one() -> None:
    issuer = TokenIssuer(AUTH)
    token = issuer.issue(uuid4(), "bot").access_token
    issuer.verify(token)
    forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    with pytest.raises(jwt.InvalidTokenError):
        issuer.verify(forged)
