"""The templates grid: the page of templates the caller may see, filtered by name, sorted and
paged by the API's own list (infra/http/templates.py `list_page`), so it shows what
`GET /api/v1/workload-templates/distributed` answers the same caller."""

from typing import Annotated, Final, Literal

from litestar import get
from litestar.di import NamedDependency
from litestar.params import FromQuery, QueryParameter
from litestar.response import Template

from infra.console.linked import asset_names
from infra.console.pages_common import page, person
from infra.console.scopes import choice_value, visible_scopes
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.template_actions import list_page
from infra.http.template_views import ListQuery, count_of

PAGE_SIZE: Final = 20
# The grid's sortable columns, by the list grammar's own field names.
SORTS: Final = {
    "name": "Name",
    "scopeType": "Scope",
    "runnable": "Runnable",
    "updatedBy": "Updated by",
    "updatedAt": "Updated",
}


def _query(name: str, sort: str, order: str) -> ListQuery:
    # The list grammar separates conditions with commas: a name holding one is searched for.
    text = name.strip()
    by_name = f"name=@{text}" if text and "," not in text else None
    search = text if text and "," in text else None
    return ListQuery(filter_by=by_name, search=search, sort_by=sort, sort_order=order)


@get("/templates", include_in_schema=False)
async def templates_grid(
    request: Caller,
    adapters: NamedDependency[Adapters],
    name: Annotated[str, QueryParameter(max_length=200)] = "",
    sort: FromQuery[Literal["name", "scopeType", "runnable", "updatedBy", "updatedAt"]] = "name",
    order: FromQuery[Literal["asc", "desc"]] = "asc",
    page_number: Annotated[int, QueryParameter(name="page", ge=1, le=100_000)] = 1,
) -> Template:
    query = _query(name, sort, order)
    offset = (page_number - 1) * PAGE_SIZE
    listed = await list_page(request, adapters.reads, query, offset, PAGE_SIZE)
    total = await count_of(request, adapters.reads, query)
    scopes = {(c.kind, c.id): c.label for c in await visible_scopes(request, adapters)}
    names = await asset_names(request, adapters)
    rows = []
    for entry in listed.entries:
        meta, assets = entry.meta, entry.assets
        linked = []
        if assets is not None and assets.environment is not None:
            linked.append(("Environment", names.get(assets.environment, str(assets.environment))))
        if assets is not None and assets.compute is not None:
            linked.append(("Compute resource", names.get(assets.compute, str(assets.compute))))
        for source in (assets.datasources or ()) if assets is not None else ():
            linked.append(("Data source", names.get(source.id, str(source.id))))
        scope_key = (meta.scope_type, "" if meta.scope_type == "tenant" else meta.scope_id)
        rows.append(
            {
                "id": meta.id,
                "name": meta.name,
                "scope": scopes.get(scope_key, choice_value(*scope_key)),
                "framework": entry.combined_spec.distributed_framework or "",
                "workers": entry.combined_spec.num_workers,
                "runnable": entry.runnable,
                "linked": linked,
                "updated_by": person(request, meta.updated_by or meta.created_by),
                "updated_at": meta.updated_at or meta.created_at,
            }
        )
    pages = max(1, -(-total // PAGE_SIZE))
    return page(
        request,
        "templates.html.j2",
        title="Templates",
        section="templates",
        rows=rows,
        name=name,
        sort=sort,
        order=order,
        sorts=SORTS,
        page_number=page_number,
        pages=pages,
        total=total,
    )
