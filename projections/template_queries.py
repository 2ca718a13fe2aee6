"""Run:ai's template list grammar: `filterBy` (field, operator, value), `sortBy`/`sortOrder`,
`search`, over the fields a template list can be filtered and sorted by."""

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

FIELDS: Final = (
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
)
_FILTER: Final = re.compile(rf"^({'|'.join(FIELDS)})(==|!=|<=|>=|=@|!@|=\^|=\$)(.+)$")
_DATES: Final = ("createdAt", "updatedAt")


class InvalidFilterError(ValueError):
    """`index` is the offending filterBy item."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index


Filter = Callable[[Mapping[str, Any]], bool]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, datetime):
        return value.isoformat()
    return "" if value is None else str(value)


class Condition(msgspec.Struct, frozen=True):
    """One `filterBy` item: a field, an operator, and the value (a time for the date fields)."""

    field: str
    operator: str
    value: str | datetime


def parse_conditions(items: Sequence[str]) -> list[Condition]:
    """Each item as a condition; InvalidFilterError names a bad one."""
    found: list[Condition] = []
    for index, item in enumerate(items):
        match = _FILTER.match(item)
        if match is None:
            raise InvalidFilterError(index, f"{item!r} is not <field><operator><value>")
        field, operator, wanted = match.groups()
        if field in _DATES:
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


def parse_filters(items: Sequence[str]) -> list[Filter]:
    """Each item as a predicate over a row's fields; InvalidFilterError names a bad one."""
    return [predicate(condition) for condition in parse_conditions(items)]


def predicate(condition: Condition) -> Filter:
    """The condition as a test of a row's fields."""
    if isinstance(condition.value, datetime):
        return _compare_dates(condition.field, condition.operator, condition.value)
    return _compare_text(condition.field, condition.operator, condition.value)


def _compare_dates(field: str, operator: str, moment: datetime) -> Filter:
    tests: dict[str, Callable[[datetime], bool]] = {
        "==": lambda v: v == moment,
        "!=": lambda v: v != moment,
        "<=": lambda v: v <= moment,
        ">=": lambda v: v >= moment,
    }
    test = tests[operator]
    return lambda row: isinstance(row.get(field), datetime) and test(row[field])


def _compare_text(field: str, operator: str, wanted: str) -> Filter:
    tests: dict[str, Callable[[str], bool]] = {
        "==": lambda v: v == wanted,
        "!=": lambda v: v != wanted,
        "<=": lambda v: v <= wanted,
        ">=": lambda v: v >= wanted,
        "=@": lambda v: wanted in v,
        "!@": lambda v: wanted not in v,
        "=^": lambda v: v.startswith(wanted),
        "=$": lambda v: v.endswith(wanted),
    }
    test = tests[operator]
    return lambda row: test(_text(row.get(field)))


def select(
    rows: Sequence[Mapping[str, Any]],
    *,
    filters: Sequence[Filter] = (),
    search: str | None = None,
    sort_by: str | None = None,
    descending: bool = False,
) -> list[Mapping[str, Any]]:
    """Rows passing every filter and the free-text search (name and description), sorted."""
    chosen = [row for row in rows if all(f(row) for f in filters)]
    if search:
        needle = search.lower()
        chosen = [
            row
            for row in chosen
            if needle in _text(row.get("name")).lower()
            or needle in _text(row.get("description")).lower()
        ]
    key = sort_by or "name"

    def order(row: Mapping[str, Any]) -> tuple[str, str]:
        value = row.get(key)
        text = (
            f"{value:012d}"
            if isinstance(value, int) and not isinstance(value, bool)
            else _text(value)
        )
        return text, _text(row.get("id"))

    return sorted(chosen, key=order, reverse=descending)
