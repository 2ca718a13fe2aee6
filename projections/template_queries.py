"""Run:ai's template list grammar: `filterBy` (field, operator, value), `sortBy`/`sortOrder`,
`search`, over the fields a template list can be filtered and sorted by. Parsed here (by
projections/list_grammar.py); decided in SQL (projections/template_pages.py)."""

from collections.abc import Sequence
from typing import Final, Literal, get_args

from projections.list_grammar import Condition, Grammar, InvalidFilterError

__all__ = ["FIELDS", "Condition", "Field", "InvalidFilterError", "parse_conditions"]

# The fields a template list is filtered and sorted by, as Run:ai's document names them; the
# list routes take `sortBy` as this type, so its schema shows them.
Field = Literal[
    "name",
    "workloadType",
    "runnable",
    "scopeType",
    "clusterId",
    "projectId",
    "departmentId",
    "createdAt",
    "updatedAt",
    "createdBy",
    "updatedBy",
]
FIELDS: Final[tuple[str, ...]] = get_args(Field)
_DATES: Final = ("createdAt", "updatedAt")


GRAMMAR: Final = Grammar(FIELDS, dates=_DATES)


def parse_conditions(items: Sequence[str]) -> list[Condition]:
    """Each item as a condition over the template list's fields; InvalidFilterError names a
    bad one."""
    return GRAMMAR.parse(items)
