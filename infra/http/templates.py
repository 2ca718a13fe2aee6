"""Distributed templates in Run:ai's shapes: `/api/v1/workload-templates/distributed` and the
cross-type `/api/v1/workload-templates` (list, get, count, name availability).

Every template response carries an `ETag` (its stream version); PUT, PATCH and DELETE honour
`If-Match` (412 when the template moved on), and POST honours `Idempotency-Key` (a retry returns
the first result and writes nothing). Reads come from the template catalogue, with the combined
specs rebuilt from the asset versions each template records.
"""

from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal
from uuid import UUID, uuid4, uuid5

import msgspec
from litestar import Response, delete, get, patch, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter

from domain import access as access_rules
from domain import templates
from domain.combined import Combined, Runnable
from domain.commands import CreateTemplate, DeleteTemplate, UpdateTemplate
from domain.template_specs import (
    DistributedTemplateSpec,
    MasterSection,
    MasterTemplateSpec,
    TemplateAssets,
)
from domain.templates import Template, TemplateBody, TemplateNotFoundError
from domain.values import ScopeRef
from infra.bootstrap import Resources
from infra.http.callers import Caller, actor
from infra.http.problems import pointer_in
from infra.named_streams import name_holder
from projections import template_catalogue, template_queries
from projections.template_catalogue import TemplateRow
from services import access
from services import templates as use_cases
from services.errors import IdempotencyKeyReusedError, InvalidRequestError, NameTakenError
from services.ports import NamedStreams, OrgTree

BASE: Final = "/api/v1/workload-templates"
DISTRIBUTED: Final = f"{BASE}/distributed"
_IDEMPOTENCY: Final = UUID("0c3e5a7b-9d1f-4e2a-8b6c-4d5e6f7a8b9c")
ScopeType = Literal["system", "tenant", "cluster", "department", "project"]


class RequestBody(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"
):
    """Request bodies: camelCase, unknown keys refused."""


class CreationMeta(RequestBody, frozen=True, kw_only=True):
    name: str
    description: str | None = None
    scope_type: ScopeType
    scope_id: str | None = None


class UpdateMeta(RequestBody, frozen=True, kw_only=True):
    name: str
    description: str | None = None


class CreationRequest(RequestBody, frozen=True, kw_only=True):
    meta: CreationMeta
    spec: DistributedTemplateSpec | None = None
    assets: TemplateAssets | None = None
    master_spec_same_as_worker: bool | None = None
    master: MasterSection | None = None


class UpdateRequest(RequestBody, frozen=True, kw_only=True):
    meta: UpdateMeta
    spec: DistributedTemplateSpec | None = None
    assets: TemplateAssets | None = None
    master_spec_same_as_worker: bool | None = None
    master: MasterSection | None = None


