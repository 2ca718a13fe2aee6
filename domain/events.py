"""The event envelope types. Every stored event is a tagged `Event`; the tags are a storage schema.

`DomainEvent` is the catalogue of every stored type; `RecordedEvent` is the envelope, and
`EventMetadata` what every event carries about its cause.
"""

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

import msgspec

from domain.cluster_specs import NodePoolSpec, StorageClassRules, StorageClassSpec
from domain.policy_rules import PolicyRule
from domain.specs import (
    AnyDataSourceSpec,
    ComputeSpec,
    CredentialKind,
    CredentialSpec,
    DataVolumeSpec,
    EnvironmentSpec,
    RegistrySpec,
    SharedScope,
)
from domain.template_specs import (
    DistributedTemplateSpec,
    MasterSection,
    MasterTemplateSpec,
    TemplateAssets,
)
from domain.values import AccessRule, AssetMeta, Grant, NodePoolResources, TemplateMeta

ActorKind = Literal["application", "user", "system"]


class Event(msgspec.Struct, frozen=True, tag_field="type", rename="camel"):
    """A fact that happened. Payload only: position, version and time live in `RecordedEvent`.
    Subclasses set a tag `"<stream_type>.<fact>.v<N>"` and repeat `frozen=True, kw_only=True`;
    payloads are camelCase, so the relay publishes the stored JSON as it is."""


