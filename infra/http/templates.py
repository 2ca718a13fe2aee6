"""Distributed templates in Run:ai's shapes (`/api/v1/workload-templates/...`,
docs/api/templates.md): `ETag` and `If-Match` by stream version, POST's `Idempotency-Key`; reads
from the template catalogue. Also: domain/templates.py, services/templates.py."""

from typing import Annotated, Any, Final, Literal, cast
from uuid import UUID

from litestar import Response, delete, get, patch, post, put
from litestar.di import NamedDependency
from litestar.openapi import ResponseSpec
from litestar.params import FromPath, JSONBody, QueryParameter

from domain.commands import DeleteTemplate, UpdateTemplate
from domain.templates import TemplateNotFoundError
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, visible_or_missing
from infra.http.consistency import PAGE_WITH_STANDING, READ_WITH_STANDING, RowRead
from infra.http.lists import Count
from infra.http.openapi_document import NOT_NEGATIVE
from infra.http.template_actions import (
    body_of,
    check_name_free,
    create_from,
    encoded_page,
    expected_version_of,
    patch_from,
    read_template,
)
from infra.http.template_compliance import (
    ComplyToProject,
    ComplyToReplicaType,
    ComplyToWorkloadType,
    comply_of,
)
from infra.http.template_schemas import (
    CreationRequest,
    DistributedTemplate,
    EncodedTemplateList,
    TemplateList,
    UpdateRequest,
)
from infra.http.template_views import (
    PAGE_LIMIT,
    PAGE_SIZE,
    ListQuery,
    count_of,
    page_along,
    wire_of,
    written,
)
from projections import template_queries
from projections.queries import template_reads as queries
from services import templates as use_cases

BASE: Final = "/api/v1/workload-templates"
DISTRIBUTED: Final = f"{BASE}/distributed"
# Both lists sort by the fields Run:ai's document names.
SortBy = Annotated[
    template_queries.Field | None,
    QueryParameter(name="sortBy"),
]


def _sent(page: EncodedTemplateList) -> TemplateList:
    """What the API sends for a list: the same JSON, each entry encoded already; the schema
    names what it encodes."""
    return cast(TemplateList, page)


def _respond(wire: DistributedTemplate, version: int, status: int) -> Response[DistributedTemplate]:
    return Response(wire, status_code=status, headers={"ETag": f'"{version}"'})


@post(DISTRIBUTED, status_code=202, tags=["Distributed templates"])
async def create_template(
    request: Caller,
    data: JSONBody[CreationRequest],
    adapters: NamedDependency[Adapters],
) -> Response[DistributedTemplate]:
    wire, version = await create_from(request, data, adapters)
    return _respond(wire, version, 202)


@get(DISTRIBUTED, tags=["Distributed templates"], opt={PAGE_WITH_STANDING: page_along})
async def list_distributed(
    request: Caller,
    adapters: NamedDependency[Adapters],
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=PAGE_LIMIT)] = PAGE_SIZE,
    sort_by: SortBy = None,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    filter_by: Annotated[str | None, QueryParameter(name="filterBy")] = None,
    search: Annotated[str | None, QueryParameter()] = None,
    comply_to_project: ComplyToProject = None,
    comply_to_replica_type: ComplyToReplicaType = None,
) -> TemplateList:
    query = ListQuery(filter_by=filter_by, search=search, sort_by=sort_by, sort_order=sort_order)
    comply = comply_of(comply_to_project, comply_to_replica_type)
    return _sent(await encoded_page(request, adapters, query, offset, limit, comply))


@get(BASE, tags=["Templates"], opt={PAGE_WITH_STANDING: page_along})
async def list_any(
    request: Caller,
    adapters: NamedDependency[Adapters],
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=PAGE_LIMIT)] = PAGE_SIZE,
    sort_by: SortBy = None,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    filter_by: Annotated[str | None, QueryParameter(name="filterBy")] = None,
    search: Annotated[str | None, QueryParameter()] = None,
    comply_to_project: ComplyToProject = None,
    comply_to_workload_type: ComplyToWorkloadType = None,
    comply_to_replica_type: ComplyToReplicaType = None,
) -> TemplateList:
    """Every template type; this service holds distributed ones only."""
    query = ListQuery(filter_by=filter_by, search=search, sort_by=sort_by, sort_order=sort_order)
    comply = comply_of(comply_to_project, comply_to_replica_type)
    return _sent(await encoded_page(request, adapters, query, offset, limit, comply))


