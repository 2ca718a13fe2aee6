"""How templates are read: the caller's view of the catalogue, Run:ai's list grammar over it,
and the wire shape of one template with its combined specs."""

from typing import Any, Final

import msgspec
from litestar.connection import ASGIConnection
from litestar.serialization import encode_json

from domain.bounded import Bounded
from infra.http.auth import Principal
from infra.http.callers import Caller, listed_by, listed_scopes
from infra.http.consistency import ridden
from infra.http.template_schemas import DistributedTemplate, ResponseMeta
from infra.security.standing import Along
from projections import template_queries
from projections.queries import Reads, template_reads
from projections.template_catalogue import TemplateRow
from projections.template_pages import Asked
from services.errors import InvalidRequestError
from services.templates import TemplateView

PAGE_LIMIT: Final = 500  # the most a page of a list holds
PAGE_SIZE: Final = 50  # a page when the request names no limit


class ListQuery(msgspec.Struct, frozen=True, kw_only=True):
    """A template list request in Run:ai's grammar."""

    filter_by: str | None
    search: str | None
    sort_by: str | None
    sort_order: str


def _conditions(query: ListQuery) -> list[template_queries.Condition]:
    items = [item for item in (query.filter_by or "").split(",") if item]
    try:
        return template_queries.parse_conditions(items)
    except template_queries.InvalidFilterError as exc:
        raise InvalidRequestError(f"/filterBy/{exc.index}", str(exc)) from None


def _asked(query: ListQuery, offset: int, limit: int) -> Asked:
    descending = query.sort_order == "desc"
    return Asked(query.search, query.sort_by, descending, offset, limit)


async def page_of(
    request: Caller,
    reads: Reads,
    query: ListQuery,
    offset: int,
    limit: int,
) -> tuple[list[TemplateRow], bool]:
    """The page of templates the caller may see that the query selects, and whether more
    follow: on the keys the request's settling statement read, when it read this page's."""
    conditions = _conditions(query)
    seen = await listed_scopes(request)
    page = None
    if (found := ridden(request)) is not None:
        along, rows = found
        page = template_reads.Ridden(along.sql, along.args, rows)
    return await template_reads.page(reads, seen, conditions, _asked(query, offset, limit), page)


async def page_along(
    connection: ASGIConnection[Any, Any, Any, Any], user: Principal
) -> Along | None:
    """A list's page keys as `page_of` reads them for `user`, to ride on the request's settling
    statement (consistency.PAGE_WITH_STANDING); None for what the handler will refuse."""
    params = connection.query_params
    try:
        query = ListQuery(
            filter_by=params.get("filterBy"),
            search=params.get("search"),
            sort_by=params.get("sortBy"),
            sort_order=params.get("sortOrder", "asc"),
        )
        conditions = _conditions(query)
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", PAGE_SIZE))
        if offset < 0 or not 1 <= limit <= PAGE_LIMIT:
            return None
        seen = await listed_by(connection, user)
        keys = template_reads.keys_riding(seen, conditions, _asked(query, offset, limit))
    except (InvalidRequestError, ValueError, KeyError):  # the handler's to answer
        return None
    return Along(keys.sql, keys.args, many=True)


async def count_of(request: Caller, reads: Reads, query: ListQuery) -> int:
    """How many templates the caller may see the query selects."""
    conditions = _conditions(query)
    seen = await listed_scopes(request)
    return await template_reads.count(reads, seen, conditions, search=query.search)


def wire_of(row: TemplateRow) -> DistributedTemplate:
    """The template as Run:ai shows it: a row of the catalogue, or what a write or a history
    read made (`written`), its times and combined specs included."""
    template, combined = row.template, row.combined
    meta = template.meta
    scope = meta.scope_ref
    return DistributedTemplate(
        meta=ResponseMeta(
            id=str(template.id),
            name=meta.name,
            description=meta.description,
            workload_type="Distributed",
            scope_type=meta.scope,
            scope_id=scope.id,
            cluster_id=None if meta.cluster_id is None else str(meta.cluster_id),
            department_id=meta.department_id,
            project_id=meta.project_id,
            created_by=row.created_by,
            created_at=row.created_at,
            updated_by=row.updated_by,
            updated_at=row.updated_at,
        ),
        spec=template.body.spec,
        assets=template.body.assets,
        master_spec_same_as_worker=template.body.master_spec_same_as_worker,
        master=template.body.master,
        runnable=combined.runnable,
        combined_spec=combined.spec,
        combined_master_spec=combined.master,
    )


# Each row's wire bytes, kept with the row (a row at its version is shared by the requests that
# read it, so its id is not reused while kept): a page joins them, neither built nor encoded anew.
_ENCODED: Final[Bounded[int, tuple[TemplateRow, msgspec.Raw]]] = Bounded(4096)


def encoded(row: TemplateRow) -> msgspec.Raw:
    """`wire_of(row)` as a response encodes it."""
    kept = _ENCODED.get(id(row))
    if kept is not None and kept[0] is row:
        return kept[1]
    raw = msgspec.Raw(encode_json(wire_of(row)))
    _ENCODED.put(id(row), (row, raw))
    return raw


def written(view: TemplateView) -> TemplateRow:
    """What a write left, as a row of the catalogue will show it once the projection has it."""
    created, updated = view.stamps.created, view.stamps.updated
    return TemplateRow(
        template=view.template,
        combined=view.combined,
        created_at=created.at,
        created_by=created.by,
        updated_at=updated.at,
        updated_by=updated.by,
    )
