"""`POST /api/v1/token`: credentials in, a signed access token out, in Run:ai's wire format.

Run:ai clients spell the credential keys in several ways (`AppId`, `appId`, `appID`; `clientID`),
so keys are matched without regard to case. Grants: `app_token` (AppId/AppSecret, what the
official client sends) and `client_credentials` (clientID/clientSecret).
"""

from typing import Any, Final
from uuid import UUID

import msgspec
from litestar import Request, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from infra.errors import TokenSigningUnconfiguredError
from infra.http.adapters import Adapters
from infra.security.login_throttle import LoginThrottle
from services.errors import AuthenticationFailedError, InvalidRequestError

# grantType -> (the key holding the client id, the key holding the secret), as Run:ai spells them
GRANTS: Final = {
    "app_token": ("appId", "appSecret"),
    "client_credentials": ("clientID", "clientSecret"),
}


class TokenResponse(msgspec.Struct, frozen=True, rename="camel"):
    access_token: str
    expires_in: int


@post(
    "/api/v1/token",
    status_code=200,
    tags=["Tokens"],
    operation_id="grant_token",
    exclude_from_auth=True,  # the login itself
)
async def grant_token(
    request: Request[Any, Any, Any],
    data: JSONBody[dict[str, Any]],
    adapters: NamedDependency[Adapters],
) -> TokenResponse:
    fields = {key.lower(): value for key, value in data.items()}
    grant = fields.get("granttype")
    if not isinstance(grant, str) or grant not in GRANTS:
        supported = ", ".join(GRANTS)
        raise InvalidRequestError("/grantType", f"must be one of {supported}, not {grant!r}")
    id_key, secret_key = GRANTS[grant]
    return await issue_token(request, adapters, _text(fields, id_key), _text(fields, secret_key))


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
    throttle.check(client_id, address)
    found = await adapters.registry.authenticate(client_id, secret)
    if found is None:
        throttle.failed(client_id, address)
        raise AuthenticationFailedError()
    issued = adapters.token_issuer.issue(
        found.application_id, client_id, found.token_generation, session=session
    )
    return TokenResponse(issued.access_token, issued.expires_in)


def _text(fields: dict[str, Any], key: str) -> str:
    value = fields.get(key.lower())
    if not isinstance(value, str) or not value:
        raise InvalidRequestError(f"/{key}", "is required and must be a non-empty string")
    return value
