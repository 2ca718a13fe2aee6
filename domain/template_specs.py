"""The distributed template's spec in Run:ai's wire shape (DistributedTemplateSpec,
MasterTemplateSpec): the published contract, shared by events and API. One field's rules are
enforced at decoding; rules relating fields live in domain/template_rules.py."""

from typing import Annotated, Literal
from uuid import UUID

from msgspec import Meta

from domain.specs import (
    Capability,
    ClaimInfo,
    ComputeSpec,
    DistFramework,
    DnsLabel,
    NonEmpty,
    OctalMode,
    Port,
    Probes,
    Quantity,
    Spec,
)

LabelName = Annotated[str, Meta(min_length=1, max_length=63)]
Preemptibility = Literal["preemptible", "non-preemptible"]
ImageSource = Literal["custom", "ngcCatalog", "ngcPrivateRegistry"]


class NamedItem(Spec, frozen=True, kw_only=True):
    """Base of list items: `exclude` drops an inherited item from the combined spec."""

    name: NonEmpty | None = None
    exclude: bool | None = None


class SecretRef(Spec, frozen=True, kw_only=True):
    name: DnsLabel
    key: NonEmpty


class ConfigMapKeyRef(Spec, frozen=True, kw_only=True):
    name: DnsLabel
    key: NonEmpty


class UserCredentialRef(Spec, frozen=True, kw_only=True):
    name: NonEmpty
    key: NonEmpty


class PodFieldPath(Spec, frozen=True, kw_only=True):
    path: NonEmpty


class TemplateEnvironmentVariable(Spec, frozen=True, kw_only=True):
    """A variable and exactly one source: a value, a shared secret, a user credential, a
    ConfigMap key or a pod field."""

    name: NonEmpty
    value: str | None = None
    secret: SecretRef | None = None
    config_map: ConfigMapKeyRef | None = None
    pod_field_ref: PodFieldPath | None = None
    user_credential: UserCredentialRef | None = None
    exclude: bool | None = None
    description: str | None = None


class Annotation(Spec, frozen=True, kw_only=True):
    name: LabelName
    value: str | None = None
    exclude: bool | None = None


class Label(Spec, frozen=True, kw_only=True):
    name: LabelName
    value: str | None = None
    exclude: bool | None = None


class ExposedUrl(NamedItem, frozen=True, kw_only=True):
    container: Port | None = None
    url: str | None = None
    authorization_type: (
        Literal["authenticatedUsers", "authorizedUsers", "authorizedGroups"] | None
    ) = None
    authorized_users: tuple[str, ...] | None = None
    authorized_groups: tuple[str, ...] | None = None
    tool_type: str | None = None
    tool_name: str | None = None


class PortSpec(NamedItem, frozen=True, kw_only=True):
    container: Port | None = None
    service_type: Literal["LoadBalancer", "NodePort", "ClusterIP"] | None = None
    external: int | None = None
    tool_type: str | None = None
    tool_name: str | None = None


class RelatedUrl(Spec, frozen=True, kw_only=True):
    url: str | None = None
    type: str | None = None
    name: str | None = None
    exclude: bool | None = None


class Toleration(NamedItem, frozen=True, kw_only=True):
    operator: Literal["Equal", "Exists"] | None = None
    key: str | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "NoExecute", "PreferNoSchedule", "Any"] | None = None
    seconds: Annotated[int, Meta(ge=1)] | None = None


class MatchExpression(Spec, frozen=True, kw_only=True):
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: tuple[str, ...] | None = None


class NodeSelectorTerm(Spec, frozen=True, kw_only=True):
    match_expressions: tuple[MatchExpression, ...] | None = None


class NodeAffinityRequired(Spec, frozen=True, kw_only=True):
    node_selector_terms: tuple[NodeSelectorTerm, ...] | None = None


class PodAffinity(Spec, frozen=True, kw_only=True):
    type: Literal["Required", "Preferred"] | None = None
    key: str | None = None


class Security(Spec, frozen=True, kw_only=True):
    allow_privilege_escalation: bool | None = None
    capabilities: tuple[Capability, ...] | None = None
    host_ipc: bool | None = None
    host_network: bool | None = None
    read_only_root_filesystem: bool | None = None
    run_as_gid: int | None = None
    run_as_non_root: bool | None = None
    run_as_uid: int | None = None
    seccomp_profile_type: Literal["RuntimeDefault", "Unconfined", "Localhost"] | None = None
    supplemental_groups: str | None = None
    uid_gid_source: Literal["fromTheImage", "fromIdpToken", "custom"] | None = None


class ConfigMapVolume(NamedItem, frozen=True, kw_only=True):
    config_map: DnsLabel | None = None
    mount_path: NonEmpty | None = None
    sub_path: NonEmpty | None = None
    default_mode: OctalMode | None = None


class DataVolume(Spec, frozen=True, kw_only=True):
    id: UUID | None = None
    mount_path: NonEmpty | None = None
    exclude: bool | None = None


class EmptyDirVolume(NamedItem, frozen=True, kw_only=True):
    path: NonEmpty | None = None
    medium: Literal["Memory", ""] | None = None
    size_limit: Quantity | None = None


class GitSecretRef(Spec, frozen=True, kw_only=True):
    name: NonEmpty | None = None
    authentication_method: Literal["password", "ssh-key"] | None = None
    secret_key_of_user: str | None = None
    secret_key_of_password: str | None = None


class GitVolume(NamedItem, frozen=True, kw_only=True):
    repository: NonEmpty | None = None
    branch: NonEmpty | None = None
    revision: NonEmpty | None = None
    path: NonEmpty | None = None
    password_secret: str | None = None
    secret_key_of_user: str | None = None
    secret_key_of_password: str | None = None
    secret_ref: GitSecretRef | None = None


