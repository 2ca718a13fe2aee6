"""Commands: what a caller asks the service to do (imperative names)."""

from collections.abc import Mapping
from typing import Any, Literal
from uuid import UUID, uuid4

import msgspec

from domain.cluster_specs import (
    NodePoolChanges,
    NodePoolSpec,
    StorageClassRules,
    StorageClassSpec,
)
from domain.events import EventMetadata
from domain.policies import PolicyBody
from domain.specs import (
    AnyDataSourceSpec,
    ComputeSpec,
    CredentialKind,
    CredentialSpec,
    EnvironmentSpec,
    SharedScope,
    WorkloadSupportedTypes,
)
from domain.submissions import Overrides
from domain.template_documents import NamedScope
from domain.templates import TemplateBody
from domain.values import AssetKind, Grant, NodePoolResources, ScopeRef


class CreateApplication(msgspec.Struct, frozen=True, kw_only=True):
    """`keyed` as CreateAsset's; a keyed application's secret is also kept, sealed, to answer
    the retries (services/applications.py)."""

    application_id: UUID
    name: str
    grants: tuple[Grant, ...]
    metadata: EventMetadata
    keyed: bool = False


class DeleteApplication(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    metadata: EventMetadata


class SetApplicationEnabled(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    enabled: bool
    metadata: EventMetadata


class RotateApplicationSecret(msgspec.Struct, frozen=True, kw_only=True):
    application_id: UUID
    metadata: EventMetadata


class CreateCluster(msgspec.Struct, frozen=True, kw_only=True):
    """`keyed` as CreateAsset's."""

    cluster_id: UUID
    keyed: bool = False
    name: str
    domain: str | None = None
    version: str | None = None
    metadata: EventMetadata


class RenameCluster(msgspec.Struct, frozen=True, kw_only=True):
    cluster_id: UUID
    name: str
    metadata: EventMetadata


class CreateDepartment(msgspec.Struct, frozen=True, kw_only=True):
    """`keyed` as CreateAsset's, for `creation_id`: the department's own id is a number, issued
    once for a keyed creation (services/ports/name_lookups.py `IdSequence`)."""

    cluster_id: UUID
    creation_id: UUID = msgspec.field(default_factory=uuid4)
    keyed: bool = False
    name: str
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()
    metadata: EventMetadata


class CreateProject(msgspec.Struct, frozen=True, kw_only=True):
    """`creation_id` and `keyed` as CreateDepartment's."""

    cluster_id: UUID
    creation_id: UUID = msgspec.field(default_factory=uuid4)
    keyed: bool = False
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
    """Create an environment or compute resource in `scope`; `cluster_id` is the one the request
    named. `keyed`: the id came from the caller's Idempotency-Key, so a retry reaches what its
    first attempt made (services/idempotency.py); else it is new, and no stream holds it yet."""

    asset_id: UUID
    keyed: bool = False
    scope: ScopeRef
    cluster_id: UUID | None = None
    name: str
    description: str | None = None
    workload_supported_types: WorkloadSupportedTypes | None = None
    auto_delete: bool = False
    private: bool = False
    spec: EnvironmentSpec | ComputeSpec | AnyDataSourceSpec
    metadata: EventMetadata


class UpdateAsset(msgspec.Struct, frozen=True, kw_only=True):
    """Replace an asset's name, description and spec. `expected_version`: the version the
    update was made on (If-Match, a form's); the asset at another is not changed."""

    asset_id: UUID
    name: str
    description: str | None = None
    spec: EnvironmentSpec | ComputeSpec | AnyDataSourceSpec
    expected_version: int | None = None
    metadata: EventMetadata


class DeleteAsset(msgspec.Struct, frozen=True, kw_only=True):
    asset_id: UUID
    kind: AssetKind
    metadata: EventMetadata


class SecretValues:
    """A request's secret values, by wire name. Its repr never shows them, so a command in a
    log line or a traceback reveals nothing."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, str | None]) -> None:
        self._values = dict(values)

    def __repr__(self) -> str:
        return f"SecretValues({len(self._values)} hidden)"

    def reveal(self) -> dict[str, str | None]:
        return dict(self._values)


class CreateCredential(msgspec.Struct, frozen=True, kw_only=True):
    """Create a credential of `kind` in `scope`; `keyed` as CreateAsset's."""

    asset_id: UUID
    keyed: bool = False
    kind: CredentialKind
    scope: ScopeRef
    cluster_id: UUID | None = None
    name: str
    description: str | None = None
    private: bool = False
    public: CredentialSpec
    values: SecretValues
    metadata: EventMetadata


class UpdateCredential(msgspec.Struct, frozen=True, kw_only=True):
    asset_id: UUID
    kind: CredentialKind
    name: str | None = None  # none: the name stays
    description: str | None = None
    metadata: EventMetadata


class DeleteCredential(msgspec.Struct, frozen=True, kw_only=True):
    asset_id: UUID
    kind: CredentialKind
    metadata: EventMetadata


class CreateRegistry(msgspec.Struct, frozen=True, kw_only=True):
    """Create a registry in `scope`; `password` holds its one value (never kept but sealed).
    `keyed` as CreateAsset's."""

    asset_id: UUID
    keyed: bool = False
    scope: ScopeRef
    cluster_id: UUID | None = None
    name: str
    description: str | None = None
    workload_supported_types: WorkloadSupportedTypes | None = None
    private: bool = False
    url: str
    user: str
    password: SecretValues
    metadata: EventMetadata


class UpdateRegistry(msgspec.Struct, frozen=True, kw_only=True):
    """Replace a registry's name and description, and (each when given) its URL, user and
    password; what is not given stays."""

    asset_id: UUID
    name: str
    description: str | None = None
    url: str | None = None
    user: str | None = None
    password: SecretValues
    metadata: EventMetadata


class DeleteRegistry(msgspec.Struct, frozen=True, kw_only=True):
    asset_id: UUID
    metadata: EventMetadata


SubjectKind = Literal["application", "user"]


class CreateAccessRule(msgspec.Struct, frozen=True, kw_only=True):
    """Give a subject a role: an application (by its id) or an identity-provider user (by the
    subject its tokens carry). `creation_id` and `keyed` as CreateDepartment's: a rule's id is
    a number too."""

    subject_kind: SubjectKind
    subject_id: str
    grant: Grant
    creation_id: UUID = msgspec.field(default_factory=uuid4)
    keyed: bool = False
    metadata: EventMetadata


class DeleteAccessRule(msgspec.Struct, frozen=True, kw_only=True):
    rule_id: int
    metadata: EventMetadata


class CreateTemplate(msgspec.Struct, frozen=True, kw_only=True):
    """`keyed` as CreateAsset's."""

    template_id: UUID
    keyed: bool = False
    scope: ScopeRef
    name: str
    description: str | None = None
    body: TemplateBody
    metadata: EventMetadata


class UpdateTemplate(msgspec.Struct, frozen=True, kw_only=True):
    """Replace the template's name, description and body. `expected_version` (from If-Match)
    makes the update conditional on nobody having changed it since."""

    template_id: UUID
    name: str
    description: str | None = None
    body: TemplateBody
    expected_version: int | None = None
    metadata: EventMetadata


class PatchTemplate(msgspec.Struct, frozen=True, kw_only=True):
    """Change the fields of the template a PATCH body sends (services/template_patch.py), as
    its client sent it."""

    template_id: UUID
    patch: dict[str, Any]
    expected_version: int | None = None
    metadata: EventMetadata


class DeleteTemplate(msgspec.Struct, frozen=True, kw_only=True):
    template_id: UUID
    expected_version: int | None = None
    metadata: EventMetadata


class RequestWorkload(msgspec.Struct, frozen=True, kw_only=True):
    """Submit a distributed workload, from a template (at `template_version`, else its current
    one) or from `overrides.spec` alone. `keyed` as CreateAsset's."""

    workload_id: UUID
    keyed: bool = False
    name: str
    use_given_name_as_prefix: bool = False
    cluster_id: UUID
    project_id: str
    template_id: UUID | None = None
    overrides: Overrides
    metadata: EventMetadata
    template_version: int | None = None


class SaveWorkloadAsTemplate(msgspec.Struct, frozen=True, kw_only=True):
    """Make a template that runs as the workload was submitted, in `scope` (None: the
    workload's project). `keyed` as CreateAsset's."""

    workload_id: UUID
    template_id: UUID
    keyed: bool = False
    name: str
    description: str | None = None
    scope: NamedScope | None = None
    metadata: EventMetadata


class ChangeWorkload(msgspec.Struct, frozen=True, kw_only=True):
    """Suspend, resume or delete a workload."""

    workload_id: UUID
    action: Literal["suspend", "resume", "delete"]
    metadata: EventMetadata


class CreateNodePool(msgspec.Struct, frozen=True, kw_only=True):
    """`keyed` as CreateAsset's."""

    nodepool_id: UUID
    keyed: bool = False
    cluster_id: UUID
    name: str
    spec: NodePoolSpec
    metadata: EventMetadata


class UpdateNodePool(msgspec.Struct, frozen=True, kw_only=True):
    """A PUT (`whole`) or a PATCH of the pool's spec (domain/node_pools.py `changed`)."""

    nodepool_id: UUID
    changes: NodePoolChanges
    whole: bool
    metadata: EventMetadata


class DeleteNodePool(msgspec.Struct, frozen=True, kw_only=True):
    nodepool_id: UUID
    metadata: EventMetadata


class RegisterStorageClass(msgspec.Struct, frozen=True, kw_only=True):
    """A cluster has the class `name` (anew, or as it now reports it)."""

    cluster_id: UUID
    name: str
    spec: StorageClassSpec
    metadata: EventMetadata


class RemoveStorageClass(msgspec.Struct, frozen=True, kw_only=True):
    cluster_id: UUID
    name: str
    metadata: EventMetadata


class CreateStorageClassConfiguration(msgspec.Struct, frozen=True, kw_only=True):
    """`keyed` as CreateAsset's."""

    configuration_id: UUID
    keyed: bool = False
    cluster_id: UUID
    name: str
    rules: StorageClassRules
    metadata: EventMetadata


class UpdateStorageClassConfiguration(msgspec.Struct, frozen=True, kw_only=True):
    """A PUT (`whole`: `rules` replace the configuration's) or a PATCH (merged, and the
    attributes of `remove_attributes` dropped: domain/storage_classes.py `patched`)."""

    configuration_id: UUID
    rules: StorageClassRules
    whole: bool
    remove_attributes: tuple[str, ...] = ()
    metadata: EventMetadata


class DeleteStorageClassConfiguration(msgspec.Struct, frozen=True, kw_only=True):
    configuration_id: UUID
    metadata: EventMetadata


class CreateDataVolume(msgspec.Struct, frozen=True, kw_only=True):
    """Create a data volume of the PVC `origin_pvc_name` in project `project_id`'s namespace;
    `keyed` as CreateAsset's."""

    datavolume_id: UUID
    keyed: bool = False
    project_id: str
    name: str
    description: str | None = None
    origin_pvc_name: str
    use_original_volume: bool = True
    should_delete_original_volume: bool = False
    metadata: EventMetadata


class DescribeDataVolume(msgspec.Struct, frozen=True, kw_only=True):
    datavolume_id: UUID
    description: str | None = None
    metadata: EventMetadata


class ShareDataVolume(msgspec.Struct, frozen=True, kw_only=True):
    """Share a data volume with the scopes of `add`, and no longer with those of `remove`."""

    datavolume_id: UUID
    add: tuple[SharedScope, ...] = ()
    remove: tuple[SharedScope, ...] = ()
    metadata: EventMetadata


class DeleteDataVolume(msgspec.Struct, frozen=True, kw_only=True):
    datavolume_id: UUID
    metadata: EventMetadata


class ApplyPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """A scope's distributed policy, whole (PUT); with `validate_only`, checked and not kept."""

    scope: ScopeRef
    name: str
    body: PolicyBody
    metadata: EventMetadata
    validate_only: bool = False


class ChangePolicy(msgspec.Struct, frozen=True, kw_only=True):
    """A change of a scope's distributed policy (PATCH): `body` laid over what it sets, then the
    fields under each `reset` path cleared."""

    scope: ScopeRef
    name: str | None = None  # None: it keeps its name
    body: PolicyBody
    reset: tuple[str, ...] = ()
    metadata: EventMetadata
    validate_only: bool = False


class DeletePolicy(msgspec.Struct, frozen=True, kw_only=True):
    scope: ScopeRef
    metadata: EventMetadata
