"""Request and response bodies of the asset endpoints, in Run:ai's shapes, the list filter
they share, and how a catalogue row becomes one."""

from datetime import datetime
from typing import Annotated, Final, Literal
from uuid import UUID

import msgspec
from litestar.params import FromQuery, QueryParameter

from domain.specs import ComputeSpec, DistFramework, EnvironmentSpec, WorkloadSupportedTypes
from infra.http.openapi_document import DisplayName, ScopeOfRequest
from projections.asset_catalogue import AssetFilter, AssetRow
from services.errors import InvalidRequestError

TENANT_ID: Final = 1


class RequestBody(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"
):
    """Request bodies: camelCase, unknown keys refused (a typo must not pass silently)."""


class AssetCreationMeta(RequestBody, frozen=True, kw_only=True):
    name: DisplayName
    description: str | None = None
    scope: ScopeOfRequest
    cluster_id: UUID | None = None
    department_id: str | None = None
    project_id: int | None = None
    auto_delete: bool | None = None
    workload_supported_types: WorkloadSupportedTypes | None = None
    private: bool | None = None


class AssetUpdateMeta(RequestBody, frozen=True, kw_only=True):
    name: DisplayName
    description: str | None = None


class EnvironmentCreationRequest(RequestBody, frozen=True, kw_only=True):
    meta: AssetCreationMeta
    spec: EnvironmentSpec


class EnvironmentUpdateRequest(RequestBody, frozen=True, kw_only=True):
    meta: AssetUpdateMeta
    spec: EnvironmentSpec


class ComputeCreationRequest(RequestBody, frozen=True, kw_only=True):
    meta: AssetCreationMeta
    spec: ComputeSpec | None = None


class ComputeUpdateRequest(RequestBody, frozen=True, kw_only=True):
    meta: AssetUpdateMeta
    spec: ComputeSpec | None = None


class AssetMetaResponse(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    name: str
    description: str | None
    scope: str
    cluster_id: str | None
    department_id: str | None
    project_id: int | None
    auto_delete: bool
    workload_supported_types: WorkloadSupportedTypes | None
    id: str
    kind: str
    tenant_id: int
    created_by: str
    created_at: datetime
    updated_by: str
    updated_at: datetime
    update_count: int


class AssetRef(msgspec.Struct, frozen=True):
    id: str
    name: str


class AssetUsageInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Who uses the asset: the templates that link or load it (workloads come with the
    submitter)."""

    workspaces: list[object] = msgspec.field(default_factory=list)
    trainings: list[object] = msgspec.field(default_factory=list)
    distributed: list[object] = msgspec.field(default_factory=list)
    inferences: list[object] = msgspec.field(default_factory=list)
    templates: list[AssetRef] = msgspec.field(default_factory=list)


Usage = dict[UUID, list[tuple[UUID, str]]] | None


def used_by(row: AssetRow, usage: Usage) -> AssetUsageInfo | None:
    if usage is None:
        return None
    refs = [AssetRef(str(template_id), name) for template_id, name in usage.get(row.asset_id, [])]
    return AssetUsageInfo(templates=refs)


class EnvironmentAsset(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"
):
    meta: AssetMetaResponse
    spec: EnvironmentSpec
    used_by: AssetUsageInfo | None = None


class ComputeAsset(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    meta: AssetMetaResponse
    spec: ComputeSpec
    used_by: AssetUsageInfo | None = None


class EnvironmentListResponse(msgspec.Struct, frozen=True):
    entries: list[EnvironmentAsset]


class ComputeListResponse(msgspec.Struct, frozen=True):
    entries: list[ComputeAsset]


def provide_asset_filter(
    name: FromQuery[str | None] = None,
    scope_kind: Annotated[
        Literal["system", "tenant", "cluster", "department", "project"] | None,
        QueryParameter(name="scope"),  # "scope" itself is Litestar's reserved ASGI scope
    ] = None,
    project_id: Annotated[int | None, QueryParameter(name="projectId")] = None,
    department_id: Annotated[str | None, QueryParameter(name="departmentId")] = None,
    cluster_id: Annotated[UUID | None, QueryParameter(name="clusterId")] = None,
    include_descendants: Annotated[bool, QueryParameter(name="includeDescendants")] = False,
    distributed_framework: Annotated[
        DistFramework | None, QueryParameter(name="distributedFramework")
    ] = None,
    is_distributed: Annotated[bool | None, QueryParameter(name="isDistributed")] = None,
    is_training: Annotated[bool | None, QueryParameter(name="isTraining")] = None,
    is_workspace: Annotated[bool | None, QueryParameter(name="isWorkspace")] = None,
    is_inference: Annotated[bool | None, QueryParameter(name="isInference")] = None,
    asset_ids: Annotated[str | None, QueryParameter(name="assetIds")] = None,
) -> AssetFilter:
    """Run:ai's asset list parameters, as one filter."""
    if scope_kind is not None and include_descendants:
        raise InvalidRequestError("/includeDescendants", "not together with scope")
    return AssetFilter(
        name=name,
        scope=None if scope_kind == "system" else scope_kind,
        project_id=project_id,
        department_id=department_id,
        cluster_id=cluster_id,
        include_descendants=include_descendants,
        distributed_framework=distributed_framework,
        is_distributed=is_distributed,
        is_training=is_training,
        is_workspace=is_workspace,
        is_inference=is_inference,
        asset_ids=_ids(asset_ids),
    )


def _ids(listed: str | None) -> frozenset[UUID] | None:
    """`assetIds`: a comma-separated list of asset ids."""
    if listed is None:
        return None
    try:
        return frozenset(UUID(part) for part in listed.split(",") if part.strip())
    except ValueError:
        raise InvalidRequestError("assetIds", "comma-separated asset ids (UUIDs)") from None


UsageInfo = Annotated[bool, QueryParameter(name="usageInfo")]


def asset_meta(row: AssetRow) -> AssetMetaResponse:
    meta = row.meta
    return AssetMetaResponse(
        name=meta.name,
        description=meta.description,
        scope=meta.scope,
        cluster_id=None if meta.cluster_id is None else str(meta.cluster_id),
        department_id=meta.department_id,
        project_id=meta.project_id,
        auto_delete=meta.auto_delete,
        workload_supported_types=meta.workload_supported_types,
        id=str(row.asset_id),
        kind=row.kind,
        tenant_id=TENANT_ID,
        created_by=row.created_by,
        created_at=row.created_at,
        updated_by=row.updated_by,
        updated_at=row.updated_at,
        update_count=row.version,
    )
