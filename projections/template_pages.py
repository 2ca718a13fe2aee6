"""A page of the template read model in Run:ai's list grammar (projections/template_queries.py),
decided in SQL: the scopes the caller may see, `filterBy`, `search`, the sort and the page, so a
list costs a page, not the catalogue.

It answers exactly as the grammar read in memory row by row would (its property test holds
it to tests/template_grammar.py): text compares by code
point (`COLLATE "C"`), a missing value reads as the empty string, a project id sorts as a number,
`runnable` reads as `true` or `false` (the projection works it out), and ties fall to the id.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Final

from domain.values import ScopeRef
from projections.executor import Executor
from projections.template_catalogue import COLUMNS, TemplateRow, row_of
from projections.template_queries import Condition

_TEXT: Final = {
    "name": "name",
    "workloadType": "'Distributed'",
    "scopeType": "scope_kind",
    "clusterId": "coalesce(meta->>'clusterId', '')",
    "projectId": "coalesce(meta->>'projectId', '')",
    "departmentId": "coalesce(meta->>'departmentId', '')",
    "createdBy": "created_by",
    "updatedBy": "updated_by",
    "runnable": "(combined->'runnable'->>'isRunnable')",
}
_DATES: Final = {"createdAt": "created_at", "updatedAt": "updated_at"}
# How each field sorts: text by code point; a project id as a number (zero-padded, as the
# in-memory order has it); times as times.
_SORT: Final = {
    **{field: f'{expression} COLLATE "C"' for field, expression in _TEXT.items()},
    "projectId": "lpad(coalesce(meta->>'projectId', ''), 12, '0') COLLATE \"C\"",
    **_DATES,
}
_TEXT_TESTS: Final = {
    "==": "{e} = {v}",
    "!=": "{e} <> {v}",
    "<=": '{e} COLLATE "C" <= {v}',
    ">=": '{e} COLLATE "C" >= {v}',
    "=@": "strpos({e}, {v}) > 0",
    "!@": "strpos({e}, {v}) = 0",
    "=$": "right({e}, length({v})) = {v}",
}
_DATE_TESTS: Final = {"==": "=", "!=": "<>", "<=": "<=", ">=": ">="}


class _Query:
    """The WHERE clause and its parameters, numbered as they are added."""

    def __init__(self, scopes: Iterable[ScopeRef]) -> None:
        chosen = sorted(scopes)
        self.params: list[Any] = [[s.kind for s in chosen], [s.id for s in chosen]]
        self.where = ["(scope_kind, scope_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))"]

    def param(self, value: Any) -> str:
        self.params.append(value)
        return f"${len(self.params)}"

    def condition(self, condition: Condition) -> None:
        if isinstance(condition.value, datetime):
            test = _DATE_TESTS[condition.operator]
            column = _DATES[condition.field]
            self.where.append(f"{column} {test} {self.param(condition.value)}::timestamptz")
            return
        expression = _TEXT[condition.field]
        if condition.operator == "=^":
            self.starts_with(expression, condition.value)
            return
        value = self.param(condition.value)
        self.where.append(_TEXT_TESTS[condition.operator].format(e=expression, v=value))

    def starts_with(self, expression: str, prefix: str) -> None:
        """As a range of the code-point order (an index on the column serves it), which is
        exactly the strings that start with the prefix; a prefix with no successor (all
        U+10FFFF) bounds it below only, and is tested itself. No redundant test otherwise: the
        planner would take it for another filter and think the range holds few rows."""
        low = self.param(prefix)
        self.where.append(f'{expression} COLLATE "C" >= {low}')
        if (high := _successor(prefix)) is not None:
            self.where.append(f'{expression} COLLATE "C" < {self.param(high)}')
        else:
            self.where.append(f"left({expression}, length({low})) = {low}")

    def search(self, text: str) -> None:
        needle = self.param(text.lower())
        self.where.append(
            f"(strpos(lower(name), {needle}) > 0"
            f" OR strpos(lower(coalesce(meta->>'description', '')), {needle}) > 0)"
        )


def _successor(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix`, by code point."""
    chars = list(prefix)
    while chars:
        last = ord(chars.pop())
        following = 0xE000 if last == 0xD7FF else last + 1  # no surrogate is a character
        if following <= 0x10FFFF:
            return "".join(chars) + chr(following)
    return None


def _query(
    scopes: Iterable[ScopeRef], conditions: Sequence[Condition], search: str | None
) -> _Query:
    query = _Query(scopes)
    for condition in conditions:
        query.condition(condition)
    if search:
        query.search(search)
    return query


async def page(
    conn: Executor,
    scopes: Iterable[ScopeRef],
    conditions: Sequence[Condition],
    *,
    search: str | None,
    sort_by: str | None,
    descending: bool,
    offset: int,
    limit: int,
) -> tuple[list[TemplateRow], bool]:
    """The page of templates in these scopes that the query selects, and whether more follow."""
    query = _query(scopes, conditions, search)
    direction = "DESC" if descending else "ASC"
    order = f"{_SORT[sort_by or 'name']} {direction}, template_id {direction}"
    # The page is chosen on narrow rows, then only its rows are read whole: however the
    # planner reaches the matching rows (an index in order, or a scan and a sort), it never
    # sorts or converts the wide columns of rows that are not on the page.
    rows = await conn.fetch(
        f"SELECT {COLUMNS} FROM template_catalogue JOIN ("
        f" SELECT template_id FROM template_catalogue WHERE {' AND '.join(query.where)}"
        f" ORDER BY {order} OFFSET {query.param(offset)} LIMIT {query.param(limit + 1)}"
        f") AS chosen USING (template_id) ORDER BY {order}",
        *query.params,
    )
    return [row_of(row) for row in rows[:limit]], len(rows) > limit


async def count(
    conn: Executor,
    scopes: Iterable[ScopeRef],
    conditions: Sequence[Condition],
    *,
    search: str | None,
) -> int:
    """How many templates in these scopes the query selects."""
    query = _query(scopes, conditions, search)
    row = await conn.fetchrow(
        f"SELECT count(*) FROM template_catalogue WHERE {' AND '.join(query.where)}",
        *query.params,
    )
    assert row is not None  # an aggregate always answers
    return int(row[0])
