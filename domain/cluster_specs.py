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
