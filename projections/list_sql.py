"""Run:ai's `filterBy` and `search` (projections/list_grammar.py) as a SQL WHERE clause over one
read model, so the database chooses, sorts and pages a list. It decides exactly as
`list_grammar.holds` does row by row (docs/decisions/0024-read-models.md)."""

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from projections.list_grammar import Condition, number

_TEXT_TESTS: Final = {
    # By code point as the other tests (the same answer, collations here being deterministic),
    # so an index of the column in that order serves an equality too.
    "==": '{e} COLLATE "C" = {v}',
    "!=": "{e} <> {v}",
    "<=": '{e} COLLATE "C" <= {v}',
    ">=": '{e} COLLATE "C" >= {v}',
    "=@": "strpos({e}, {v}) > 0",
    "!@": "strpos({e}, {v}) = 0",
    "=$": "right({e}, length({v})) = {v}",
}
_DATE_TESTS: Final = {"==": "=", "!=": "<>", "<=": "<=", ">=": ">="}
_DISTINCT_DATE_TESTS: Final = {**_DATE_TESTS, "!=": "IS DISTINCT FROM"}
_NUMBER_TESTS: Final = _DATE_TESTS


class Where:
    """The conditions of one query and their parameters, numbered as added: `text` fields' SQL
    expressions (never NULL), `dates`' columns, `numbers`' expressions (as numbers by ==, !=, <=
    and >=, else as their `text` or cast; NULL reads as missing). See decision 0024."""

    def __init__(
        self,
        text: Mapping[str, str],
        dates: Mapping[str, str],
        *,
        numbers: Mapping[str, str] | None = None,
        missing_time_differs: bool = False,
        first: int = 1,
    ) -> None:
        """`first`: the first parameter's number (others come before it in a larger statement)."""
        self._first = first
        self._numbers = numbers or {}
        self._text = {**{f: f"({e})::text" for f, e in self._numbers.items()}, **text}
        self._dates = dates
        self._date_tests = _DISTINCT_DATE_TESTS if missing_time_differs else _DATE_TESTS
        self.params: list[Any] = []
        self.where: list[str] = []

    @property
    def clause(self) -> str:
        return " AND ".join(self.where) or "true"

    def param(self, value: Any) -> str:
        self.params.append(value)
        return f"${self._first + len(self.params) - 1}"

    def condition(self, condition: Condition) -> None:
        if isinstance(condition.value, datetime):
            test = self._date_tests[condition.operator]
            column = self._dates[condition.field]
            self.where.append(f"{column} {test} {self.param(condition.value)}::timestamptz")
            return
        if condition.field in self._numbers and condition.operator in _NUMBER_TESTS:
            wanted = number(condition.value)
            assert wanted is not None  # the grammar refuses any other
            test = _NUMBER_TESTS[condition.operator]
            column = self._numbers[condition.field]
            compared = f"({column}) {test} {self.param(wanted)}::float8"
            as_text = _TEXT_TESTS[condition.operator].format(
                e=self._text[condition.field], v=self.param(condition.value)
            )
            self.where.append(f"coalesce({compared}, {as_text})")
            return
        expression = self._text[condition.field]
        if condition.operator == "=^":
            self.starts_with(expression, condition.value)
            return
        value = self.param(condition.value)
        self.where.append(_TEXT_TESTS[condition.operator].format(e=expression, v=value))

    def starts_with(self, expression: str, prefix: str) -> None:
        """As a range of the code-point order (an index serves it), exactly the strings with the
        prefix; one with no successor (all U+10FFFF) bounds it below and is tested itself. No other
        test: the planner would take it for another filter and think the range holds few rows."""
        low = self.param(prefix)
        self.where.append(f'{expression} COLLATE "C" >= {low}')
        if (high := _successor(prefix)) is not None:
            self.where.append(f'{expression} COLLATE "C" < {self.param(high)}')
        else:
            self.where.append(f"left({expression}, length({low})) = {low}")

    def search(self, text: str, expressions: tuple[str, ...]) -> None:
        """Run:ai's free-text `search`: the text, in any case, within one of the expressions."""
        needle = self.param(text.lower())
        found = " OR ".join(f"strpos(lower({e}), {needle}) > 0" for e in expressions)
        self.where.append(f"({found})")


def _successor(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix`, by code point."""
    chars = list(prefix)
    while chars:
        last = ord(chars.pop())
        following = 0xE000 if last == 0xD7FF else last + 1  # no surrogate is a character
        if following <= 0x10FFFF:
            return "".join(chars) + chr(following)
    return None
