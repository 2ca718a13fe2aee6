"""The workloads list: the workloads the caller may see, newest first, in pages, with the
template each came from; read by the API's own list (infra/http/workload_queries.py `page`),
so it shows what `GET /api/v1/workloads` answers the same caller."""

from typing import Annotated, Final
from uuid import UUID

from litestar import get
from litestar.di import NamedDependency
from litestar.params import QueryParameter
from litestar.response import Template

from infra.console.pages_common import page
from infra.http import workload_queries
from infra.http.adapters import Adapters
from infra.http.callers import Caller, seen_scopes
from projections.queries import template_reads

PAGE_SIZE: Final = 50


async def template_names(
    request: Caller, adapters: Adapters, ids: set[UUID]
) -> dict[UUID, str | None]:
    """Each template's name, in one read; None for one deleted since, or out of the caller's
    sight (the API's GET answers both alike)."""
    found = await template_reads.names(adapters.reads, ids, await seen_scopes(request))
    return {template_id: found.get(template_id) for template_id in ids}


@get("/workloads", include_in_schema=False)
async def workloads_list(
    request: Caller,
    adapters: NamedDependency[Adapters],
    page_number: Annotated[int, QueryParameter(name="page", ge=1, le=100_000)] = 1,
) -> Template:
    offset = (page_number - 1) * PAGE_SIZE
    shown, more = await workload_queries.page(
        adapters.reads,
        request,
        deleted=False,
        filter_by=None,
        search=None,
        offset=offset,
        limit=PAGE_SIZE,
    )
    templates = {
        UUID(str(w.additional_fields["templateId"]))
        for w in shown
        if w.additional_fields.get("templateId")
    }
    names = await template_names(request, adapters, templates)
    rows = []
    for w in shown:
        found = w.additional_fields.get("templateId")
        template_id = UUID(str(found)) if found else None
        rows.append(
            {
                "id": w.id,
                "name": w.name,
                "project": w.project_name,
                "phase": w.phase,
                "created_at": w.created_at,
                "template_id": template_id,
                "template": names.get(template_id) if template_id else None,
            }
        )
    return page(
        request,
        "workloads.html.j2",
        title="Workloads",
        section="workloads",
        rows=rows,
        page_number=page_number,
        more=more,
    )


WORKLOAD_LIST_ROUTES: Final = (workloads_list,)
