"""Tenant settings that change what templates and workloads may contain (reference §16): boolean
keys with Run:ai's defaults and `workloads.maxWorkers` (docs/api/organization.md). Also:
services/tenant_settings.py, projections/tenant_settings.py, infra/http/tenant_settings.py."""

import re
from collections.abc import Iterable, Mapping
from typing import Final
from uuid import UUID

import msgspec

from domain.errors import DomainError, InvalidHistoryError
from domain.events import Event, TenantLimitChanged, TenantSettingChanged
from domain.specs import ComputeSpec
from domain.template_specs import DistributedTemplateSpec, ReplicaSpec

# The one stream that holds every tenant setting.
STREAM: Final = UUID("0a7c3e55-2b1d-4f6e-9c8a-5d4e3f2a1b0c")
FRAMEWORKS: Final = ("MPI", "PyTorch", "TF", "XGBoost", "JAX")
FLEXIBLE_SUBMISSION: Final = "workloads.flexibleWorkloadSubmission"
FLEXIBLE_TEMPLATES: Final = "workloads.flexibleTemplates"
NGC_CATALOG: Final = "workloads.ngcCatalog"
DATA_VOLUMES: Final = "workloads.dataVolumes"
GPU_OPTIMIZATION: Final = "resources.gpuResourceOptimization"
MAX_WORKERS: Final = "workloads.maxWorkers"
_CLUSTER_KEY: Final = re.compile(
    r"^clusters\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"\.distributedFrameworks\.(MPI|PyTorch|TF|XGBoost|JAX)$"
)


class Described(msgspec.Struct, frozen=True, kw_only=True):
    """What the settings list says of a setting, whatever its value's type."""

    category: str
    label: str
    description: str
    stage: str = "GA"


class SettingInfo(Described, frozen=True, kw_only=True):
    default: bool


FIXED: Final[Mapping[str, SettingInfo]] = {
    FLEXIBLE_SUBMISSION: SettingInfo(
        default=True, category="Workloads", label="Flexible workload submission",
        description="Submit workloads from templates; templates apply only to it",
    ),
    FLEXIBLE_TEMPLATES: SettingInfo(
        default=True, category="Workloads", label="Flexible workload templates",
        description="Create and change distributed templates; off, existing ones stay readable",
    ),
    NGC_CATALOG: SettingInfo(
        default=False, category="Workloads", label="NGC catalog", stage="Beta",
        description="Choose a template's image from the NGC catalog (imageSource ngcCatalog)",
    ),
    DATA_VOLUMES: SettingInfo(
        default=True, category="Workloads", label="Data volumes",
        description="Mount data volumes (storage.dataVolume) in templates",
    ),
    GPU_OPTIMIZATION: SettingInfo(
        default=False, category="Resources", label="GPU resource optimization", stage="Beta",
        description="Set GPU portion and memory limits above the requests",
    ),
    **{
        f"workloads.distributedFrameworks.{framework}": SettingInfo(
            default=True, category="Workloads", label=f"Distributed training with {framework}",
            description=f"Templates and workloads may use {framework}",
        )
        for framework in FRAMEWORKS
    },
}  # fmt: skip


class LimitInfo(Described, frozen=True, kw_only=True):
    default: int
    low: int
    high: int


LIMITS: Final[Mapping[str, LimitInfo]] = {
    MAX_WORKERS: LimitInfo(
        default=1_000, low=1, high=10_000, category="Workloads", label="Maximum workers",
        description="The most workers (numWorkers, maxReplicas) a template or workload may ask for",
    ),
}  # fmt: skip


class TenantSettings(msgspec.Struct, frozen=True):
    values: dict[str, bool] = msgspec.field(default_factory=dict)
    limits: dict[str, int] = msgspec.field(default_factory=dict)

    def get(self, key: str) -> bool:
        if key in self.values:
            return self.values[key]
        return info_of(key).default

    def limit(self, key: str) -> int:
        if key not in LIMITS:
            raise UnknownSettingError(key)
        return self.limits.get(key, LIMITS[key].default)

    def allows_framework(self, framework: str | None, cluster_id: UUID | None) -> bool:
        if framework is None:
            return True
        if not self.get(f"workloads.distributedFrameworks.{framework}"):
            return False
        cluster_key = f"clusters.{cluster_id}.distributedFrameworks.{framework}"
        return cluster_id is None or self.values.get(cluster_key, True)


DEFAULTS: Final = TenantSettings()


class UnknownSettingError(DomainError):
    slug = "unknown-setting"

    def __init__(self, key: str) -> None:
        super().__init__(f"no tenant setting {key!r}")
        self.key = key
        self.field = "/key"


class InvalidSettingValueError(DomainError):
    slug = "invalid-setting-value"

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"tenant setting {key}: {reason}")
        self.key = key
        self.field = "/value"


