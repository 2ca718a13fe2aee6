"""What every console page shares: its Template response with who is signed in, and the pages
for refusals (the HTML twin of infra/http/problems.py, with the same statuses)."""

import logging
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, NotFoundException, PermissionDeniedException
from litestar.response import Redirect, Template
from litestar.types import ExceptionHandlersMap

from domain.errors import TrainplateError
from infra.http.auth import Principal
from infra.http.org_unit_actions import tenant_admin
from infra.http.problems import UNAVAILABLE, status_for
from services.errors import NotAuthenticatedError

log = logging.getLogger(__name__)

SIGN_IN = "/console/sign-in"


def page(
    request: Request[Any, Any, Any],
    template: str,
    *,
    title: str,
    status_code: int = 200,
    **context: Any,
) -> Template:
    """A page; `signed_in` names the application when the request was authenticated, and
    `tenant_admin` says whether it is a tenant admin (the nav shows it clusters and projects)."""
    user = request.scope.get("user")
    signed_in = user.client_id or user.subject if isinstance(user, Principal) else None
    admin = isinstance(user, Principal) and tenant_admin(request)
    return Template(
        template_name=template,
        context={"title": title, "signed_in": signed_in, "tenant_admin": admin, **context},
        status_code=status_code,
    )


def person(request: Request[Any, Any, Any], subject: str) -> str:
    """Who did something, as a person reads it: the signed-in application by its client id."""
    user = request.scope.get("user")
    if isinstance(user, Principal) and user.subject == subject:
        return f"{user.client_id or subject} (you)"
    return subject


def _problem(request: Request[Any, Any, Any], status: int, title: str, detail: str) -> Template:
    return page(request, "problem.html.j2", title=title, detail=detail, status_code=status)


def not_signed_in(request: Request[Any, Any, Any], _: NotAuthenticatedError) -> Response[Any]:
    """No session, or its token expired or was revoked: sign in (again)."""
    if "session" in request.scope:
        request.clear_session()
    return Redirect(SIGN_IN, status_code=303)


def refused(request: Request[Any, Any, Any], exc: TrainplateError) -> Response[Any]:
    status = status_for(exc)
    titles = {403: "Not permitted", 404: "Not found", 409: "Conflict", 503: "Unavailable"}
    return _problem(request, status, titles.get(status, "Refused"), str(exc))


def framework(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    if isinstance(exc, PermissionDeniedException):  # the CSRF check
        return _problem(
            request, 403, "Not permitted", "The form has expired; reload the page and try again."
        )
    if isinstance(exc, NotFoundException):
        return _problem(request, 404, "Not found", "There is no such page.")
    if exc.status_code >= 500:
        log.error("framework error %s", exc, exc_info=exc.__cause__ or exc)
    return _problem(request, exc.status_code, "Refused", exc.detail or "The request was refused.")


def unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if isinstance(exc, UNAVAILABLE):
        log.warning("database unavailable: %s", type(exc).__name__)
        return _problem(request, 503, "Unavailable", "The database is unavailable; try again.")
    log.exception("unhandled error", exc_info=exc)
    return _problem(request, 500, "Something went wrong", "The error was logged.")


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    NotAuthenticatedError: not_signed_in,
    TrainplateError: refused,
    HTTPException: framework,
    Exception: unexpected,
}