class EventMetadata(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """Who caused an event and in answer to what. Never holds a secret."""

    actor_subject: str
    actor_kind: ActorKind
    scope: str | None = None
    correlation_id: UUID | None = None
    causation_id: UUID | None = None
    request_id: str | None = None
    # A create sent under an Idempotency-Key: what it asked, digested (services/idempotency.py),
    # so a retry is told from another request by this alone, before anything is decided again.
    request_digest: str | None = None
    # The API request that caused it (none: no request did): its method, its path, and the
    # status its route answers a success with; for the audit log (decision 0031).
    http_method: str | None = None
    http_path: str | None = None
    http_status: int | None = None
    # The W3C trace context of the span that appended it, as text (infra/telemetry/tracing.py
    # writes it, the relay carries it on): filled by the store, never by a use case.
    traceparent: str | None = None
    tracestate: str | None = None


class RecordedEvent(msgspec.Struct, frozen=True, kw_only=True):
    """An event as the store holds it: where it sits in history, and the payload."""

    position: int
    event_id: UUID
    stream_type: str
    stream_id: UUID
    version: int
    recorded_at: datetime
    metadata: EventMetadata
    event: Event


class ApplicationCreated(Event, tag="application.created.v1", frozen=True, kw_only=True):
    """An application (service account) may now call the API. Its secret is not here."""

    application_id: UUID
    name: str
    client_id: str
    grants: tuple[Grant, ...]


class ApplicationDeleted(Event, tag="application.deleted.v1", frozen=True, kw_only=True):
    application_id: UUID


class ApplicationSecretRotated(
    Event, tag="application.secret_rotated.v1", frozen=True, kw_only=True
):
    """The application's secret was replaced; the old one logs in no more. No secret is here."""

    application_id: UUID


class ApplicationRoleGranted(Event, tag="application.role_granted.v1", frozen=True, kw_only=True):
    """An access rule: the application now holds `grant.role` on `grant`'s scope and below."""

    application_id: UUID
    rule: AccessRule


class ApplicationRoleRevoked(Event, tag="application.role_revoked.v1", frozen=True, kw_only=True):
    application_id: UUID
    rule_id: int


class ApplicationEnablementChanged(
    Event, tag="application.enablement_changed.v1", frozen=True, kw_only=True
):
    """Disabled: the application can neither log in nor act on its roles; enabled: again it can."""

    application_id: UUID
    enabled: bool


ApplicationEvent = (
    ApplicationCreated
    | ApplicationEnablementChanged
    | ApplicationDeleted
    | ApplicationSecretRotated
    | ApplicationRoleGranted
    | ApplicationRoleRevoked
)


class ClusterCreated(Event, tag="cluster.created.v1", frozen=True, kw_only=True):
    cluster_id: UUID
    name: str
    domain: str | None = None
    version: str | None = None


class ClusterRenamed(Event, tag="cluster.renamed.v1", frozen=True, kw_only=True):
    cluster_id: UUID
    name: str


class ClusterDeleted(Event, tag="cluster.deleted.v1", frozen=True, kw_only=True):
    cluster_id: UUID


class DepartmentCreated(Event, tag="department.created.v1", frozen=True, kw_only=True):
    department_id: str
    cluster_id: UUID
    name: str
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()


class DepartmentUpdated(Event, tag="department.updated.v1", frozen=True, kw_only=True):
    """The department's updatable fields, as they are now (its name and cluster never change)."""

    department_id: str
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()


class DepartmentDeleted(Event, tag="department.deleted.v1", frozen=True, kw_only=True):
    department_id: str


class ProjectCreated(Event, tag="project.created.v1", frozen=True, kw_only=True):
    project_id: str
    cluster_id: UUID
    department_id: str | None = None  # None: the project sits directly under its cluster
    name: str
    description: str = ""
    requested_namespace: str | None = None
    resources: tuple[NodePoolResources, ...] = ()


class ProjectUpdated(Event, tag="project.updated.v1", frozen=True, kw_only=True):
    """The project's updatable fields, as they are now (its name and parents never change)."""

    project_id: str
    description: str = ""
    resources: tuple[NodePoolResources, ...] = ()


class ProjectDeleted(Event, tag="project.deleted.v1", frozen=True, kw_only=True):
    project_id: str


class UserRoleGranted(Event, tag="user.role_granted.v1", frozen=True, kw_only=True):
    """An access rule for a user of the external identity provider, named by its subject."""

    subject: str
    rule: AccessRule


class UserRoleRevoked(Event, tag="user.role_revoked.v1", frozen=True, kw_only=True):
    subject: str
    rule_id: int


UserEvent = UserRoleGranted | UserRoleRevoked

ClusterEvent = ClusterCreated | ClusterRenamed | ClusterDeleted


class NodePoolCreated(Event, tag="nodepool.created.v1", frozen=True, kw_only=True):
    """A node pool of a cluster: the nodes carrying `spec`'s label, named uniquely there."""

    nodepool_id: UUID
    cluster_id: UUID
    name: str
    spec: NodePoolSpec


class NodePoolUpdated(Event, tag="nodepool.updated.v1", frozen=True, kw_only=True):
    """The pool's spec as it now is (its name and cluster never change)."""

    nodepool_id: UUID
    spec: NodePoolSpec


class NodePoolDeleted(Event, tag="nodepool.deleted.v1", frozen=True, kw_only=True):
    nodepool_id: UUID


NodePoolEvent = NodePoolCreated | NodePoolUpdated | NodePoolDeleted


class StorageClassRegistered(Event, tag="storageclass.registered.v1", frozen=True, kw_only=True):
    """A cluster has this StorageClass, as it reports it now (again, after a change)."""

    cluster_id: UUID
    name: str
    spec: StorageClassSpec


class StorageClassRemoved(Event, tag="storageclass.removed.v1", frozen=True, kw_only=True):
    cluster_id: UUID
    name: str


StorageClassEvent = StorageClassRegistered | StorageClassRemoved


class StorageClassConfigurationCreated(
    Event, tag="storageclassconfig.created.v1", frozen=True, kw_only=True
):
    """How the class `name` of a cluster may be used, set by its administrators."""

    configuration_id: UUID
    cluster_id: UUID
    name: str
    rules: StorageClassRules


class StorageClassConfigurationUpdated(
    Event, tag="storageclassconfig.updated.v1", frozen=True, kw_only=True
):
    """The configuration's rules as they now are (its cluster and class never change)."""

    configuration_id: UUID
    rules: StorageClassRules


class StorageClassConfigurationDeleted(
    Event, tag="storageclassconfig.deleted.v1", frozen=True, kw_only=True
):
    configuration_id: UUID


StorageClassConfigurationEvent = (
    StorageClassConfigurationCreated
    | StorageClassConfigurationUpdated
    | StorageClassConfigurationDeleted
)
DepartmentEvent = DepartmentCreated | DepartmentUpdated | DepartmentDeleted
ProjectEvent = ProjectCreated | ProjectUpdated | ProjectDeleted
OrgUnitEvent = ClusterEvent | DepartmentEvent | ProjectEvent


class EnvironmentCreated(Event, tag="environment.created.v1", frozen=True, kw_only=True):
    asset_id: UUID
    meta: AssetMeta
    spec: EnvironmentSpec


class EnvironmentUpdated(Event, tag="environment.updated.v1", frozen=True, kw_only=True):
    """The environment as it now is: name, description and the whole spec (scope never moves)."""

    asset_id: UUID
    name: str
    description: str | None = None
    spec: EnvironmentSpec


class EnvironmentDeleted(Event, tag="environment.deleted.v1", frozen=True, kw_only=True):
    asset_id: UUID


class ComputeCreated(Event, tag="compute.created.v1", frozen=True, kw_only=True):
    asset_id: UUID
    meta: AssetMeta
    spec: ComputeSpec


class ComputeUpdated(Event, tag="compute.updated.v1", frozen=True, kw_only=True):
    """The compute resource as it now is: name, description and the whole spec."""

    asset_id: UUID
    name: str
    description: str | None = None
    spec: ComputeSpec


class ComputeDeleted(Event, tag="compute.deleted.v1", frozen=True, kw_only=True):
    asset_id: UUID


class DataSourceCreated(Event, tag="datasource.created.v1", frozen=True, kw_only=True):
    """A data source of any kind; the spec's `kind` tag says which (nfs, pvc, s3, ...)."""

    asset_id: UUID
    meta: AssetMeta
    spec: AnyDataSourceSpec


class DataSourceUpdated(Event, tag="datasource.updated.v1", frozen=True, kw_only=True):
    asset_id: UUID
    name: str
    description: str | None = None
    spec: AnyDataSourceSpec


class DataSourceDeleted(Event, tag="datasource.deleted.v1", frozen=True, kw_only=True):
    asset_id: UUID


EnvironmentEvent = EnvironmentCreated | EnvironmentUpdated | EnvironmentDeleted
ComputeEvent = ComputeCreated | ComputeUpdated | ComputeDeleted
DataSourceEvent = DataSourceCreated | DataSourceUpdated | DataSourceDeleted
AssetEvent = EnvironmentEvent | ComputeEvent | DataSourceEvent


class CredentialCreated(Event, tag="credential.created.v1", frozen=True, kw_only=True):
    """A credential exists. Its values are sealed elsewhere; `spec.secret` only points at them."""

    asset_id: UUID
    kind: CredentialKind
    meta: AssetMeta
    spec: CredentialSpec


class CredentialUpdated(Event, tag="credential.updated.v1", frozen=True, kw_only=True):
    """Renamed or re-described; a credential's values never change after creation."""

    asset_id: UUID
    name: str
    description: str | None = None


class CredentialDeleted(Event, tag="credential.deleted.v1", frozen=True, kw_only=True):
    """Gone, and its sealed values destroyed in the same transaction."""

    asset_id: UUID


CredentialEvent = CredentialCreated | CredentialUpdated | CredentialDeleted


class RegistryCreated(Event, tag="registry.created.v1", frozen=True, kw_only=True):
    """A container registry a scope's templates may pick images from. Its password is sealed
    elsewhere; `spec.secret` only points at it."""

    asset_id: UUID
    meta: AssetMeta
    spec: RegistrySpec


class RegistryUpdated(Event, tag="registry.updated.v1", frozen=True, kw_only=True):
    """The registry as it now is: name, description and spec (a new password: a new
    `spec.secret`)."""

    asset_id: UUID
    name: str
    description: str | None = None
    spec: RegistrySpec


class RegistryDeleted(Event, tag="registry.deleted.v1", frozen=True, kw_only=True):
    """Gone, and its sealed password destroyed in the same transaction."""

    asset_id: UUID


RegistryEvent = RegistryCreated | RegistryUpdated | RegistryDeleted


class DataVolumeCreated(Event, tag="datavolume.created.v1", frozen=True, kw_only=True):
    """A data volume made from a PVC of its project (`meta` places it there); shared with no
    other scope yet."""

    datavolume_id: UUID
    meta: AssetMeta
    spec: DataVolumeSpec


class DataVolumeUpdated(Event, tag="datavolume.updated.v1", frozen=True, kw_only=True):
    """Its description as it now is (None: it has none)."""

    datavolume_id: UUID
    description: str | None = None


class DataVolumeShared(Event, tag="datavolume.shared.v1", frozen=True, kw_only=True):
    """Usable from now on in this scope and every scope below it."""

    datavolume_id: UUID
    scope: SharedScope


class DataVolumeUnshared(Event, tag="datavolume.unshared.v1", frozen=True, kw_only=True):
    datavolume_id: UUID
    scope: SharedScope


class DataVolumeDeleted(Event, tag="datavolume.deleted.v1", frozen=True, kw_only=True):
    datavolume_id: UUID


DataVolumeEvent = (
    DataVolumeCreated | DataVolumeUpdated | DataVolumeShared | DataVolumeUnshared
    | DataVolumeDeleted
)  # fmt: skip


class AssetVersion(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The version of a linked asset a template's combined spec was built from."""

    asset_id: UUID
    version: int


class TemplateCreated(Event, tag="template.created.v1", frozen=True, kw_only=True):
    """A distributed template, as its author wrote it, with the versions of the assets it links."""

    template_id: UUID
    meta: TemplateMeta
    spec: DistributedTemplateSpec
    assets: TemplateAssets | None = None
    master_spec_same_as_worker: bool = True
    master: MasterSection | None = None
    asset_versions: tuple[AssetVersion, ...] = ()


class TemplateUpdated(Event, tag="template.updated.v1", frozen=True, kw_only=True):
    """The template as it now is (a PUT, or a PATCH already merged): name, description and body;
    the scope never moves."""

    template_id: UUID
    name: str
    description: str | None = None
    spec: DistributedTemplateSpec
    assets: TemplateAssets | None = None
    master_spec_same_as_worker: bool = True
    master: MasterSection | None = None
    asset_versions: tuple[AssetVersion, ...] = ()


class TemplateDeleted(Event, tag="template.deleted.v1", frozen=True, kw_only=True):
    template_id: UUID


class TemplateLinkedAssetUpdated(
    Event, tag="template.linked_asset_updated.v1", frozen=True, kw_only=True
):
    """A linked environment or compute resource changed: the template's combined spec is now
    built from this version of it."""

    template_id: UUID
    asset_id: UUID
    asset_version: int


TemplateEvent = TemplateCreated | TemplateUpdated | TemplateDeleted | TemplateLinkedAssetUpdated


class TemplateSpecs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A template version's combined specs, as they stood when a workload was asked of it."""

    spec: DistributedTemplateSpec
    master_spec_same_as_worker: bool = True
    master: MasterTemplateSpec | None = None


class DataVolumeClaim(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Where a data volume the workload mounts is: its origin PVC, in its project's namespace."""

    data_volume_id: UUID
    namespace: str
    claim_name: str


class WorkloadSnapshot(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Everything a workload is run from, resolved at request time, so running it again yields
    the same workload. `template_specs`: the template version's own specs before the overrides,
    for a backend keeping one object per version; absent when they are the workload's own."""

    template_id: UUID | None = None
    template_version: int | None = None
    asset_versions: tuple[AssetVersion, ...] = ()
    spec: DistributedTemplateSpec
    master_spec_same_as_worker: bool = True
    master: MasterTemplateSpec | None = None
    # The Kubernetes secrets of the registry credentials shared in the project's scopes.
    image_pull_secrets: tuple[str, ...] = ()
    template_specs: TemplateSpecs | None = None
    # The data volumes its specs mount, resolved at request time.
    data_volume_claims: tuple[DataVolumeClaim, ...] = ()


class WorkloadRequested(Event, tag="workload.requested.v1", frozen=True, kw_only=True):
    """A user asked for a distributed workload. `job_name` is what the backend calls it:
    derived from the id, so a redelivered request can never start a second one."""

    workload_id: UUID
    name: str
    requested_name: str
    cluster_id: UUID
    department_id: str | None = None
    project_id: str
    project_name: str
    namespace: str
    job_name: str
    snapshot: WorkloadSnapshot
    # The submission as it was asked (its name, project, template and overrides), digested: a
    # retry under its Idempotency-Key is the same request when this is, whatever the template and
    # assets it was resolved from have become since. Absent in workloads requested before.
    request_digest: str | None = None


class WorkloadSubmitted(Event, tag="workload.submitted.v1", frozen=True, kw_only=True):
    """The backend accepted run `run` of the workload. A dry run keeps what it rendered."""

    workload_id: UUID
    run: int
    backend: str
    manifests: tuple[dict[str, Any], ...] = ()


class WorkloadRunning(Event, tag="workload.running.v1", frozen=True, kw_only=True):
    workload_id: UUID
    run: int


class WorkloadSucceeded(Event, tag="workload.succeeded.v1", frozen=True, kw_only=True):
    workload_id: UUID
    run: int


class WorkloadFailed(Event, tag="workload.failed.v1", frozen=True, kw_only=True):
    """The run failed (or could not be submitted at all): `reason` says why."""

    workload_id: UUID
    run: int
    reason: str


class WorkloadSuspended(Event, tag="workload.suspended.v1", frozen=True, kw_only=True):
    """A user asked for the workload to stop, keeping it for a later resume."""

    workload_id: UUID


class WorkloadResumed(Event, tag="workload.resumed.v1", frozen=True, kw_only=True):
    """A user asked a stopped workload to run again: run `run` starts from the same snapshot."""

    workload_id: UUID
    run: int


class WorkloadStopped(Event, tag="workload.stopped.v1", frozen=True, kw_only=True):
    """The backend stopped run `run` after a suspend or a delete."""

    workload_id: UUID
    run: int


PodPhase = Literal["Pending", "Running", "Succeeded", "Failed", "Unknown"]


class ContainerObserved(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    name: str
    image: str
    started_at: datetime | None = None


class PodObserved(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One replica of a run as its backend sees it: a pod on Kubernetes, a process locally.
    `role` is the replica's (master, worker); times are the backend's."""

    name: str
    uid: UUID
    role: str
    phase: PodPhase
    node_name: str | None = None
    ip: str | None = None
    restarts: int = 0
    created_at: datetime
    completed_at: datetime | None = None
    phase_changed_at: datetime
    containers: tuple[ContainerObserved, ...] = ()


class WorkloadPodsObserved(Event, tag="workload.pods_observed.v1", frozen=True, kw_only=True):
    """The replicas of run `run` changed: each one as the backend now sees it (the whole set,
    so the latest of these events is the run's pods)."""

    workload_id: UUID
    run: int
    pods: tuple[PodObserved, ...]


class WorkloadPodsChanged(Event, tag="workload.pods_changed.v1", frozen=True, kw_only=True):
    """The replicas of run `run` changed: the pods new or changed since the last report and the
    names of those `gone`, applied in order over the last `workload.pods_observed.v1`. A report
    too large for one event is split into `parts` events appended together, this the `part`-th."""

    workload_id: UUID
    run: int
    pods: tuple[PodObserved, ...]
    gone: tuple[str, ...] = ()
    part: int = 1
    parts: int = 1


class WorkloadDeleted(Event, tag="workload.deleted.v1", frozen=True, kw_only=True):
    """A user deleted the workload: it is stopped, and its name is free again."""

    workload_id: UUID


class TenantSettingChanged(Event, tag="tenant.setting_changed.v1", frozen=True, kw_only=True):
    """A tenant setting (domain/tenant_settings.py) was turned on or off."""

    key: str
    value: bool


class TenantLimitChanged(Event, tag="tenant.limit_changed.v1", frozen=True, kw_only=True):
    """A tenant setting that is a number (domain/tenant_settings.py LIMITS) was set."""

    key: str
    value: int


WorkloadEvent = (
    WorkloadRequested
    | WorkloadSubmitted
    | WorkloadRunning
    | WorkloadSucceeded
    | WorkloadFailed
    | WorkloadSuspended
    | WorkloadResumed
    | WorkloadStopped
    | WorkloadDeleted
    | WorkloadPodsObserved
    | WorkloadPodsChanged
)


class PolicyApplied(Event, tag="policy.applied.v1", frozen=True, kw_only=True):
    """A scope's policy of one workload type, whole, as it now is (an overwrite, or a change's
    result): the defaults it fills in and the rules it sets, by field path
    ("worker.compute.gpuDevicesRequest"). The scope is placed in its org tree as of then."""

    policy_id: UUID
    name: str
    workload_type: Literal["distributed"]
    scope: Literal["tenant", "cluster", "department", "project"]
    scope_id: str  # "" for the tenant
    cluster_id: UUID | None = None
    department_id: str | None = None
    project_id: str | None = None
    worker_defaults: DistributedTemplateSpec | None = None
    master_defaults: MasterTemplateSpec | None = None
    rules: dict[str, PolicyRule] = msgspec.field(default_factory=dict)


class PolicyDeleted(Event, tag="policy.deleted.v1", frozen=True, kw_only=True):
    policy_id: UUID


PolicyEvent = PolicyApplied | PolicyDeleted

# The catalogue: every event type this service stores. Tags are a storage schema.
DomainEvent = (
    ApplicationEvent
    | UserEvent
    | OrgUnitEvent
    | NodePoolEvent
    | StorageClassEvent
    | StorageClassConfigurationEvent
    | AssetEvent
    | CredentialEvent
    | RegistryEvent
    | DataVolumeEvent
    | TemplateEvent
    | WorkloadEvent
    | TenantSettingChanged
    | TenantLimitChanged
    | PolicyEvent
)


def event_tag(event_type: type[Event]) -> str:
    """The stored type name of an event class (its msgspec tag)."""
    tag = event_type.__struct_config__.tag
    if not isinstance(tag, str):
        raise TypeError(f"{event_type.__name__} has no explicit string tag")
    return tag


def stream_type_of(tag: str) -> str:
    """`template.created.v1` -> `template`: the first segment names the kind of stream."""
    return tag.split(".", 1)[0]
