"""Errors of the application layer: what a use case reports that is not a business rule.

Each layer names its own errors: domain/errors.py what a business rule refuses, services/errors.py
what a use case reports, infra/errors.py what an adapter reports.
"""

from uuid import UUID

from domain.errors import TrainplateError


class ApplicationError(TrainplateError):
    """Root of application errors: what a use case reports that is not a business rule."""

    slug = "application-error"


class RegistryChangingError(ApplicationError):
    """The vault already holds a newer password than the registry the read model shows: it was
    changed a moment ago, and the old URL must not get the new password."""

    slug = "registry-changing"

    def __init__(self, asset_id: UUID) -> None:
        super().__init__(f"registry {asset_id} is being changed; try again")
        self.asset_id = asset_id


class VersionConflictError(ApplicationError):
    """The stream moved on since the caller read it. `actual` is None when the store cannot tell.
    A use case decides again when it meets one (services/races.py); one that still reaches a
    client lost every try to other writers."""

    slug = "version-conflict"

    def __init__(self, stream_id: UUID, *, expected: int | None, actual: int | None) -> None:
        found = "a later version" if actual is None else f"version {actual}"
        super().__init__(
            f"{stream_id} was decided on at version {expected} and found at {found} when "
            "written, each time it was tried: other writers kept changing it; try again"
        )
        self.stream_id = stream_id
        self.expected = expected
        self.actual = actual


class StaleReadError(VersionConflictError):
    """A stream a decision rested on had moved on by the time its append was written
    (`EventStore.append`'s `checked`): nothing was written, and the decision is to be made again
    from the streams as they now are."""

    slug = "version-conflict"

    def __init__(self, stream_id: UUID) -> None:
        super().__init__(stream_id, expected=None, actual=None)
        self.args = (f"stream {stream_id} moved on while a request that read it was written",)


class IdempotencyKeyReusedError(ApplicationError):
    """An event id (or the idempotency key it came from) was already used for a different append."""

    slug = "idempotency-key-reused"

    def __init__(self, stream_id: UUID) -> None:
        super().__init__(
            f"the idempotency key was already used for a different append ({stream_id})"
        )
        self.stream_id = stream_id


class FirstSecretGoneError(ApplicationError):
    """A service-account create sent again under its Idempotency-Key, whose first answer's secret
    is kept no more: replaced, deleted with the account, or kept its day. Nothing is written; the
    account is there, and a new secret is the caller's to ask for."""

    slug = "first-secret-gone"

    def __init__(self, application_id: UUID) -> None:
        super().__init__(
            f"service account {application_id} was created under this idempotency key, but the"
            " secret its first answer showed is kept no more (replaced, deleted, or older than a"
            " day); regenerate its secret"
        )
        self.application_id = application_id


class ClientIdTakenError(ApplicationError):
    """Another application already uses this name (client id)."""

    slug = "name-taken"

    def __init__(self, client_id: str) -> None:
        super().__init__(f"an application named {client_id!r} exists already")
        self.client_id = client_id
        self.field = "/name"


class InvalidRequestError(ApplicationError):
    """A request is missing a field or has one of the wrong kind; `field` is a JSON pointer."""

    slug = "invalid-request"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


class AuthenticationFailedError(ApplicationError):
    """The credentials name no live application, or the secret does not match. Which of the two
    is deliberately not said."""

    slug = "authentication-failed"

    def __init__(self) -> None:
        super().__init__("invalid client id or secret")


class NotAuthenticatedError(ApplicationError):
    """A request without a valid bearer token. `reason` never quotes the token."""

    slug = "not-authenticated"

    def __init__(self, reason: str) -> None:
        super().__init__(f"not authenticated: {reason}")
        self.reason = reason


class NotPermittedError(ApplicationError):
    """The caller is authenticated but holds no role that allows this."""

    slug = "forbidden"

    def __init__(self, action: str) -> None:
        super().__init__(f"you do not have sufficient permissions to {action}")
        self.action = action


class NameTakenError(ApplicationError):
    """Another live thing in the same namespace (scope) already has this name."""

    slug = "name-taken"

    def __init__(self, name: str, *, namespace: str, field: str) -> None:
        super().__init__(f"the name {name!r} is already in use in {namespace}")
        self.name = name
        self.namespace = namespace
        self.field = field


class PreconditionFailedError(ApplicationError):
    """If-Match named a version the resource is no longer at."""

    slug = "precondition-failed"

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"the resource is at version {actual}, not {expected} (If-Match)")
        self.expected = expected
        self.actual = actual


class BackendRejectedError(ApplicationError):
    """The backend refused the workload for good (invalid, forbidden): retrying cannot help."""

    slug = "backend-rejected"

    def __init__(self, job_name: str, reason: str) -> None:
        super().__init__(f"{job_name}: {reason}")
        self.job_name = job_name
        self.reason = reason


class EventTooLargeError(ApplicationError):
    """An event would encode to more bytes than one event may hold (its broker message would
    be refused, and the relay stop there). Nothing is written. `field`: a JSON pointer to the
    part of the event that holds most of it."""

    slug = "too-large"

    def __init__(self, field: str, *, event_type: str, size: int, limit: int) -> None:
        where = f"{field}: " if field else ""
        super().__init__(
            f"{where}too large: the {event_type} event it makes would be {size} bytes, more than"
            f" the {limit} bytes an event may hold"
        )
        self.field = field
        self.event_type = event_type
        self.size = size
        self.limit = limit


class PlanOutdatedError(ApplicationError):
    """A plan applied after what it read moved on (a template edited, an asset changed): nothing
    was written, and the plan is to be made again. `moved` names each thing that moved."""

    slug = "plan-outdated"

    def __init__(self, moved: list[str]) -> None:
        super().__init__(
            f"nothing was applied: since the plan was made, {'; '.join(moved)}; plan again"
        )
        self.moved = "; ".join(moved)
