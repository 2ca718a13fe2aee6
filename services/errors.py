"""Errors of the application layer: what a use case reports that is not a business rule."""

from uuid import UUID

from domain.errors import TrainplateError


class ApplicationError(TrainplateError):
    """Root of application errors: what a use case reports that is not a business rule."""

    slug = "application-error"


class VersionConflictError(ApplicationError):
    """The stream moved on since the caller read it. `actual` is None when the store cannot tell."""

    slug = "version-conflict"

    def __init__(self, stream_id: UUID, *, expected: int | None, actual: int | None) -> None:
        super().__init__(
            f"stream {stream_id} is at version {actual if actual is not None else 'unknown'}, "
            f"not at the expected version {expected}"
        )
        self.stream_id = stream_id
        self.expected = expected
        self.actual = actual


class IdempotencyKeyReusedError(ApplicationError):
    """An event id (or the idempotency key it came from) was already used for a different append."""

    slug = "idempotency-key-reused"

    def __init__(self, stream_id: UUID) -> None:
        super().__init__(
            f"the idempotency key was already used for a different append ({stream_id})"
        )
        self.stream_id = stream_id
