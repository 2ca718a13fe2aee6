"""What a cluster offers templates beside its org units, in Run:ai's wire shapes (the stored
schema, so their spelling is part of it): its node pools. Rules that relate fields live in
domain/node_pools.py."""

from typing import Annotated, Final, Literal
from uuid import UUID

from msgspec import Meta

from domain.specs import Quantity, Spec

# A Kubernetes label's key (an optional DNS-subdomain prefix and a name) and value: a node pool
# is the nodes labelled so, so anything else could never select a node.
LABEL_KEY: Final = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
LABEL_VALUE: Final = r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
LabelKey = Annotated[str, Meta(min_length=1, max_length=317, pattern=LABEL_KEY)]
LabelValue = Annotated[str, Meta(min_length=1, max_length=63, pattern=LABEL_VALUE)]
PlacementStrategy = Literal["spread", "binpack"]
# Run:ai's SchedulingConfiguration.minGuaranteedRuntime (5d8h40m).
RUNTIME: Final = r"^(0|[+]?((\d+(\.\d+)?)(ns|us|µs|μs|ms|s|m|h|d|w))+$)"


class Placement(Spec, frozen=True, kw_only=True):
    cpu: PlacementStrategy | None = None
    gpu: PlacementStrategy | None = None


class GpuResourceOptimization(Spec, frozen=True, kw_only=True):
    swap_enabled: bool | None = None
    cpu_swap_memory_size: Quantity | None = None
    reserved_gpu_memory_for_swap_operations: Quantity | None = None
    node_level_scheduler_enabled: bool | None = None


class SchedulingConfiguration(Spec, frozen=True, kw_only=True):
    placement_strategy: Placement | None = None
    min_guaranteed_runtime: Annotated[str, Meta(pattern=RUNTIME)] | None = None


class NodePoolSpec(Spec, frozen=True, kw_only=True):
    """Run:ai's NodepoolUpdateFields, whole: the nodes' label and how the pool schedules."""

    label_key: LabelKey
    label_value: LabelValue
    over_provisioning_ratio: Annotated[int, Meta(ge=1, le=5)] | None = None
    placement_strategy: Placement | None = None
    gpu_network_acceleration_label_key: str | None = None
    gpu_network_acceleration_detection: Literal["Use", "DontUse", "Auto"] | None = None
    gpu_resource_optimization: GpuResourceOptimization | None = None
    scheduling_configuration: SchedulingConfiguration | None = None
    network_topology_id: UUID | None = None


class NodePoolChanges(Spec, frozen=True, kw_only=True):
    """Run:ai's NodepoolUpdateFields as sent: what a PUT or PATCH gives (None: not given)."""

    label_key: LabelKey | None = None
    label_value: LabelValue | None = None
    over_provisioning_ratio: Annotated[int, Meta(ge=1, le=5)] | None = None
    placement_strategy: Placement | None = None
    gpu_network_acceleration_label_key: str | None = None
    gpu_network_acceleration_detection: Literal["Use", "DontUse", "Auto"] | None = None
    gpu_resource_optimization: GpuResourceOptimization | None = None
    scheduling_configuration: SchedulingConfiguration | None = None
    network_topology_id: UUID | None = None


# A Kubernetes object's name (a DNS subdomain): what a StorageClass is called.
OBJECT_NAME: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
StorageClassName = Annotated[str, Meta(min_length=1, max_length=253, pattern=OBJECT_NAME)]
SizeUnit = Literal["MB", "MiB", "GB", "GiB", "TB", "TiB"]
VolumeMode = Literal["Filesystem", "Block"]


class StorageClassSpec(Spec, frozen=True, kw_only=True):
    """Run:ai's StorageClassSpec: what a cluster reports of one of its StorageClasses."""

    provisioner: str | None = None
    allow_volume_expansion: bool | None = None
    is_default: bool


class StorageClassPermissions(Spec, frozen=True, kw_only=True):
    """Where a class may be used (None: Run:ai's default, allowed)."""

    allowed_for_assets: bool | None = None
    allowed_for_workloads: bool | None = None
    allowed_for_ephemeral_volumes: bool | None = None
    allowed_for_persistent_volumes: bool | None = None
    allow_data_sharing: bool | None = None


class PvcAccessModes(Spec, frozen=True, kw_only=True):
    read_write_once: bool | None = None
    read_only_many: bool | None = None
    read_write_many: bool | None = None


class AccessModeCustomization(Spec, frozen=True, kw_only=True):
    required: bool | None = None
    default: PvcAccessModes | None = None
    supported_values: PvcAccessModes | None = None


class VolumeModes(Spec, frozen=True, kw_only=True):
    filesystem: bool | None = None
    block: bool | None = None


class VolumeModeCustomization(Spec, frozen=True, kw_only=True):
    required: bool | None = None
    default: VolumeMode | None = None
    supported_values: VolumeModes | None = None


class ClaimSizeCustomization(Spec, frozen=True, kw_only=True):
    default: Quantity | None = None
    supported_units: tuple[SizeUnit, ...] | None = None
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


AttributeKey = Annotated[
    str, Meta(min_length=1, max_length=63, pattern=r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
]
Given = Annotated[str, Meta(min_length=1)]


class PvcAddedAttribute(Spec, frozen=True, kw_only=True):
    """An annotation every PVC of the class carries, and how a form asks for it."""

    key: AttributeKey
    format: Literal["text", "number", "boolean"] | None = None
    display: Given | None = None
    description: Given | None = None
    placeholder: Given | None = None
    required: bool | None = None
    default_value: Given | None = None
    validation_regexp: Given | None = None
    min_value: float | None = None
    max_value: float | None = None
    step: float | None = None
    validation_error: Given | None = None


class StorageClassCustomization(Spec, frozen=True, kw_only=True):
    """What a PVC of the class may ask (access modes, volume mode, size) and is given unasked."""

    access_mode: AccessModeCustomization | None = None
    volume_mode: VolumeModeCustomization | None = None
    claim_size: ClaimSizeCustomization | None = None
    attributes: tuple[PvcAddedAttribute, ...] | None = None


class StorageClassRules(Spec, frozen=True, kw_only=True):
    """A class's configuration, as administrators set it: where it may be used, and how."""

    permissions: StorageClassPermissions | None = None
    customization: StorageClassCustomization | None = None