@get(f"{BASE}/count", tags=["Templates"])
async def count_templates(
    request: Caller,
    adapters: NamedDependency[Adapters],
    filter_by: Annotated[str | None, QueryParameter(name="filterBy")] = None,
    search: Annotated[str | None, QueryParameter()] = None,
) -> Count:
    query = ListQuery(filter_by=filter_by, search=search, sort_by=None, sort_order="asc")
    return Count(await count_of(request, adapters.reads, query))


@get(f"{BASE}/name-availability", status_code=204, tags=["Templates"])
async def name_availability(
    request: Caller,
    adapters: NamedDependency[Adapters],
    template_name: Annotated[str, QueryParameter(name="templateName", min_length=1)],
    scope_type: Annotated[
        Literal["tenant", "cluster", "department", "project"], QueryParameter(name="scopeType")
    ],
    scope_id: Annotated[str | None, QueryParameter(name="scopeId")] = None,
) -> None:
    """204 when the name is free in the scope, 409 when a template there holds it. A scope the
    caller may not see is answered as one that does not exist: its names are not its to know."""
    await check_name_free(
        request, adapters, template_name, scope_type, scope_id, fields=("/scopeId", "/templateName")
    )


@get(
    [f"{DISTRIBUTED}/{{template_id:uuid}}", f"{BASE}/{{template_id:uuid}}"],
    tags=["Distributed templates", "Templates"],
    # The row is read with the request's standing, in one round trip (infra/http/consistency.py).
    opt={READ_WITH_STANDING: RowRead(queries.ONE_BY_ID, "template_id")},
)
async def get_template(
    request: Caller,
    template_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
    comply_to_project: ComplyToProject = None,
    comply_to_replica_type: ComplyToReplicaType = None,
) -> Response[DistributedTemplate]:
    """One template, at its distributed path or the any-type one; with `complyToProject`, its
    compliance issues there too (as the lists have them)."""
    comply = comply_of(comply_to_project, comply_to_replica_type)
    wire, version = await read_template(request, template_id, adapters, comply)
    return _respond(wire, version, 200)


# An edit sent with If-Match, once the template has moved on from that version.
IF_MATCH_FAILED: Final = {
    412: ResponseSpec(
        data_container=dict[str, Any],
        media_type="application/problem+json",
        description="If-Match named a version the template is no longer at (`expected`, `actual`)",
    )
}

# A template the caller may not see is a 404 before the body of its PUT, PATCH or DELETE is read.
visible_template: Final = visible_or_missing(
    use_cases.live_scope, TemplateNotFoundError, param="template_id"
)


@put(
    f"{DISTRIBUTED}/{{template_id:uuid}}",
    tags=["Distributed templates"],
    guards=[visible_template],
    responses=IF_MATCH_FAILED,
)
async def replace_template(
    request: Caller,
    template_id: FromPath[UUID],
    data: JSONBody[UpdateRequest],
    adapters: NamedDependency[Adapters],
) -> Response[DistributedTemplate]:
    command = UpdateTemplate(
        template_id=template_id,
        name=data.meta.name,
        description=data.meta.description,
        body=body_of(data.spec, data.assets, data.master_spec_same_as_worker, data.master),
        expected_version=expected_version_of(request.headers.get("if-match")),
        metadata=actor(request),
    )
    view = await use_cases.update_template(command, streams=adapters.streams, names=adapters.names)
    return _respond(wire_of(written(view)), view.template.version, 200)


@patch(
    f"{DISTRIBUTED}/{{template_id:uuid}}",
    tags=["Distributed templates"],
    guards=[visible_template],
    responses=IF_MATCH_FAILED,
)
async def patch_template(
    request: Caller,
    template_id: FromPath[UUID],
    data: JSONBody[dict[str, Any]],
    adapters: NamedDependency[Adapters],
) -> Response[DistributedTemplate]:
    """Merge the sent fields into the template, then clear `fieldsToClear`
    (services/template_patch.py)."""
    wire, version = await patch_from(
        request, template_id, data, request.headers.get("if-match"), adapters
    )
    return _respond(wire, version, 200)


@delete(
    f"{DISTRIBUTED}/{{template_id:uuid}}",
    tags=["Distributed templates"],
    guards=[visible_template],
    responses=IF_MATCH_FAILED,
)
async def delete_template(
    request: Caller,
    template_id: FromPath[UUID],
    adapters: NamedDependency[Adapters],
) -> None:
    command = DeleteTemplate(
        template_id=template_id,
        expected_version=expected_version_of(request.headers.get("if-match")),
        metadata=actor(request),
    )
    await use_cases.delete_template(command, streams=adapters.streams)


TEMPLATE_ROUTES: Final = (
    create_template,
    list_distributed,
    list_any,
    count_templates,
    name_availability,
    get_template,
    replace_template,
    patch_template,
    delete_template,
)