class HostPathVolume(NamedItem, frozen=True, kw_only=True):
    path: NonEmpty | None = None
    read_only: bool | None = None
    mount_path: NonEmpty | None = None
    mount_propagation: Literal["None", "HostToContainer"] | None = None


class NfsVolume(NamedItem, frozen=True, kw_only=True):
    path: NonEmpty | None = None
    read_only: bool | None = None
    server: NonEmpty | None = None
    mount_path: NonEmpty | None = None


class PvcVolume(NamedItem, frozen=True, kw_only=True):
    path: NonEmpty | None = None
    existing_pvc: bool | None = None
    claim_name: Annotated[str, Meta(min_length=1, max_length=63)] | None = None
    read_only: bool | None = None
    ephemeral: bool | None = None
    claim_info: ClaimInfo | None = None
    data_sharing: bool | None = None


class S3Volume(NamedItem, frozen=True, kw_only=True):
    bucket: NonEmpty | None = None
    path: NonEmpty | None = None
    url: NonEmpty | None = None
    access_key_secret: DnsLabel | None = None
    secret_key_of_access_key_id: str | None = None
    secret_key_of_secret_key: str | None = None


class SecretVolume(NamedItem, frozen=True, kw_only=True):
    secret: NonEmpty | None = None
    mount_path: NonEmpty | None = None
    default_mode: OctalMode | None = None


class Storage(Spec, frozen=True, kw_only=True):
    config_map_volume: tuple[ConfigMapVolume, ...] | None = None
    data_volume: tuple[DataVolume, ...] | None = None
    empty_dir_volume: tuple[EmptyDirVolume, ...] | None = None
    git: tuple[GitVolume, ...] | None = None
    host_path: tuple[HostPathVolume, ...] | None = None
    nfs: tuple[NfsVolume, ...] | None = None
    pvc: tuple[PvcVolume, ...] | None = None
    s3: tuple[S3Volume, ...] | None = None
    secret_volume: tuple[SecretVolume, ...] | None = None


class ReplicaSpec(Spec, frozen=True, kw_only=True):
    """What the worker and the master specs share: the container, its compute and placement."""

    annotations: tuple[Annotation, ...] | None = None
    args: NonEmpty | None = None
    category: str | None = None
    command: NonEmpty | None = None
    compute: ComputeSpec | None = None
    create_home_dir: bool | None = None
    environment_variables: tuple[TemplateEnvironmentVariable, ...] | None = None
    exposed_urls: tuple[ExposedUrl, ...] | None = None
    image: NonEmpty | None = None
    # How the image was chosen (the guide's custom image, NGC catalog or NGC private registry),
    # which Run:ai's schema lacks: the NGC catalog setting governs the catalog, and a registry pick
    # names the asset, which the template's scope must be able to use.
    image_source: ImageSource | None = None
    image_registry_id: UUID | None = None
    image_pull_policy: Literal["Always", "Never", "IfNotPresent"] | None = None
    labels: tuple[Label, ...] | None = None
    node_affinity_required: NodeAffinityRequired | None = None
    node_pools: tuple[str, ...] | None = None
    node_type: NonEmpty | None = None
    pod_affinity: PodAffinity | None = None
    ports: tuple[PortSpec, ...] | None = None
    preemptibility: Preemptibility | None = None
    priority_class: str | None = None
    probes: Probes | None = None
    related_urls: tuple[RelatedUrl, ...] | None = None
    restart_policy: Literal["Always", "Never", "OnFailure"] | None = None
    security: Security | None = None
    stdin: bool | None = None
    storage: Storage | None = None
    terminate_after_preemption: bool | None = None
    tolerations: tuple[Toleration, ...] | None = None
    tty: bool | None = None
    working_dir: NonEmpty | None = None


class MasterTemplateSpec(ReplicaSpec, frozen=True, kw_only=True):
    """The master's own setup. The four workload-wide lifecycle fields may appear, but the
    worker spec's values govern the workload."""

    auto_deletion_time_after_completion_seconds: int | None = None
    backoff_limit: int | None = None
    termination_grace_period_seconds: int | None = None


class DistributedTemplateSpec(ReplicaSpec, frozen=True, kw_only=True):
    """The worker spec plus the workload-wide fields."""

    distributed_framework: DistFramework | None = None
    num_workers: Annotated[int, Meta(ge=1)] | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    slots_per_worker: Annotated[int, Meta(ge=1)] | None = None
    ssh_auth_mount_path: str | None = None
    mpi_launcher_creation_policy: Literal["AtStartup", "WaitForWorkersReady"] | None = None
    clean_pod_policy: Literal["None", "All", "Running"] | None = None
    auto_deletion_time_after_completion_seconds: int | None = None
    backoff_limit: int | None = None
    termination_grace_period_seconds: int | None = None


class DataSourceLink(Spec, frozen=True, kw_only=True):
    """A data-source asset loaded into the template, with its per-template overrides."""

    id: UUID
    kind: str
    overrides: "DataSourceOverrides | None" = None


class DataSourceOverrides(Spec, frozen=True, kw_only=True):
    container_path: NonEmpty | None = None
    sub_path: NonEmpty | None = None  # ConfigMap data sources only


class TemplateAssets(Spec, frozen=True, kw_only=True):
    """The assets a template is built from. An environment or compute resource given here is
    linked (its later edits flow into the template); one copied into `spec` is loaded once.
    Data sources are always loaded."""

    environment: UUID | None = None
    compute: UUID | None = None
    datasources: tuple[DataSourceLink, ...] | None = None


class MasterSection(Spec, frozen=True, kw_only=True):
    spec: MasterTemplateSpec | None = None
    assets: TemplateAssets | None = None
