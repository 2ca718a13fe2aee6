"""Errors of the infrastructure: what an adapter reports when the outside world fails it.

Each layer names its own errors: domain/errors.py what a business rule refuses, services/errors.py
what a use case reports, infra/errors.py what an adapter reports.
"""

from typing import Final

import asyncpg

from domain.errors import TrainplateError

# What a lost or refused database connection raises where a read reaches the pool itself: the
# store being away, never the request's fault nor a bug (the HTTP layer answers 503).
CONNECTION_LOST: Final = (
    OSError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.TooManyConnectionsError,
)


class InfraError(TrainplateError):
    """Root of infrastructure errors: the outside world failed an adapter."""

    slug = "infrastructure-error"


class StoreUnavailableError(InfraError):
    """The event store could not be reached or lost the connection mid-call.

    An append that fails this way may or may not have committed: retry it with the same event ids
    (an idempotency key), and the store answers with the first result if it did.
    """

    slug = "store-unavailable"

    def __init__(self, operation: str) -> None:
        super().__init__(f"the event store is unavailable ({operation}); retry later")
        self.operation = operation


class TokenSigningUnconfiguredError(InfraError):
    """No signing key is configured, so no access token can be issued."""

    slug = "token-signing-unconfigured"

    def __init__(self) -> None:
        super().__init__("no token signing key is configured (TRAINPLATE_AUTH__SIGNING_KEY)")
