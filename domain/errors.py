"""Errors raised when a business rule refuses a command. They carry facts, never HTTP statuses."""

from typing import ClassVar


class DomainError(Exception):
    """A business rule refused a command. `slug` is stable: it names the problem type."""

    slug: ClassVar[str] = "domain-rule"

    @property
    def facts(self) -> dict[str, object]:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


class InvalidHistoryError(DomainError):
    """A stream's history cannot be folded: only a corrupted or foreign stream gets here."""

    slug = "invalid-history"