class LimitExceededError(DomainError):
    """A request asks for more than a tenant limit allows; `field` points at what it asks."""

    slug = "limit-exceeded"

    def __init__(self, setting: str, field: str, asked: int, limit: int) -> None:
        super().__init__(f"{field}: {asked} is more than {limit} (tenant setting {setting})")
        self.setting = setting
        self.field = field
        self.asked = asked
        self.limit = limit


class FeatureDisabledError(DomainError):
    """What a request needs is turned off by a tenant setting; `field` points at it."""

    slug = "feature-disabled"

    def __init__(self, setting: str, field: str, what: str) -> None:
        super().__init__(f"{field}: {what} is turned off (tenant setting {setting})")
        self.setting = setting
        self.field = field


def info_of(key: str) -> SettingInfo:
    if key in FIXED:
        return FIXED[key]
    match = _CLUSTER_KEY.match(key)
    if match is None:
        raise UnknownSettingError(key)
    return SettingInfo(
        default=True,
        category="Clusters",
        label=f"Distributed training with {match.group(2)} on cluster {match.group(1)}",
        description=f"Templates and workloads of this cluster may use {match.group(2)}",
    )


def fold(events: Iterable[Event]) -> TenantSettings:
    values: dict[str, bool] = {}
    limits: dict[str, int] = {}
    for event in events:
        match event:
            case TenantSettingChanged():
                values[event.key] = event.value
            case TenantLimitChanged():
                limits[event.key] = event.value
            case _:
                raise InvalidHistoryError(f"{type(event).__name__} in the settings stream")
    return TenantSettings(values, limits)


def change(
    state: TenantSettings, key: str, value: bool | int
) -> list[TenantSettingChanged | TenantLimitChanged]:
    """A switch takes true or false; a limit a whole number within its bounds."""
    if key in LIMITS:
        info = LIMITS[key]
        if isinstance(value, bool) or not info.low <= value <= info.high:
            raise InvalidSettingValueError(key, f"a whole number from {info.low} to {info.high}")
        if state.limits.get(key) == value:
            return []
        return [TenantLimitChanged(key=key, value=value)]
    info_of(key)
    if not isinstance(value, bool):
        raise InvalidSettingValueError(key, "true or false")
    if state.get(key) == value and key in state.values:
        return []
    return [TenantSettingChanged(key=key, value=value)]


def check_replica(settings: TenantSettings, at: str, spec: ReplicaSpec | None) -> None:
    """The parts of a template's replica spec that tenant settings govern."""
    if spec is None:
        return
    if spec.storage is not None and spec.storage.data_volume and not settings.get(DATA_VOLUMES):
        raise FeatureDisabledError(DATA_VOLUMES, f"{at}/storage/dataVolume", "data volumes")
    check_image_source(settings, at, spec)
    check_compute(settings, f"{at}/compute", spec.compute)


def check_image_source(settings: TenantSettings, at: str, spec: ReplicaSpec | None) -> None:
    if spec is not None and spec.image_source == "ngcCatalog" and not settings.get(NGC_CATALOG):
        raise FeatureDisabledError(NGC_CATALOG, f"{at}/imageSource", "the NGC catalog")


def check_compute(settings: TenantSettings, at: str, compute: ComputeSpec | None) -> None:
    if compute is None or settings.get(GPU_OPTIMIZATION):
        return
    for name in ("gpu_portion_limit", "gpu_memory_limit"):
        if getattr(compute, name) is not None:
            field = {"gpu_portion_limit": "gpuPortionLimit", "gpu_memory_limit": "gpuMemoryLimit"}
            raise FeatureDisabledError(GPU_OPTIMIZATION, f"{at}/{field[name]}", "GPU limits")


def check_workers(settings: TenantSettings, at: str, spec: DistributedTemplateSpec) -> None:
    """The workers a spec asks for, now (numWorkers) or at most (maxReplicas), within the
    tenant's limit: each is a process or a pod to run."""
    limit = settings.limit(MAX_WORKERS)
    for field, asked in (("numWorkers", spec.num_workers), ("maxReplicas", spec.max_replicas)):
        if asked is not None and asked > limit:
            raise LimitExceededError(MAX_WORKERS, f"{at}/{field}", asked, limit)


def check_framework(
    settings: TenantSettings, at: str, framework: str | None, cluster_id: UUID | None
) -> None:
    if not settings.allows_framework(framework, cluster_id):
        where = "" if cluster_id is None else f" on cluster {cluster_id}"
        key = f"workloads.distributedFrameworks.{framework}"
        if settings.get(key):
            key = f"clusters.{cluster_id}.distributedFrameworks.{framework}"
        raise FeatureDisabledError(key, at, f"{framework}{where}")