class ResponseMeta(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    id: str
    name: str
    description: str | None
    workload_type: str
    scope_type: str
    scope_id: str
    cluster_id: str | None
    department_id: str | None
    project_id: int | None
    created_by: str
    created_at: datetime
    updated_by: str | None
    updated_at: datetime | None


class DistributedTemplate(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    meta: ResponseMeta
    spec: DistributedTemplateSpec
    assets: TemplateAssets | None = None
    master_spec_same_as_worker: bool = True
    master: MasterSection | None = None
    runnable: Runnable
    combined_spec: DistributedTemplateSpec
    combined_master_spec: MasterTemplateSpec | None = None


class PaginationInfo(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    limit: int
    offset: int
    next_offset: int | None = None


class TemplateList(msgspec.Struct, frozen=True):
    entries: list[DistributedTemplate]
    pagination: PaginationInfo


class Count(msgspec.Struct, frozen=True):
    count: int


def _scope(meta: CreationMeta) -> ScopeRef:
    if meta.scope_type == "system":
        raise InvalidRequestError("/meta/scopeType", "the system scope is for built-in templates")
    if meta.scope_type == "tenant":
        return ScopeRef("tenant")
    if not meta.scope_id:
        raise InvalidRequestError("/meta/scopeId", f"a {meta.scope_type} template names its scope")
    return ScopeRef(meta.scope_type, meta.scope_id)


def _body(
    spec: DistributedTemplateSpec | None,
    assets: TemplateAssets | None,
    same: bool | None,
    master: MasterSection | None,
) -> TemplateBody:
    """Omitted, masterSpecSameAsWorker is true unless a master section is given."""
    return TemplateBody(
        spec=spec or DistributedTemplateSpec(),
        assets=assets,
        master_spec_same_as_worker=same if same is not None else master is None,
        master=master,
    )


def _expected(if_match: str | None) -> int | None:
    if if_match is None:
        return None
    try:
        return int(if_match.strip().strip('"').removeprefix("W/").strip('"'))
    except ValueError:
        raise InvalidRequestError("If-Match", "an ETag this service gave (a version)") from None


def _respond(wire: DistributedTemplate, version: int, status: int) -> Response[DistributedTemplate]:
    return Response(wire, status_code=status, headers={"ETag": f'"{version}"'})


@post(DISTRIBUTED, status_code=202, tags=["Distributed templates"])
async def create_template(
    request: Caller, data: JSONBody[CreationRequest], streams: NamedDependency[NamedStreams]
) -> Response[DistributedTemplate]:
    scope = _scope(data.meta)
    body = _body(data.spec, data.assets, data.master_spec_same_as_worker, data.master)
    key = request.headers.get("idempotency-key")
    template_id = uuid5(_IDEMPOTENCY, f"{request.user.subject}:{key}") if key else uuid4()
    if key:
        existing = templates.fold((await streams.load(template_id)).events)
        if existing is not None:
            if (existing.meta.name, existing.body) != (data.meta.name, templates.normalized(body)):
                raise IdempotencyKeyReusedError(template_id)
            return _respond(await _wire(request, existing, None, streams), existing.version, 202)
    command = CreateTemplate(
        template_id=template_id,
        new_id=key is None,
        scope=scope,
        name=data.meta.name,
        description=data.meta.description,
        body=body,
        metadata=actor(request),
    )
    view = await use_cases.create_template(command, streams=streams)
    wire = await _wire(request, view.template, None, streams, combined=view.combined)
    return _respond(wire, view.template.version, 202)


@get(DISTRIBUTED, tags=["Distributed templates"])
async def list_distributed(
    request: Caller,
    streams: NamedDependency[NamedStreams],
    tree: NamedDependency[OrgTree],
    resources: NamedDependency[Resources],
    offset: Annotated[int, QueryParameter(ge=0)] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    sort_by: Annotated[
        Literal[
            "name",
            "workloadType",
            "runnable",
            "scopeType",
            "clusterId",
            "projectId",
            "departmentId",
            "createdAt",
            "updatedAt",
            "createdBy",
            "updatedBy",
        ]
        | None,
        QueryParameter(name="sortBy"),
    ] = None,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    filter_by: Annotated[str | None, QueryParameter(name="filterBy")] = None,
    search: Annotated[str | None, QueryParameter()] = None,
) -> TemplateList:
    rows = await _chosen(request, streams, tree, resources, filter_by, search, sort_by, sort_order)
    page = rows[offset : offset + limit]
    entries = [await _wire(request, row.template, row, streams) for row in page]
    next_offset = offset + limit if offset + limit < len(rows) else None
    return TemplateList(
        entries, PaginationInfo(limit=limit, offset=offset, next_offset=next_offset)
    )


@get(BASE, tags=["Templates"])
async def list_any(
    request: Caller,
    streams: NamedDependency[NamedStreams],
    tree: NamedDependency[OrgTree],
    resources: NamedDependency[Resources],
    offset: Annotated[int, QueryParameter(ge=0)] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    sort_order: Annotated[Literal["asc", "desc"], QueryParameter(name="sortOrder")] = "asc",
    filter_by: Annotated[str | None, QueryParameter(name="filterBy")] = None,
    search: Annotated[str | None, QueryParameter()] = None,
) -> TemplateList:
    """Every template type; this service holds distributed ones only."""
    rows = await _chosen(request, streams, tree, resources, filter_by, search, None, sort_order)
    page = rows[offset : offset + limit]
    entries = [await _wire(request, row.template, row, streams) for row in page]
    next_offset = offset + limit if offset + limit < len(rows) else None
    return TemplateList(
        entries, PaginationInfo(limit=limit, offset=offset, next_offset=next_offset)
    )


@get(f"{BASE}/count", tags=["Templates"])
async def count_templates(
    request: Caller,
    streams: NamedDependency[NamedStreams],
    tree: NamedDependency[OrgTree],
    resources: NamedDependency[Resources],
    filter_by: Annotated[str | None, QueryParameter(name="filterBy")] = None,
    search: Annotated[str | None, QueryParameter()] = None,
) -> Count:
    rows = await _chosen(request, streams, tree, resources, filter_by, search, None, "asc")
    return Count(len(rows))


@get(f"{BASE}/name-availability", status_code=204, tags=["Templates"])
async def name_availability(
    resources: NamedDependency[Resources],
    template_name: Annotated[str, QueryParameter(name="templateName", min_length=1)],
    scope_type: Annotated[
        Literal["tenant", "cluster", "department", "project"], QueryParameter(name="scopeType")
    ],
    scope_id: Annotated[str | None, QueryParameter(name="scopeId")] = None,
) -> None:
    """204 when the name is free in the scope, 409 when a template there holds it."""
    scope_key = "" if scope_type == "tenant" else scope_id or ""
    namespace = f"template@{scope_type}:{scope_key}"
    if await name_holder(resources.pool, namespace, template_name) is not None:
        raise NameTakenError(template_name, namespace=namespace, field="/templateName")


async def _get(
    request: Caller,
    template_id: UUID,
    streams: NamedStreams,
    tree: OrgTree,
    resources: Resources,
) -> Response[DistributedTemplate]:
    async with resources.pool.acquire() as conn:
        row = await template_catalogue.get_template(conn, template_id)
    if row is None or row.template.meta.scope_ref not in await _seen(request, streams, tree):
        raise TemplateNotFoundError(template_id)  # unknown or out of sight: one answer
    return _respond(await _wire(request, row.template, row, streams), row.template.version, 200)


@get(f"{DISTRIBUTED}/{{template_id:uuid}}", tags=["Distributed templates"])
async def get_distributed(
    request: Caller,
    template_id: FromPath[UUID],
    streams: NamedDependency[NamedStreams],
    tree: NamedDependency[OrgTree],
    resources: NamedDependency[Resources],
) -> Response[DistributedTemplate]:
    return await _get(request, template_id, streams, tree, resources)


@get(f"{BASE}/{{template_id:uuid}}", tags=["Templates"])
async def get_any(
    request: Caller,
    template_id: FromPath[UUID],
    streams: NamedDependency[NamedStreams],
    tree: NamedDependency[OrgTree],
    resources: NamedDependency[Resources],
) -> Response[DistributedTemplate]:
    return await _get(request, template_id, streams, tree, resources)


@put(f"{DISTRIBUTED}/{{template_id:uuid}}", tags=["Distributed templates"])
async def replace_template(
    request: Caller,
    template_id: FromPath[UUID],
    data: JSONBody[UpdateRequest],
    streams: NamedDependency[NamedStreams],
    resources: NamedDependency[Resources],
) -> Response[DistributedTemplate]:
    body = _body(data.spec, data.assets, data.master_spec_same_as_worker, data.master)
    return await _update(
        request, template_id, data.meta.name, data.meta.description, body, streams, resources
    )


@patch(f"{DISTRIBUTED}/{{template_id:uuid}}", tags=["Distributed templates"])
async def patch_template(
    request: Caller,
    template_id: FromPath[UUID],
    data: JSONBody[dict[str, Any]],
    streams: NamedDependency[NamedStreams],
    resources: NamedDependency[Resources],
) -> Response[DistributedTemplate]:
    """Merge the sent fields into the template (objects field by field, lists and values
    replaced), then clear `fieldsToClear` (dotted paths such as `spec.image`)."""
    current = templates.live(templates.fold((await streams.load(template_id)).events), template_id)
    unknown = set(data) - {
        "meta",
        "spec",
        "assets",
        "masterSpecSameAsWorker",
        "master",
        "fieldsToClear",
    }
    if unknown:
        raise InvalidRequestError(f"/{sorted(unknown)[0]}", "not a field of a template patch")
    meta = data.get("meta") or {}
    if not isinstance(meta, dict) or set(meta) - {"name", "description"}:
        raise InvalidRequestError("/meta", "only name and description can be patched")
    merged: dict[str, Any] = msgspec.to_builtins(
        {
            "spec": current.body.spec,
            "assets": current.body.assets,
            "masterSpecSameAsWorker": current.body.master_spec_same_as_worker,
            "master": current.body.master,
        }
    )
    _merge(merged, {k: v for k, v in data.items() if k not in ("meta", "fieldsToClear")})
    description = meta.get("description", current.meta.description)
    for i, path in enumerate(data.get("fieldsToClear") or ()):
        if path == "meta.description":
            description = None
            continue
        _clear(merged, path, f"/fieldsToClear/{i}")
    try:
        body = msgspec.convert(merged, TemplateBody)
    except msgspec.ValidationError as exc:
        raise InvalidRequestError(pointer_in(str(exc)), str(exc)) from None
    name = meta.get("name") or current.meta.name
    return await _update(request, template_id, name, description, body, streams, resources)


@delete(f"{DISTRIBUTED}/{{template_id:uuid}}", tags=["Distributed templates"])
async def delete_template(
    request: Caller, template_id: FromPath[UUID], streams: NamedDependency[NamedStreams]
) -> None:
    command = DeleteTemplate(
        template_id=template_id,
        expected_version=_expected(request.headers.get("if-match")),
        metadata=actor(request),
    )
    await use_cases.delete_template(command, streams=streams)


TEMPLATE_ROUTES: Final = (
    create_template,
    list_distributed,
    list_any,
    count_templates,
    name_availability,
    get_distributed,
    get_any,
    replace_template,
    patch_template,
    delete_template,
)


async def _update(
    request: Caller,
    template_id: UUID,
    name: str,
    description: str | None,
    body: TemplateBody,
    streams: NamedStreams,
    resources: Resources,
) -> Response[DistributedTemplate]:
    command = UpdateTemplate(
        template_id=template_id,
        name=name,
        description=description,
        body=body,
        expected_version=_expected(request.headers.get("if-match")),
        metadata=actor(request),
    )
    updated = await use_cases.update_template(command, streams=streams)
    async with resources.pool.acquire() as conn:
        row = await template_catalogue.get_template(conn, template_id)
    return _respond(await _wire(request, updated, row, streams), updated.version, 200)


def _merge(base: dict[str, Any], top: dict[str, Any]) -> None:
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


_CLEARABLE: Final = ("spec", "assets", "master", "masterSpecSameAsWorker")


def _clear(body: dict[str, Any], path: str, pointer: str) -> None:
    parts = path.split(".")
    if not path or parts[0] not in _CLEARABLE or any(not p for p in parts):
        raise InvalidRequestError(pointer, f"{path!r} names no template field")
    node: Any = body
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return  # already clear
    if isinstance(node, dict):
        node.pop(parts[-1], None)


async def _seen(request: Caller, streams: NamedStreams, tree: OrgTree) -> set[ScopeRef]:
    grants = await access.grants_of(actor(request), streams=streams)
    return access_rules.visible_scopes(grants, await tree.lineages())


async def _chosen(
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
    seen = await _seen(request, streams, tree)
    async with resources.pool.acquire() as conn:
        rows = [
            r
            for r in await template_catalogue.list_templates(conn)
            if r.template.meta.scope_ref in seen
        ]
    fields = {}
    for row in rows:
        summary = _summary(row)
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


def _summary(row: TemplateRow) -> dict[str, Any]:
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


async def _wire(
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
