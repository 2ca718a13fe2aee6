"""The console's cookies: the sealed session that holds the access token, the CSRF token every
form sends back, and `Secure` on both whenever the request came over TLS."""

from typing import Any, Final

from litestar import types
from litestar.config.csrf import CSRFConfig
from litestar.middleware.session.client_side import CookieBackendConfig

from infra.http.edge import CONSOLE, ASGIApp, Message, Receive, Scope, Send
from infra.security.console_keys import csrf_secret, session_key
from infra.settings import AuthSettings

SESSION_COOKIE: Final = "trainplate-console"
CSRF_COOKIE: Final = "trainplate-csrf"


def session_config(auth: AuthSettings) -> CookieBackendConfig:
    """AES-GCM sealed (the browser can neither read nor forge the token in it), sent to the
    console's paths only, never readable by a script, never sent from another site; it lives as
    long as the token it holds."""
    return CookieBackendConfig(
        secret=session_key(auth),
        key=SESSION_COOKIE,
        path=CONSOLE,
        max_age=auth.token_ttl_s,
        httponly=True,
        samesite="strict",
        secure=False,  # set per request by SecureCookiesBehindTls
    )


def csrf_config(auth: AuthSettings) -> CSRFConfig:
    """A signed token in a cookie that every form repeats in `_csrf_token` (double submit)."""
    return CSRFConfig(
        secret=csrf_secret(auth),
        cookie_name=CSRF_COOKIE,
        cookie_path=CONSOLE,
        cookie_httponly=True,  # the forms carry it, no script reads it
        cookie_samesite="strict",
    )


def sealed_session(app: types.ASGIApp, auth: AuthSettings) -> types.ASGIApp:
    """The session middleware, built when the route's stack is: Litestar copies a router's
    definition when it registers it, and the cipher the backend holds cannot be copied."""
    middleware: types.ASGIApp = session_config(auth).middleware(app)
    return middleware


class SecureCookiesBehindTls:
    """Marks every cookie the console sets `Secure` when the request came over TLS (directly, or
    by X-Forwarded-Proto from a proxy in TRAINPLATE_API_TRUSTED_PROXIES), so a cookie made over
    HTTPS is never sent in clear; on plain HTTP the browser would drop a Secure one."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("scheme") != "https":
            await self._app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [_secured(name, value) for name, value in message["headers"]]
            await send(message)

        await self._app(scope, receive, secured)


def _secured(name: Any, value: Any) -> tuple[Any, Any]:
    if bytes(name).lower() == b"set-cookie" and b"; secure" not in bytes(value).lower():
        return name, bytes(value) + b"; Secure"
    return name, value
