"""Errors raised when a business rule refuses a command. They carry facts, never HTTP statuses.

Each layer names its own errors: domain/errors.py what a business rule refuses, services/errors.py
what a use case reports, infra/errors.py what an adapter reports.
"""

from typing import ClassVar


class TrainplateError(Exception):
    """The shape of every error this service raises on purpose: a stable `slug` naming the
    problem type, and the facts of the case as attributes (never parsed out of the message).
    The three roots (DomainError here, ApplicationError, InfraError) share it."""

    slug: ClassVar[str] = "error"

    @property
    def facts(self) -> dict[str, object]:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


class DomainError(TrainplateError):
    """A business rule refused a command."""

    slug = "domain-rule"


class InvalidHistoryError(DomainError):
    """A stream's history cannot be folded: only a corrupted or foreign stream gets here."""

    slug = "invalid-history"
