"""The environment and compute-resource specs, in Run:ai's wire shapes: the published contract,
so their spelling is part of the stored schema. One field's ranges and patterns are enforced at
decoding; rules that relate fields live in domain/assets.py."""

import re
from typing import Annotated, Final, Literal
from uuid import UUID

import msgspec
from msgspec import Meta

from domain.quantities import PATTERN as QUANTITY_PATTERN

Quantity = Annotated[str, Meta(pattern=QUANTITY_PATTERN)]
NonEmpty = Annotated[str, Meta(min_length=1)]
DnsLabel = Annotated[str, Meta(pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")]
Port = Annotated[int, Meta(ge=1, le=65535)]
DistFramework = Literal["MPI", "PyTorch", "TF", "XGBoost", "JAX"]
# Supplementary groups: group ids separated by commas; empty reverts to the image's groups.
SUPPLEMENTAL_GROUPS: Final = re.compile(r"^(\s*[0-9]+\s*(,\s*[0-9]+\s*)*)?$")
# User and group ids as Kubernetes takes them (runAsUser, runAsGroup, supplementalGroups): a pod
# with another is refused by the API server, so the workload could never start.
POSIX_IDS: Final = range(0, 2**31)


def ids_out_of_range(groups: str) -> bool:
    """Whether supplementary groups (already matching SUPPLEMENTAL_GROUPS) name an id outside
    POSIX_IDS."""
    # Ten digits hold every id; a longer one is out of range before int() is asked to read it.
    ids = [g.strip().lstrip("0") or "0" for g in groups.split(",") if g.strip()]
    return any(len(g) > len(str(POSIX_IDS[-1])) or int(g) not in POSIX_IDS for g in ids)


Capability = Literal[
    "AUDIT_CONTROL", "AUDIT_READ", "AUDIT_WRITE", "BLOCK_SUSPEND", "CHOWN", "DAC_OVERRIDE",
    "DAC_READ_SEARCH", "FOWNER", "FSETID", "IPC_LOCK", "IPC_OWNER", "KILL", "LEASE",
    "LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE", "MKNOD", "NET_ADMIN", "NET_BIND_SERVICE",
    "NET_BROADCAST", "NET_RAW", "SETGID", "SETFCAP", "SETPCAP", "SETUID", "SYS_ADMIN", "SYS_BOOT",
    "SYS_CHROOT", "SYS_MODULE", "SYS_NICE", "SYS_PACCT", "SYS_PTRACE", "SYS_RAWIO",
    "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "SYSLOG", "WAKE_ALARM",
]  # fmt: skip


class Spec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """Base of spec values: camelCase, unset fields left out of the JSON."""


class WorkloadSupportedTypes(Spec, frozen=True, kw_only=True):
    inference: bool | None = None
    workspace: bool | None = None
    training: bool | None = None
    distributed: bool | None = None
    dist_framework: DistFramework | None = None


class CredentialRef(Spec, frozen=True, kw_only=True):
    asset_id: UUID
    key: NonEmpty


class ConfigMapRef(Spec, frozen=True, kw_only=True):
    name: DnsLabel
    key: NonEmpty


class PodFieldRef(Spec, frozen=True, kw_only=True):
    path: NonEmpty


class EnvironmentVariable(Spec, frozen=True, kw_only=True):
    """One variable and exactly one source of its value."""

    name: NonEmpty
    value: str | None = None
    credential: CredentialRef | None = None
    config_map: ConfigMapRef | None = None
    pod_field_ref: PodFieldRef | None = None
    exclude: bool | None = None


class HttpGet(Spec, frozen=True, kw_only=True):
    path: Annotated[str, Meta(pattern=r"^(/[a-zA-Z0-9\-_./]*)?$")] | None = None
    port: Port | None = None
    host: str | None = None
    scheme: Literal["HTTP", "HTTPS"] | None = None


class ProbeHandler(Spec, frozen=True, kw_only=True):
    http_get: HttpGet | None = None


class Probe(Spec, frozen=True, kw_only=True):
    initial_delay_seconds: Annotated[int, Meta(ge=0)] | None = None
    period_seconds: Annotated[int, Meta(ge=1)] | None = None
    timeout_seconds: Annotated[int, Meta(ge=1)] | None = None
    success_threshold: Annotated[int, Meta(ge=1)] | None = None
    failure_threshold: Annotated[int, Meta(ge=1)] | None = None
    handler: ProbeHandler | None = None


class Probes(Spec, frozen=True, kw_only=True):
    readiness: Probe | None = None


class NodePortInfo(Spec, frozen=True, kw_only=True):
    is_custom_port: bool = False


class ExternalUrlInfo(Spec, frozen=True, kw_only=True):
    is_custom_url: bool = False
    external_url: NonEmpty | None = None


class ServingPortInfo(Spec, frozen=True, kw_only=True):
    protocol: Literal["grpc", "http"] | None = None


class InternalToolInfo(Spec, frozen=True, kw_only=True):
    tool_type: Literal[
        "jupyter-notebook", "pycharm", "visual-studio-code", "tensorboard", "rstudio", "mlflow",
        "custom", "matlab", "chatbot-ui",
    ]  # fmt: skip
    connection_type: Literal["LoadBalancer", "NodePort", "ExternalUrl", "ServingPort"]
    container_port: Port
    node_port_info: NodePortInfo | None = None
    external_url_info: ExternalUrlInfo | None = None
    serving_port_info: ServingPortInfo | None = None


class ExternalToolInfo(Spec, frozen=True, kw_only=True):
    tool_type: Literal["wandb", "comet"]
    external_url: NonEmpty


class Connection(Spec, frozen=True, kw_only=True):
    name: NonEmpty
    is_external: bool = False
    internal_tool_info: InternalToolInfo | None = None
    external_tool_info: ExternalToolInfo | None = None


class EnvironmentSpec(Spec, frozen=True, kw_only=True):
    """Run:ai's EnvironmentAssetSpec: the image and how its container runs."""

    image: str | None = None
    image_pull_policy: Literal["Always", "Never", "IfNotPresent"] | None = None
    command: str | None = None
    args: str | None = None
    environment_variables: tuple[EnvironmentVariable, ...] | None = None
    working_dir: NonEmpty | None = None
    uid_gid_source: Literal["fromTheImage", "fromIdpToken", "custom"] | None = None
    run_as_uid: int | None = None
    run_as_gid: int | None = None
    supplemental_groups: str | None = None
    override_uid_gid_in_workspace: bool = False
    capabilities: tuple[Capability, ...] | None = None
    allow_privilege_escalation: bool | None = None
    seccomp_profile_type: Literal["RuntimeDefault", "Unconfined", "Localhost"] | None = None
    run_as_non_root: bool | None = None
    read_only_root_filesystem: bool | None = None
    host_ipc: bool | None = None
    host_network: bool | None = None
    create_home_dir: bool | None = None
    stdin: bool | None = None
    tty: bool | None = None
    probes: Probes | None = None
    connections: tuple[Connection, ...] | None = None


CredentialKind = Literal["accessKey", "password", "dockerRegistry", "genericSecret", "ngcApiKey"]


class SecretRef(Spec, frozen=True, kw_only=True):
    """Where a credential's values are and what they were, without them: the sealing key's id and
    an HMAC fingerprint over the values and the asset's id, so no guess can be confirmed with it."""

    key_id: int
    fingerprint: str


class CredentialSpec(Spec, frozen=True, kw_only=True):
    """The public part of a credential. Its values (passwords, keys, ...) are never here: they
    are sealed in the credential vault, and `secret` points at them."""

    existing_secret_name: NonEmpty | None = None
    user: NonEmpty | None = None
    url: NonEmpty | None = None
    keys: tuple[str, ...] | None = None  # a generic secret's key names
    secret: SecretRef | None = None


class RegistrySpec(Spec, frozen=True, kw_only=True):
    """A container registry's public part: where it is and whose login lists its images. The
    password is never here: it is sealed in the credential vault, and `secret` points at it."""

    url: str
    credential_kind: Literal["password"] = "password"
    user: str
    secret: SecretRef | None = None


class DataVolumeSpec(Spec, frozen=True, kw_only=True):
    """What a data volume is made of: the PVC of its project it shares, and the scopes it is
    shared with (its project aside, where it always is usable)."""

    origin_pvc_name: str
    use_original_volume: bool = True
    shared_scopes: tuple["SharedScope", ...] = ()


class SharedScope(Spec, frozen=True, kw_only=True):
    """A scope a data volume is shared with, as Run:ai names one (`scopeType`, `scopeId`)."""

    scope_type: Literal["cluster", "department", "project"]
    scope_id: str


class ExtendedResource(Spec, frozen=True, kw_only=True):
    resource: NonEmpty
    quantity: Quantity | None = None
    exclude: bool | None = None


class ComputeSpec(Spec, frozen=True, kw_only=True):
    """Run:ai's ComputeAssetSpec: what one pod requests and may use."""

    gpu_devices_request: Annotated[int, Meta(ge=0)] | None = None
    gpu_request_type: Literal["portion", "memory"] | None = None
    gpu_portion_request: Annotated[float, Meta(ge=0, le=1)] | None = None
    gpu_portion_limit: Annotated[float, Meta(ge=0, le=1)] | None = None
    gpu_memory_request: Quantity | None = None
    gpu_memory_limit: Quantity | None = None
    cpu_core_request: Annotated[float, Meta(ge=0)] | None = None
    cpu_core_limit: Annotated[float, Meta(ge=0)] | None = None
    cpu_memory_request: Quantity | None = None
    cpu_memory_limit: Quantity | None = None
    large_shm_request: bool | None = None
    extended_resources: tuple[ExtendedResource, ...] | None = None


# Data sources. Each spec is tagged with its kind in stored events (`"kind": "nfs"`); requests
# name the kind by their path, and responses leave the tag out.
OctalMode = Annotated[str, Meta(pattern=r"^0[0-7]{3}$")]
ClaimName = Annotated[str, Meta(min_length=1, max_length=63)]


class DataSourceSpec(Spec, frozen=True, kw_only=True, tag_field="kind"):
    """Base of data-source specs."""


class NfsSpec(DataSourceSpec, frozen=True, kw_only=True, tag="nfs"):
    server: NonEmpty | None = None
    path: NonEmpty | None = None
    mount_path: NonEmpty | None = None
    read_only: bool | None = True


class AccessModes(Spec, frozen=True, kw_only=True):
    read_write_once: bool | None = True
    read_only_many: bool | None = False
    read_write_many: bool | None = False


class AddedAttrValue(Spec, frozen=True, kw_only=True):
    key: Annotated[str, Meta(pattern=r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$", max_length=63)]
    value: str | None = None


class ClaimInfo(Spec, frozen=True, kw_only=True):
    size: Quantity | None = None
    storage_class: DnsLabel | None = None
    access_modes: AccessModes | None = None
    volume_mode: Literal["Filesystem", "Block"] | None = None
    added_attr_values: tuple[AddedAttrValue, ...] | None = None


class PvcSpec(DataSourceSpec, frozen=True, kw_only=True, tag="pvc"):
    path: NonEmpty | None = None
    existing_pvc: bool | None = False
    claim_name: ClaimName | None = None
    read_only: bool | None = False
    ephemeral: bool | None = False
    claim_info: ClaimInfo | None = None
    data_sharing: bool | None = False


class S3Spec(DataSourceSpec, frozen=True, kw_only=True, tag="s3"):
    bucket: NonEmpty | None = None
    path: NonEmpty | None = None
    url: NonEmpty | None = None
    access_key_asset_id: UUID | None = None


class GitSpec(DataSourceSpec, frozen=True, kw_only=True, tag="git"):
    repository: NonEmpty | None = None
    branch: NonEmpty | None = None
    revision: NonEmpty | None = None
    path: NonEmpty | None = None
    password_asset_id: UUID | None = None  # deprecated by Run:ai in favour of credentialId
    credential_id: UUID | None = None


class HostPathSpec(DataSourceSpec, frozen=True, kw_only=True, tag="hostPath"):
    path: NonEmpty | None = None
    read_only: bool | None = True
    mount_path: NonEmpty | None = None
    mount_propagation: Literal["None", "HostToContainer"] | None = None


class ConfigMapSpec(DataSourceSpec, frozen=True, kw_only=True, tag="config-map"):
    config_map: DnsLabel | None = None
    mount_path: NonEmpty | None = None
    sub_path: NonEmpty | None = None
    default_mode: OctalMode | None = None


class SecretVolumeSpec(DataSourceSpec, frozen=True, kw_only=True, tag="secret-volume"):
    credential_asset_id: UUID | None = None
    mount_path: NonEmpty | None = None
    default_mode: OctalMode | None = None


AnyDataSourceSpec = (
    NfsSpec | PvcSpec | S3Spec | GitSpec | HostPathSpec | ConfigMapSpec | SecretVolumeSpec
)
