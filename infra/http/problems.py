"""Every error the API returns: an RFC 9457 problem document that is also a Run:ai error body
(`type`, `title`, `status`, `detail`; Run:ai's `code`, `message`, `details`), with invalid fields
under `errors` as JSON pointers. Why one body: docs/decisions/0028-http-edge-and-answers.md."""

import logging
from collections.abc import Mapping
from typing import Any, Final

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException

from domain.applications import (
    AccessRuleNotFoundError,
    ApplicationNotFoundError,
    LastTenantAdminError,
)
from domain.assets import AssetExistsError, AssetInUseError, AssetNotFoundError, InvalidAssetError
from domain.credentials import CredentialInUseError
from domain.data_sources import InvalidDataSourceError
from domain.data_volumes import DataVolumeInUseError
from domain.errors import DomainError, TrainplateError
from domain.name_rules import InvalidNameError
from domain.node_pools import InvalidNodePoolError, NodePoolNotFoundError
from domain.org_units import (
    OrgUnitExistsError,
    OrgUnitNotEmptyError,
    OrgUnitNotFoundError,
    UnknownScopeError,
)
from domain.pointers import pointer_in
from domain.policies import InvalidPolicyError, PolicyNotFoundError
from domain.registries import RegistryInUseError
from domain.storage_classes import (
    ConfigurationNotFoundError,
    InvalidConfigurationError,
    InvalidStorageClassError,
    StorageClassNotFoundError,
)
from domain.template_documents import InvalidDocumentError
from domain.template_rules import InvalidTemplateError
from domain.templates import TemplateExistsError, TemplateNotFoundError
from domain.tenant_settings import (
    FeatureDisabledError,
    InvalidSettingValueError,
    LimitExceededError,
    UnknownSettingError,
)
from domain.workloads import (
    InvalidWorkloadError,
    WorkloadNotFoundError,
    WorkloadNotSavableError,
    WorkloadStateError,
)
from infra.errors import (
    CONNECTION_LOST,
    InfraError,
    StoreUnavailableError,
    TokenSigningUnconfiguredError,
)
from infra.http.consistency import STALE, answered_stale
from infra.oci.failures import (
    RegistryAnswerError,
    RegistryRefusedError,
    RegistryUnreachableError,
    RepositoryNotFoundError,
)
from infra.security.login_throttle import LoginThrottledError
from infra.security.sealing import SealedUnderAnotherKeyError
from services.errors import (
    ApplicationError,
    AuthenticationFailedError,
    ClientIdTakenError,
    EventTooLargeError,
    FirstSecretGoneError,
    IdempotencyKeyReusedError,
    InvalidRequestError,
    NameTakenError,
    NotAuthenticatedError,
    NotPermittedError,
    PlanOutdatedError,
    PreconditionFailedError,
    RegistryChangingError,
    VersionConflictError,
)

log = logging.getLogger(__name__)

PROBLEM_JSON: Final = "application/problem+json"
PROBLEM_BASE: Final = "/problems"
RETRY_AFTER_S: Final = "2"
# The store being away (infra/errors.py): never the request's fault nor a bug.
UNAVAILABLE: Final = CONNECTION_LOST

# Run:ai's wording for each status, used when nothing more specific is known.
MESSAGES: Final[Mapping[int, str]] = {
    400: "Required parameter is missing or invalid",
    401: "Issuer is not familiar.",
    403: "You do not have sufficient permissions.",
    404: "Resource id not found.",
    405: "Method not allowed",
    409: "Resource with this name already exists",
    412: "Precondition failed",
    413: "Request entity too large",
    429: "Too many requests",
    422: "Unprocessable entity",
    500: "Something went wrong.",
    502: "The server it depends on failed.",
    503: "Please try again in few minutes.",
}

# One table: which error becomes which status (the most specific class listed wins).
STATUS_BY_ERROR: Final[Mapping[type[Exception], int]] = {
    AuthenticationFailedError: 401,
    NotPermittedError: 403,
    InvalidNameError: 400,
    NotAuthenticatedError: 401,
    InvalidRequestError: 400,
    EventTooLargeError: 413,
    ClientIdTakenError: 409,
    FirstSecretGoneError: 409,
    # A registry changed a moment ago: asked again shortly, it answers (Retry-After).
    RegistryChangingError: 503,
    TokenSigningUnconfiguredError: 503,
    # Lost every race to the service's own writers (an If-Match that no longer holds is 412).
    VersionConflictError: 503,
    IdempotencyKeyReusedError: 422,
    StoreUnavailableError: 503,
    LoginThrottledError: 429,
    ApplicationNotFoundError: 404,
    AccessRuleNotFoundError: 404,
    OrgUnitNotFoundError: 404,
    NodePoolNotFoundError: 404,
    InvalidNodePoolError: 400,
    StorageClassNotFoundError: 404,
    ConfigurationNotFoundError: 404,
    InvalidStorageClassError: 400,
    InvalidConfigurationError: 400,
    UnknownScopeError: 400,
    OrgUnitExistsError: 409,
    OrgUnitNotEmptyError: 409,
    NameTakenError: 409,
    InvalidAssetError: 400,
    AssetNotFoundError: 404,
    AssetExistsError: 409,
    AssetInUseError: 409,
    LastTenantAdminError: 409,
    PreconditionFailedError: 412,
    InvalidTemplateError: 400,
    InvalidDocumentError: 400,
    # A plan applied after what it read moved on: nothing written, to be planned again.
    PlanOutdatedError: 409,
    TemplateNotFoundError: 404,
    TemplateExistsError: 409,
    CredentialInUseError: 412,
    RegistryInUseError: 409,
    DataVolumeInUseError: 409,
    # A registry that cannot be asked, or answers amiss: the gateway's failure, not the caller's.
    RegistryUnreachableError: 502,
    RegistryAnswerError: 502,
    RegistryRefusedError: 502,
    RepositoryNotFoundError: 404,
    InvalidDataSourceError: 400,
    InvalidWorkloadError: 400,
    InvalidPolicyError: 400,
    PolicyNotFoundError: 404,
    FeatureDisabledError: 400,
    UnknownSettingError: 400,
    InvalidSettingValueError: 400,
    LimitExceededError: 400,
    WorkloadNotFoundError: 404,
    WorkloadStateError: 409,
    # Well formed, but the workload's specs cannot be a template there (the field named).
    WorkloadNotSavableError: 422,
    DomainError: 422,
    ApplicationError: 400,
    SealedUnderAnotherKeyError: 409,
    InfraError: 503,
}

