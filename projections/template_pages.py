"""A page of the template read model in Run:ai's list grammar (projections/template_queries.py),
decided in SQL (seen scopes, `filterBy`, `search`, sort, page), answering exactly as the grammar
read in memory would (tests/template_grammar.py): docs/decisions/0024-read-models.md."""

from collections.abc import Iterable, Sequence
from typing import Final

from domain.values import ScopeRef
from projections import template_catalogue
from projections.executor import Executor
from projections.list_sql import Where
from projections.template_catalogue import TemplateRow
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
_SEARCHED: Final = ("name", "coalesce(meta->>'description', '')")


def _query(
    scopes: Iterable[ScopeRef], conditions: Sequence[Condition], search: str | None
) -> Where:
    query = Where(_TEXT, _DATES)
    chosen = sorted(scopes)
    kinds, ids = query.param([s.kind for s in chosen]), query.param([s.id for s in chosen])
    query.where.append(
        f"(scope_kind, scope_id) IN (SELECT * FROM unnest({kinds}::text[], {ids}::text[]))"
    )
    for condition in conditions:
        query.condition(condition)
    if search:
        query.search(search, _SEARCHED)
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
    # The page is chosen on narrow rows; only the rows this process has not decoded at their
    # version are read whole, in a second statement (one gone by then is left out).
    keys = await conn.fetch(
        f"SELECT template_id, version, recombined FROM template_catalogue WHERE {query.clause}"
        f" ORDER BY {order} OFFSET {query.param(offset)} LIMIT {query.param(limit + 1)}",
        *query.params,
    )
    chosen = {key[0]: template_catalogue.decoded_before(tuple(key)) for key in keys[:limit]}
    if missing := [template_id for template_id, row in chosen.items() if row is None]:
        chosen.update(await template_catalogue.by_ids(conn, missing))
    return [row for row in chosen.values() if row is not None], len(keys) > limit


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
        f"SELECT count(*) FROM template_catalogue WHERE {query.clause}",
        *query.params,
    )
    assert row is not None  # an aggregate always answers
    return int(row[0])
