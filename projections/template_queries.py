"""Run:ai's template list grammar: `filterBy` (field, operator, value), `sortBy`/`sortOrder`,
`search`, over the fields a template list can be filtered and sorted by. Parsed here; decided
in SQL (projections/template_pages.py)."""

import functools
import re
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import Final, Literal, get_args

import msgspec

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


@functools.cache
def _grammar(fields: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(rf"^({'|'.join(fields)})(==|!=|<=|>=|=@|!@|=\^|=\$)(.+)$")


_DATES: Final = ("createdAt", "updatedAt")


class InvalidFilterError(ValueError):
    """`index` is the offending filterBy item."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index


class Condition(msgspec.Struct, frozen=True):
    """One `filterBy` item: a field, an operator, and the value (a time for the date fields)."""

    field: str
    operator: str
    value: str | datetime


def parse_conditions(
    items: Sequence[str],
    *,
    fields: Sequence[str] = FIELDS,
    dates: Collection[str] = _DATES,
) -> list[Condition]:
    """Each item as a condition over these fields (the template list's unless told: another
    list of Run:ai's, the pods', speaks the same grammar); InvalidFilterError names a bad one."""
    grammar = _grammar(tuple(fields))
    found: list[Condition] = []
    for index, item in enumerate(items):
        match = grammar.match(item)
        if match is None:
            raise InvalidFilterError(index, f"{item!r} is not <field><operator><value>")
        field, operator, wanted = match.groups()
        if field in dates:
            if operator in ("=@", "!@", "=^", "=$"):
                raise InvalidFilterError(index, "dates take ==, !=, <= or >=")
            try:
                moment = datetime.fromisoformat(wanted.replace("Z", "+00:00"))
            except ValueError:
                raise InvalidFilterError(index, f"{wanted!r} is not an ISO-8601 time") from None
            if moment.tzinfo is None:  # a time without a zone is read as UTC
                moment = moment.replace(tzinfo=UTC)
            found.append(Condition(field, operator, moment))
        else:
            found.append(Condition(field, operator, wanted))
    return found