Problem = dict[str, Any]


def problem(
    status: int,
    *,
    slug: str,
    detail: str | None = None,
    message: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Response[Problem]:
    body = problem_body(status, slug=slug, detail=detail, message=message, extra=extra)
    headers: dict[str, str] = {}
    if status == 503:  # a passing state (a database or broker away, a key not configured yet)
        headers["Retry-After"] = RETRY_AFTER_S
    if answered_stale():  # a 404 of a thing just made, say: the read did not wait for it
        headers[STALE] = "true"
    return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def problem_body(
    status: int,
    *,
    slug: str,
    detail: str | None = None,
    message: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Problem:
    body: Problem = {
        "type": f"{PROBLEM_BASE}/{slug}",
        "title": slug.replace("-", " ").capitalize(),
        "status": status,
        "code": status,
        "message": message or MESSAGES.get(status, "Request failed"),
    }
    if detail:
        body["detail"] = body["details"] = detail
    body.update(extra or {})
    return body


def status_for(exc: Exception) -> int:
    return next(STATUS_BY_ERROR[c] for c in type(exc).__mro__ if c in STATUS_BY_ERROR)


def from_error(_: Request[Any, Any, Any], exc: TrainplateError) -> Response[Problem]:
    """Our own errors: their slug names the problem type, their facts become members."""
    facts: dict[str, Any] = {
        k: v if isinstance(v, str | int | float | bool) or v is None else str(v)
        for k, v in exc.facts.items()
    }
    if isinstance(field := facts.get("field"), str):
        facts["errors"] = [{"pointer": field, "detail": str(exc), "source": "body"}]
    response = problem(
        status_for(exc), slug=exc.slug, detail=str(exc), message=str(exc), extra=facts
    )
    if isinstance(exc, LoginThrottledError):
        response.headers["Retry-After"] = str(exc.retry_after_s)
    return response


def from_validation(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Problem]:
    """A malformed request: name every invalid field, a body's as a JSON pointer, a query
    parameter, header or path parameter by the name it has on the wire."""
    errors = [_field_error(item, request) for item in exc.extra or [] if isinstance(item, Mapping)]
    fields = ", ".join(e["pointer"] for e in errors if e["pointer"])
    message = f"Invalid field(s): {fields}" if fields else (exc.detail or MESSAGES[400])
    return problem(
        400,
        slug="invalid-request",
        detail=exc.detail,
        message=message,
        extra={"errors": errors} if errors else None,
    )


def from_http(_: Request[Any, Any, Any], exc: HTTPException) -> Response[Problem]:
    """Framework errors (no such route, method not allowed, ...); a 5xx among them is a bug, so
    the log gets it and its cause."""
    status = exc.status_code
    if status >= 500:
        log.error("framework error %s", exc, exc_info=exc.__cause__ or exc)
    slug = {404: "not-found", 405: "method-not-allowed"}.get(status, f"http-{status}")
    return problem(status, slug=slug, detail=exc.detail if exc.detail else None)


def from_unexpected(_: Request[Any, Any, Any], exc: Exception) -> Response[Problem]:
    """A bug or an unmapped failure: the log gets the traceback, the client nothing internal.
    The database being away is neither: a 503, to be retried."""
    if isinstance(exc, UNAVAILABLE):
        log.warning("database unavailable: %s", type(exc).__name__)
        return problem(503, slug="store-unavailable", detail="the database is unavailable")
    log.exception("unhandled error", exc_info=exc)
    return problem(500, slug="internal-error")


def _field_error(item: Mapping[str, Any], request: Request[Any, Any, Any]) -> dict[str, str]:
    message = str(item.get("message") or "invalid value")
    key = str(item.get("key") or "")
    source = item.get("source") or "body"
    source = str(getattr(source, "value", source))  # Litestar's ParamType, or a plain word
    if source != "body":
        return {"pointer": _wire_name(request, key), "detail": message, "source": source}
    if key == "data":  # the body as a whole
        key = ""
    return {"pointer": pointer_in(message, key=key), "detail": message, "source": source}


def _wire_name(request: Request[Any, Any, Any], key: str) -> str:
    """A parameter's name as the client sent it (`sortBy`), not the handler's (`sort_by`)."""
    handler = request.scope.get("route_handler")
    signature = getattr(handler, "parsed_fn_signature", None)
    parameter = getattr(signature, "parameters", {}).get(key)
    alias = getattr(getattr(parameter, "kwarg_definition", None), "name", None)
    return alias if isinstance(alias, str) and alias else key


EXCEPTION_HANDLERS: Final = {
    ValidationException: from_validation,
    HTTPException: from_http,
    TrainplateError: from_error,
    Exception: from_unexpected,
}
