"""Signing in with an application's client id and secret (the API's own token grant), and out: each
sign-in is a session, named in its token; signing out forgets it on the server (the store's
signed_out.py), so a replayed cookie or token is refused, the application's others still good."""

from typing import Any
from uuid import UUID, uuid4

import jwt
from litestar import Request, get, post
from litestar.di import NamedDependency
from litestar.response import Redirect, Template

from infra.console.authentication import TOKEN
from infra.console.pages_common import SIGN_IN, page
from infra.http.adapters import Adapters
from infra.http.audit_trail import AUDITED, note_subject
from infra.http.token_actions import issue_token
from infra.security.login_throttle import LoginThrottledError
from services.errors import AuthenticationFailedError

HOME = "/console/templates"


@get("/", exclude_from_auth=True, include_in_schema=False)
async def console_home() -> Redirect:
    return Redirect(HOME, status_code=303)


@get("/", exclude_from_auth=True, include_in_schema=False, name="root")
async def service_root() -> Redirect:
    """Registered at the service's root, outside the console's router: its address leads a
    person to the console (the API lives under /api, /v1 and /schema)."""
    return Redirect(HOME, status_code=303)


@get("/sign-in", exclude_from_auth=True, include_in_schema=False)
async def sign_in_page(request: Request[Any, Any, Any]) -> Template:
    return page(
        request,
        "sign_in.html.j2",
        title="Sign in",
        error=None,
        client_id="",
        admin=_admin(request),
    )


@post("/sign-in", exclude_from_auth=True, include_in_schema=False, opt={AUDITED: "sign-in"})
async def sign_in(
    request: Request[Any, Any, Any], adapters: NamedDependency[Adapters]
) -> Template | Redirect:
    form = await request.form()
    client_id = str(form.get("client_id") or "").strip()
    secret = str(form.get("client_secret") or "")

    def again(error: str, status: int) -> Template:
        return page(
            request,
            "sign_in.html.j2",
            title="Sign in",
            error=error,
            client_id=client_id,
            admin=_admin(request),
            status_code=status,
        )

    if not client_id or not secret:
        return again("Enter the client ID and the client secret.", 400)
    try:
        issued = await issue_token(request, adapters, client_id, secret, session=uuid4())
    except AuthenticationFailedError:
        return again("The client ID or the client secret is not right.", 401)
    except LoginThrottledError as exc:
        return again(f"Too many failed sign-ins: try again in {exc.retry_after_s} s.", 429)
    # A fresh session replaces whatever the browser held: nothing carries over a sign-in.
    request.set_session({TOKEN: issued.access_token})
    return Redirect(HOME, status_code=303)


def _admin(request: Request[Any, Any, Any]) -> str:
    """The first administrator's client id (`TRAINPLATE_ADMIN_APP_ID`)."""
    return str(getattr(request.app.state, "admin_app_id", "trainplate-admin"))


@post("/sign-out", exclude_from_auth=True, include_in_schema=False, opt={AUDITED: "sign-out"})
async def sign_out(
    request: Request[Any, Any, Any], adapters: NamedDependency[Adapters]
) -> Redirect:
    token = request.session.get(TOKEN) if "session" in request.scope else None
    request.clear_session()
    if isinstance(token, str) and adapters.token_issuer is not None:
        try:
            claims = adapters.token_issuer.verify(token)
            session, expires = UUID(str(claims["sid"])), int(str(claims["exp"]))
        except (jwt.InvalidTokenError, KeyError, ValueError):
            return Redirect(SIGN_IN, status_code=303)  # expired or none of ours: nothing to end
        signed_in = str(claims.get("sub", ""))
        note_subject(request.scope, str(claims.get("client_id") or signed_in), signed_in or None)
        await adapters.sessions.sign_out(session, expires)
    return Redirect(SIGN_IN, status_code=303)


SIGN_IN_ROUTES = (console_home, sign_in_page, sign_in, sign_out)
