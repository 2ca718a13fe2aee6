"""Run:ai's `filterBy` grammar: `<field><operator><value>` items (`name=^ddp`), over one kind of
list's fields. Parsed here for every list and decided in SQL (projections/list_sql.py); `holds`
decides it row by row, the tests' oracle (docs/decisions/0024-read-models.md)."""

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Final

import msgspec

OPERATORS: Final = ("==", "!=", "<=", ">=", "=@", "!@", "=^", "=$")
_COMPARING: Final = ("==", "!=", "<=", ">=")

# What a row offers for a field: text, a number, a time, or nothing.
Value = str | int | float | datetime | None


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


class Grammar:
    """The grammar over one list's fields: `dates` are compared as times, `numbers` as
    numbers (by ==, !=, <= and >=; the text operators read them as text)."""

    def __init__(
        self, fields: Sequence[str], *, dates: Collection[str] = (), numbers: Collection[str] = ()
    ) -> None:
        self.fields = tuple(fields)
        self._dates = frozenset(dates)
        self._numbers = frozenset(numbers)
        names = "|".join(map(re.escape, self.fields))
        operators = "|".join(map(re.escape, OPERATORS))
        # The whole item, a newline included (`$` alone would let one end the value unseen).
        self._item = re.compile(rf"({names})({operators})(.+)", re.DOTALL)

    def parse(self, items: Sequence[str]) -> list[Condition]:
        """Each item as a condition; InvalidFilterError names a bad one."""
        return [self._condition(index, item) for index, item in enumerate(items)]

    def _condition(self, index: int, item: str) -> Condition:
        match = self._item.fullmatch(item)
        if match is None:
            known = ", ".join(self.fields)
            raise InvalidFilterError(
                index, f"{item!r} is not <field><operator><value>, with a field of {known}"
            )
        field, operator, wanted = match.groups()
        if field in self._dates:
            return Condition(field, operator, _moment(index, operator, wanted))
        if field in self._numbers and operator in _COMPARING and number(wanted) is None:
            raise InvalidFilterError(index, f"{field} is a number; {wanted!r} is not")
        return Condition(field, operator, wanted)


def split_items(filter_by: str | Sequence[str] | None) -> list[str]:
    """The items of a `filterBy`, sent as one comma-separated value (Run:ai's clients join a
    list so) or repeated."""
    given = [filter_by] if isinstance(filter_by, str) else list(filter_by or ())
    return [item for value in given for item in value.split(",") if item]


def _moment(index: int, operator: str, wanted: str) -> datetime:
    if operator not in _COMPARING:
        raise InvalidFilterError(index, "dates take ==, !=, <= or >=")
    try:
        moment = datetime.fromisoformat(wanted.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidFilterError(index, f"{wanted!r} is not an ISO-8601 time") from None
    # A time without a zone is read as UTC.
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    if in_utc(moment) is None:
        raise InvalidFilterError(index, f"{wanted!r} is past the times a list holds")
    return moment


def in_utc(moment: datetime) -> datetime | None:
    """The time in UTC, or None for one whose UTC falls outside years 1 to 9999 (a time zone
    away from either end), which no column holds and the driver cannot even send."""
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return None


def number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None  # no NaN, inf


_TESTS: Final[Mapping[str, Callable[[object, object], bool]]] = {
    "==": lambda have, want: have == want,
    "!=": lambda have, want: have != want,
    "<=": lambda have, want: have <= want,  # type: ignore[operator]  # like with like, below
    ">=": lambda have, want: have >= want,  # type: ignore[operator]
    "=@": lambda have, want: str(want) in str(have),
    "!@": lambda have, want: str(want) not in str(have),
    "=^": lambda have, want: str(have).startswith(str(want)),
    "=$": lambda have, want: str(have).endswith(str(want)),
}


def holds(condition: Condition, value: Value) -> bool:
    """Whether a row whose field has `value` meets the condition. A time condition holds only
    of a time; a number is compared as a number where the condition compares."""
    test = _TESTS[condition.operator]
    if isinstance(condition.value, datetime):
        return isinstance(value, datetime) and test(value, condition.value)
    if isinstance(value, datetime):
        return test(value.isoformat(), condition.value)
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if is_number and condition.operator in _COMPARING:
        wanted = number(condition.value)
        return wanted is not None and test(value, wanted)
    if isinstance(value, bool):
        return test(str(value).lower(), condition.value)
    return test("" if value is None else str(value), condition.value)


def matches(conditions: Sequence[Condition], fields: Mapping[str, Value]) -> bool:
    """Whether a row with these fields meets every condition (a missing field: no value)."""
    return all(holds(condition, fields.get(condition.field)) for condition in conditions)


def searched(text: str | None, values: Sequence[str | None]) -> bool:
    """Run:ai's free-text `search`: the text, in any case, within one of the values."""
    if not text:
        return True
    needle = text.lower()
    return any(needle in value.lower() for value in values if value)
