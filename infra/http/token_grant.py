"""`POST /api/v1/token`: credentials in, a signed access token out, in Run:ai's wire format; grants
`app_token` (AppId/AppSecret, the official client's) and `client_credentials`, keys matched
without regard to case, as Run:ai clients spell them several ways (`AppId`, `appId`, `appID`)."""

from typing import Any

from litestar import Request, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from infra.http.adapters import Adapters
from infra.http.audit_trail import AUDITED
from infra.http.token_actions import GRANTS, TokenResponse, issue_token, text_of
from services.errors import InvalidRequestError


@post(
    "/api/v1/token",
    status_code=200,
    tags=["Tokens"],
    operation_id="grant_token",
    exclude_from_auth=True,  # the login itself
    opt={AUDITED: "sign-in"},
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
    return await issue_token(
        request, adapters, text_of(fields, id_key), text_of(fields, secret_key)
    )
