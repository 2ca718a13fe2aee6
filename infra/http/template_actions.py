"""What a caller's template request does, shared by the API's handlers (infra/http/templates.py)
and the console: Run:ai's bodies to use cases, and templates read back as Run:ai's wire."""

from typing import Any
from uuid import UUID

from domain.commands import CreateTemplate, PatchTemplate
from domain.template_specs import (
    DistributedTemplateSpec,
    MasterSection,
    TemplateAssets,
)
from domain.templates import TemplateBody, TemplateNotFoundError
from domain.values import ScopeKind, ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, creation_id, seen_scopes
from infra.http.consistency import prefetched
from infra.http.template_compliance import (
    Comply,
    encoded_issues_of,
    encoded_with_issues,
    issues_of,
    with_issues,
)
from infra.http.template_schemas import (
    CreationMeta,
    CreationRequest,
    DistributedTemplate,
    EncodedTemplateList,
    PaginationInfo,
    TemplateList,
)
from infra.http.template_views import ListQuery, encoded, page_of, wire_of, written
from projections.queries import Reads
from projections.queries import template_reads as queries
from services import templates as use_cases
from services.errors import InvalidRequestError


def scope_of(meta: CreationMeta) -> ScopeRef:
    if meta.scope_type == "system":
        raise InvalidRequestError("/meta/scopeType", "the system scope is for built-in templates")
    if meta.scope_type == "tenant":
        return ScopeRef("tenant")
    if not meta.scope_id:
        raise InvalidRequestError("/meta/scopeId", f"a {meta.scope_type} template names its scope")
    return ScopeRef(meta.scope_type, meta.scope_id)


def body_of(
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


def expected_version_of(if_match: str | None) -> int | None:
    if if_match is None:
        return None
    try:
        return int(if_match.strip().strip('"').removeprefix("W/").strip('"'))
    except ValueError:
        raise InvalidRequestError("If-Match", "an ETag this service gave (a version)") from None


async def create_from(
    request: Caller, data: CreationRequest, adapters: Adapters
) -> tuple[DistributedTemplate, int]:
    """Create a template from Run:ai's creation body (the API's and the console's form alike):
    the template as written, and its version."""
    scope = scope_of(data.meta)
    body = body_of(data.spec, data.assets, data.master_spec_same_as_worker, data.master)
    template_id, keyed = creation_id(request, "template")
    command = CreateTemplate(
        template_id=template_id,
        keyed=keyed,
        scope=scope,
        name=data.meta.name,
        description=data.meta.description,
        body=body,
        metadata=actor(request),
    )
    async with adapters.streams.session() as session:  # one connection for the reads and the write
        view = await use_cases.create_template(command, streams=session, names=adapters.names)
    return wire_of(written(view)), view.template.version


async def list_page(
    request: Caller, reads: Reads, query: ListQuery, offset: int, limit: int
) -> TemplateList:
    """A page of templates as Run:ai shows them (the console's grid)."""
    rows, more = await page_of(request, reads, query, offset, limit)
    return TemplateList([wire_of(row) for row in rows], _pagination(offset, limit, more))


async def encoded_page(
    request: Caller,
    adapters: Adapters,
    query: ListQuery,
    offset: int,
    limit: int,
    comply: Comply | None = None,
) -> EncodedTemplateList:
    """`list_page`, encoded (the API's list), each template with its issues in the project
    `comply` names."""
    rows, more = await page_of(request, adapters.reads, query, offset, limit)
    entries = [encoded(row) for row in rows]
    if comply is not None:
        issues = await encoded_issues_of(request, adapters, rows, comply)
        entries = [encoded_with_issues(e, i) for e, i in zip(entries, issues, strict=True)]
    return EncodedTemplateList(entries, _pagination(offset, limit, more))


def _pagination(offset: int, limit: int, more: bool) -> PaginationInfo:
    return PaginationInfo(limit=limit, offset=offset, next_offset=offset + limit if more else None)


async def check_name_free(
    request: Caller,
    adapters: Adapters,
    template_name: str,
    scope_type: ScopeKind,
    scope_id: str | None,
    *,
    fields: tuple[str, str],
) -> None:
    """The use case's answer (services/templates.check_name_available) for the scope as the
    request names it."""
    scope = ScopeRef(scope_type, "" if scope_type == "tenant" else scope_id or "")
    await use_cases.check_name_available(
        scope,
        template_name,
        actor(request),
        streams=adapters.streams,
        holder=adapters.name_holder,
        fields=fields,
    )


async def read_template(
    request: Caller, template_id: UUID, adapters: Adapters, comply: Comply | None = None
) -> tuple[DistributedTemplate, int]:
    """One template the caller may see, from the catalogue, and its version: the row the
    request's settling read with its standing when the route asked for it (the API's GET),
    else read now (the console's page)."""
    if (record := prefetched(request)) is not None:
        row = queries.found(record)
    else:
        row = await queries.one(adapters.reads, template_id)
    if row is None or not queries.visible(row, await seen_scopes(request)):
        raise TemplateNotFoundError(template_id)  # unknown or out of sight: one answer
    wire = wire_of(row)
    if comply is not None:
        (issues,) = await issues_of(request, adapters, [row], comply)
        wire = with_issues(wire, issues)
    return wire, row.template.version


async def template_now(
    request: Caller, template_id: UUID, adapters: Adapters
) -> tuple[DistributedTemplate, int]:
    """One template the caller may see as its stream has it now, and its version: what an edit
    is made on (the console's, whose form keeps what it does not show from it)."""
    view = await use_cases.visible_template(template_id, actor(request), streams=adapters.streams)
    return wire_of(written(view)), view.template.version


async def patch_from(
    request: Caller,
    template_id: UUID,
    data: dict[str, Any],
    if_match: str | None,
    adapters: Adapters,
) -> tuple[DistributedTemplate, int]:
    """Patch a template as Run:ai's PATCH does (the API's and the console's edit alike): the
    template as written, and its version. One the caller may not see is not found."""
    command = PatchTemplate(
        template_id=template_id,
        patch=data,
        expected_version=expected_version_of(if_match),
        metadata=actor(request),
    )
    view = await use_cases.patch_template(command, streams=adapters.streams, names=adapters.names)
    return wire_of(written(view)), view.template.version
