"""A token for an application's id and secret, shared by `POST /api/v1/token`
(infra/http/token_grant.py) and the console's sign-in."""

from typing import Any, Final
from uuid import UUID

import msgspec
from litestar import Request

from infra.errors import TokenSigningUnconfiguredError
from infra.http.adapters import Adapters
from infra.http.audit_trail import note_subject
from infra.security.login_throttle import LoginThrottle, LoginThrottledError
from infra.telemetry.meters import ApiMetrics
from services.errors import AuthenticationFailedError, InvalidRequestError

# grantType -> (the key holding the client id, the key holding the secret), as Run:ai spells them
GRANTS: Final = {
    "app_token": ("appId", "appSecret"),
    "client_credentials": ("clientID", "clientSecret"),
}


class TokenResponse(msgspec.Struct, frozen=True, rename="camel"):
    access_token: str
    expires_in: int


async def issue_token(
    request: Request[Any, Any, Any],
    adapters: Adapters,
    client_id: str,
    secret: str,
    *,
    session: UUID | None = None,
) -> TokenResponse:
    """The grant itself, for the API's login and the console's sign-in alike: throttled per
    client id and address, the secret checked against its hash, a token for the application
    (naming the console's `session`, which signing out revokes)."""
    if adapters.token_issuer is None:
        raise TokenSigningUnconfiguredError()
    throttle: LoginThrottle = request.app.state.logins
    address = request.client.host if request.client is not None else ""
    note_subject(request.scope, client_id, None)  # the audit log's subject, whatever the outcome
    metrics: ApiMetrics = request.app.state.metrics
    try:
        throttle.check(client_id, address)
    except LoginThrottledError:
        metrics.login_failures.labels("throttled").inc()
        raise
    found = await adapters.registry.authenticate(client_id, secret)
    if found is None:
        throttle.failed(client_id, address)
        metrics.login_failures.labels("bad_credentials").inc()
        raise AuthenticationFailedError()
    note_subject(request.scope, client_id, str(found.application_id))
    issued = adapters.token_issuer.issue(
        found.application_id, client_id, found.token_generation, session=session
    )
    return TokenResponse(issued.access_token, issued.expires_in)


def text_of(fields: dict[str, Any], key: str) -> str:
    value = fields.get(key.lower())
    if not isinstance(value, str) or not value:
        raise InvalidRequestError(f"/{key}", "is required and must be a non-empty string")
    return value
