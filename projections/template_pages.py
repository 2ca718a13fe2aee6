"""A page of the template read model in Run:ai's list grammar (projections/template_queries.py),
decided in SQL (seen scopes, `filterBy`, `search`, sort, page), answering exactly as the grammar
read in memory would (tests/template_grammar.py): docs/decisions/0024-read-models.md."""

import functools
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple
from uuid import UUID

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
    scopes: Iterable[ScopeRef] | None,
    conditions: Sequence[Condition],
    search: str | None,
    *,
    first: int = 1,
) -> Where:
    query = Where(_TEXT, _DATES, first=first)
    if scopes is not None:  # (None: every scope, as no template outlives its own)
        # One array of "kind/id" (no kind holds a /): its plan is generic, where a pair of
        # unnested arrays made PostgreSQL plan every execution anew (docs/decisions/0038).
        keys = query.param(_scope_keys(frozenset(scopes)))
        query.where.append(f"(scope_kind || '/' || scope_id) = ANY({keys}::text[])")
    for condition in conditions:
        query.condition(condition)
    if search:
        query.search(search, _SEARCHED)
    return query


@functools.lru_cache(maxsize=256)
def _scope_keys(scopes: frozenset[ScopeRef]) -> tuple[str, ...]:
    """Kept per set of scopes (a caller's comes from the API's access cache, the same set each
    request): a large tenant's thousand scopes cost more to write out than the rest of a page."""
    return tuple(sorted(f"{scope.kind}/{scope.id}" for scope in scopes))


class Asked(NamedTuple):
    """What a list request asks of a page besides its scopes and conditions."""

    search: str | None
    sort_by: str | None
    descending: bool
    offset: int
    limit: int


class KeysQuery(NamedTuple):
    """The statement choosing a page on narrow rows (a decoded row's key), one more than
    the page to tell whether more follow."""

    sql: str
    args: tuple[object, ...]


def keys_query(
    scopes: Iterable[ScopeRef] | None,
    conditions: Sequence[Condition],
    asked: Asked,
    *,
    first: int = 1,
) -> KeysQuery:
    """The page's `KeysQuery`, its parameters numbered from `$first`."""
    query = _query(scopes, conditions, asked.search, first=first)
    direction = "DESC" if asked.descending else "ASC"
    order = f"{_SORT[asked.sort_by or 'name']} {direction}, template_id {direction}"
    if asked.offset == 0 and not conditions and not asked.search:
        # An unfiltered first page's size written in: with it a parameter, PostgreSQL prices
        # the generic plan as reading a tenth of the catalogue and plans every execution anew.
        page = f"LIMIT {int(asked.limit) + 1}"
    else:
        page = f"OFFSET {query.param(asked.offset)} LIMIT {query.param(asked.limit + 1)}"
    sql = (
        f"SELECT template_id, version, recombined, tableoid FROM template_catalogue"
        f" WHERE {query.clause}"
        f" ORDER BY {order} {page}"
    )
    return KeysQuery(sql, tuple(query.params))


async def page(
    conn: Executor, scopes: Iterable[ScopeRef] | None, conditions: Sequence[Condition], asked: Asked
) -> tuple[list[TemplateRow], bool]:
    """The page of templates in these scopes (None: all) that the query selects, and whether
    more follow."""
    keys = keys_query(scopes, conditions, asked)
    chosen, more = chosen_by(await conn.fetch(keys.sql, *keys.args), asked.limit)
    return await completed(conn, chosen), more


Chosen = dict[UUID, TemplateRow | None]


def chosen_by(keys: Sequence[Any], limit: int) -> tuple[Chosen, bool]:
    """The rows a `KeysQuery` found, as far as this process decoded them at their version
    (None: to be read whole), and whether more follow."""
    chosen: Chosen = {}
    for key in keys[:limit]:
        if (template_id := key["template_id"]) is not None:  # (None: an outer join's nothing)
            chosen[template_id] = template_catalogue.decoded_before(
                (template_id, key["version"], key["recombined"], key["tableoid"])
            )
    return chosen, len(keys) > limit


def whole(chosen: Chosen) -> list[TemplateRow] | None:
    """The page, if no row of it is left to read (None: some are)."""
    rows = [row for row in chosen.values() if row is not None]
    return rows if len(rows) == len(chosen) else None


async def completed(conn: Executor, chosen: Chosen) -> list[TemplateRow]:
    """The page, its rows not decoded yet read whole (one gone by then is left out)."""
    if missing := [template_id for template_id, row in chosen.items() if row is None]:
        chosen = {**chosen, **await template_catalogue.by_ids(conn, missing)}
    return [row for row in chosen.values() if row is not None]


async def count(
    conn: Executor,
    scopes: Iterable[ScopeRef] | None,
    conditions: Sequence[Condition],
    *,
    search: str | None,
) -> int:
    """How many templates in these scopes (None: all) the query selects."""
    query = _query(scopes, conditions, search)
    row = await conn.fetchrow(
        f"SELECT count(*) FROM template_catalogue WHERE {query.clause}",
        *query.params,
    )
    assert row is not None  # an aggregate always answers
    return int(row[0])
