"""The streams a thing's writes say it uses (services/ports.py `Uses`), as the use cases name
them."""

from uuid import UUID

from domain import org_units
from domain.values import ScopeRef


def of_scope(scope: ScopeRef, field: str) -> tuple[tuple[UUID, str], ...]:
    """The org unit a thing lives in, which it keeps from being deleted; none at the tenant,
    which always exists."""
    return () if scope.kind == "tenant" else ((org_units.stream_of(scope), field),)
