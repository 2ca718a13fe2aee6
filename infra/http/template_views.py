"""How templates are read: the caller's view of the catalogue, Run:ai's list grammar over it,
and the wire shape of one template with its combined specs."""

import msgspec

from infra.http.callers import Caller, seen_scopes
from infra.http.template_schemas import DistributedTemplate, ResponseMeta
from projections import template_queries
from projections.queries import Reads, template_reads
from projections.template_catalogue import TemplateRow
from services.errors import InvalidRequestError
from services.templates import TemplateView


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


async def page_of(
    request: Caller,
    reads: Reads,
    query: ListQuery,
    offset: int,
    limit: int,
) -> tuple[list[TemplateRow], bool]:
    """The page of templates the caller may see that the query selects, and whether more
    follow."""
    conditions = _conditions(query)
    seen = await seen_scopes(request)
    return await template_reads.page(
        reads,
        seen,
        conditions,
        search=query.search,
        sort_by=query.sort_by,
        descending=query.sort_order == "desc",
        offset=offset,
        limit=limit,
    )


async def count_of(request: Caller, reads: Reads, query: ListQuery) -> int:
    """How many templates the caller may see the query selects."""
    conditions = _conditions(query)
    seen = await seen_scopes(request)
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
