"""Request and response bodies of the template endpoints, in Run:ai's shapes."""

from datetime import datetime

import msgspec

from domain.combined import Runnable
from domain.template_specs import (
    DistributedTemplateSpec,
    MasterSection,
    MasterTemplateSpec,
    TemplateAssets,
)
from infra.http.openapi_document import DisplayName, ScopeOfRequest


class RequestBody(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"
):
    """Request bodies: camelCase, unknown keys refused."""


class CreationMeta(RequestBody, frozen=True, kw_only=True):
    name: DisplayName
    description: str | None = None
    scope_type: ScopeOfRequest
    scope_id: str | None = None


class UpdateMeta(RequestBody, frozen=True, kw_only=True):
    name: DisplayName
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


class PaginationInfo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """On the last page there is no next offset: the member is left out, not null (Run:ai's
    document types it as a number)."""

    limit: int
    offset: int
    next_offset: int | None = None


class TemplateList(msgspec.Struct, frozen=True):
    entries: list[DistributedTemplate]
    pagination: PaginationInfo


class EncodedTemplateList(msgspec.Struct, frozen=True):
    """A `TemplateList` as the API sends it, each entry encoded already: the same JSON."""

    entries: list[msgspec.Raw]
    pagination: PaginationInfo
