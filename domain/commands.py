"""Commands: what a caller asks the service to do (imperative names)."""

from uuid import UUID

import msgspec

from domain.events import EventMetadata
from domain.specs import ComputeSpec, EnvironmentSpec, WorkloadSupportedTypes
from domain.values import AssetKind, Grant, NodePoolResources, ScopeRef


class CreateApplication(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    name: str
    grants: tuple[Grant, ...]
    metadata: EventMetadata


class DeleteApplication(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    metadata: EventMetadata


class RotateApplicationSecret(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    metadata: EventMetadata


class CreateCluster(msgspec.Struct, frozen=True, kw_only=True):
    cluster_id: UUID
    name: str
    domain: str | None = None
    version: str | None = None
    metadata: EventMetadata


class RenameCluster(msgspec.Struct, frozen=True, kw_only=True):
    cluster_id: UUID
    name: str
    metadata: EventMetadata


class CreateDepartment(msgspec.Struct, frozen=True, kw_only=True):
    cluster_id: UUID
    name: str
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()
    metadata: EventMetadata


class CreateProject(msgspec.Struct, frozen=True, kw_only=True):
    cluster_id: UUID
    department_id: str | None
    name: str
    description: str = ""
    requested_namespace: str | None = None
    resources: tuple[NodePoolResources, ...] = ()
    metadata: EventMetadata


class UpdateOrgUnit(msgspec.Struct, frozen=True, kw_only=True):
    """Replace a department's or a project's updatable fields."""

    scope: ScopeRef
    description: str
    resources: tuple[NodePoolResources, ...]
    metadata: EventMetadata


class DeleteOrgUnit(msgspec.Struct, frozen=True, kw_only=True):
    scope: ScopeRef
    metadata: EventMetadata


class CreateAsset(msgspec.Struct, frozen=True, kw_only=True):
    """Create an environment or compute resource (the spec's type says which) in `scope`.
    `cluster_id` is the cluster the request named, checked against the scope's own."""

    asset_id: UUID
    scope: ScopeRef
    cluster_id: UUID | None = None
    name: str
    description: str | None = None
    workload_supported_types: WorkloadSupportedTypes | None = None
    auto_delete: bool = False
    private: bool = False
    spec: EnvironmentSpec | ComputeSpec
    metadata: EventMetadata


class UpdateAsset(msgspec.Struct, frozen=True, kw_only=True):
    asset_id: UUID
    name: str
    description: str | None = None
    spec: EnvironmentSpec | ComputeSpec
    metadata: EventMetadata


class DeleteAsset(msgspec.Struct, frozen=True, kw_only=True):
    asset_id: UUID
    kind: AssetKind
    metadata: EventMetadata
