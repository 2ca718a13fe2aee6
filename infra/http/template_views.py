"""How templates are read: the caller's view of the catalogue, Run:ai's list grammar over it,
and the wire shape of one template with its combined specs."""

from datetime import UTC, datetime
from typing import Any

from domain.combined import Combined
from domain.templates import Template
from infra.bootstrap import Resources
from infra.http.callers import Caller, seen_scopes
from infra.http.template_schemas import DistributedTemplate, ResponseMeta
from projections import template_catalogue, template_queries
from projections.template_catalogue import TemplateRow
from services import templates as use_cases
from services.errors import InvalidRequestError
from services.ports import NamedStreams, OrgTree


async def chosen(
    request: Caller,
    streams: NamedStreams,
    tree: OrgTree,
    resources: Resources,
    filter_by: str | None,
    search: str | None,
    sort_by: str | None,
    sort_order: str,
) -> list[TemplateRow]:
    items = [item for item in (filter_by or "").split(",") if item]
    try:
        filters = template_queries.parse_filters(items)
    except template_queries.InvalidFilterError as exc:
        raise InvalidRequestError(f"/filterBy/{exc.index}", str(exc)) from None
    seen = await seen_scopes(request, streams, tree)
    async with resources.pool.acquire() as conn:
        rows = [
            r
            for r in await template_catalogue.list_templates(conn)
            if r.template.meta.scope_ref in seen
        ]
    fields = {}
    for row in rows:
        summary = summary_of(row)
        if sort_by == "runnable" or any("runnable" in item for item in items):
            summary["runnable"] = (
                await use_cases.combined(row.template, streams=streams)
            ).runnable.is_runnable
        fields[row.template.id] = summary
    chosen = template_queries.select(
        list(fields.values()),
        filters=filters,
        search=search,
        sort_by=sort_by,
        descending=sort_order == "desc",
    )
    by_id = {row.template.id: row for row in rows}
    return [by_id[summary["id"]] for summary in chosen]


def summary_of(row: TemplateRow) -> dict[str, Any]:
    meta = row.template.meta
    return {
        "id": row.template.id,
        "name": meta.name,
        "description": meta.description,
        "workloadType": "Distributed",
        "scopeType": meta.scope,
        "clusterId": meta.cluster_id,
        "projectId": meta.project_id,
        "departmentId": meta.department_id,
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
        "createdBy": row.created_by,
        "updatedBy": row.updated_by,
    }


async def wire_of(
    request: Caller,
    template: Template,
    row: TemplateRow | None,
    streams: NamedStreams,
    *,
    combined: Combined | None = None,
) -> DistributedTemplate:
    """The template as Run:ai shows it; times from the read model when it has the row."""
    if combined is None:
        combined = await use_cases.combined(template, streams=streams)
    now, by = datetime.now(UTC), request.user.subject
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
            created_by=row.created_by if row else by,
            created_at=row.created_at if row else now,
            updated_by=row.updated_by if row else by,
            updated_at=row.updated_at if row and row.template.version == template.version else now,
        ),
        spec=template.body.spec,
        assets=template.body.assets,
        master_spec_same_as_worker=template.body.master_spec_same_as_worker,
        master=template.body.master,
        runnable=combined.runnable,
        combined_spec=combined.spec,
        combined_master_spec=combined.master,
    )
