"""Assets: environments and compute resources, a stream each, scope fixed at creation. Rules
relating fields live here (one field's alone in domain/specs.py), each refusal naming a JSON
pointer into the request. Also: services/assets.py, infra/http/assets.py."""

from collections.abc import Iterable, Sequence
from typing import Final, TypeGuard, assert_never, cast
from uuid import UUID

import msgspec

from domain import name_rules, quantities
from domain.data_sources import check_data_source
from domain.errors import DomainError, InvalidHistoryError
from domain.events import (
    AssetEvent,
    ComputeCreated,
    ComputeDeleted,
    ComputeUpdated,
    DataSourceCreated,
    DataSourceDeleted,
    DataSourceUpdated,
    EnvironmentCreated,
    EnvironmentDeleted,
    EnvironmentUpdated,
    Event,
)
from domain.mandatory_fields import pointer, unset
from domain.specs import (
    POSIX_IDS,
    SUPPLEMENTAL_GROUPS,
    AnyDataSourceSpec,
    ComputeSpec,
    EnvironmentSpec,
    ids_out_of_range,
)
from domain.values import AssetKind, AssetMeta

AssetSpec = EnvironmentSpec | ComputeSpec | AnyDataSourceSpec
DESCRIPTION_MAX: Final = 250


class Asset(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    kind: AssetKind
    meta: AssetMeta
    spec: AssetSpec
    deleted: bool = False
    version: int = 0  # how many events the stream holds (Run:ai's updateCount)


class InvalidAssetError(DomainError):
    slug = "invalid-asset"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


class AssetNotFoundError(DomainError):
    slug = "asset-not-found"

    def __init__(self, kind: str, asset_id: UUID) -> None:
        super().__init__(f"{kind} {asset_id} does not exist")
        self.kind = kind
        self.asset_id = asset_id


class AssetExistsError(DomainError):
    slug = "asset-exists"

    def __init__(self, asset_id: UUID) -> None:
        super().__init__(f"asset {asset_id} exists already")
        self.asset_id = asset_id


class AssetInUseError(DomainError):
    slug = "asset-in-use"

    def __init__(self, kind: AssetKind, asset_id: UUID, users: Sequence[str]) -> None:
        super().__init__(f"{kind} {asset_id} is in use by: {', '.join(users)}")
        self.kind = kind
        self.asset_id = asset_id
        self.users = ", ".join(users)


def kind_of(spec: AssetSpec) -> AssetKind:
    if isinstance(spec, EnvironmentSpec):
        return "environment"
    if isinstance(spec, ComputeSpec):
        return "compute"
    tag = type(spec).__struct_config__.tag
    assert isinstance(tag, str)
    return cast(AssetKind, tag)


def evolve(state: Asset | None, event: AssetEvent) -> Asset:
    """Apply one past event. Total over AssetEvent: a missing case fails mypy."""
    match event:
        case EnvironmentCreated() | ComputeCreated() | DataSourceCreated():
            return Asset(
                id=event.asset_id, kind=kind_of(event.spec), meta=event.meta, spec=event.spec
            )
        case EnvironmentUpdated() | ComputeUpdated() | DataSourceUpdated():
            if state is None:
                raise InvalidHistoryError(f"{type(event).__name__} before the asset's creation")
            meta = msgspec.structs.replace(
                state.meta, name=event.name, description=event.description
            )
            return msgspec.structs.replace(state, meta=meta, spec=event.spec)
        case EnvironmentDeleted() | ComputeDeleted() | DataSourceDeleted():
            if state is None:
                raise InvalidHistoryError(f"{type(event).__name__} before the asset's creation")
            return msgspec.structs.replace(state, deleted=True)
        case _:
            assert_never(event)


_ASSET_EVENTS: Final = (
    EnvironmentCreated,
    EnvironmentUpdated,
    EnvironmentDeleted,
    ComputeCreated,
    ComputeUpdated,
    ComputeDeleted,
    DataSourceCreated,
    DataSourceUpdated,
    DataSourceDeleted,
)


def is_asset_event(event: Event) -> TypeGuard[AssetEvent]:
    return isinstance(event, _ASSET_EVENTS)


def fold(events: Iterable[Event]) -> Asset | None:
    state: Asset | None = None
    count = 0
    for event in events:
        if not is_asset_event(event):
            raise InvalidHistoryError(f"{type(event).__name__} in an asset stream")
        state = evolve(state, event)
        count += 1
    return None if state is None else msgspec.structs.replace(state, version=count)


def live(state: Asset | None, kind: AssetKind, asset_id: UUID) -> Asset:
    if state is None or state.deleted or state.kind != kind:
        raise AssetNotFoundError(kind, asset_id)
    return state


def create(
    state: Asset | None, asset_id: UUID, meta: AssetMeta, spec: AssetSpec
) -> list[AssetEvent]:
    if state is not None:
        raise AssetExistsError(asset_id)
    _check_meta(meta, spec)
    _check_spec(spec, meta)
    match spec:
        case EnvironmentSpec():
            return [EnvironmentCreated(asset_id=asset_id, meta=meta, spec=spec)]
        case ComputeSpec():
            return [ComputeCreated(asset_id=asset_id, meta=meta, spec=spec)]
        case _:
            return [DataSourceCreated(asset_id=asset_id, meta=meta, spec=spec)]


def update(
    state: Asset | None,
    asset_id: UUID,
    *,
    name: str,
    description: str | None,
    spec: AssetSpec,
) -> list[AssetEvent]:
    """Replace name, description and spec; an unchanged asset writes nothing."""
    current = live(state, kind_of(spec), asset_id)
    meta = msgspec.structs.replace(current.meta, name=name, description=description)
    _check_meta(meta, spec)
    _check_spec(spec, meta)
    if (current.meta, current.spec) == (meta, spec):  # the version is not compared
        return []
    match spec:
        case EnvironmentSpec():
            return [
                EnvironmentUpdated(asset_id=asset_id, name=name, description=description, spec=spec)
            ]
        case ComputeSpec():
            return [
                ComputeUpdated(asset_id=asset_id, name=name, description=description, spec=spec)
            ]
        case _:
            return [
                DataSourceUpdated(asset_id=asset_id, name=name, description=description, spec=spec)
            ]


def delete(state: Asset | None, kind: AssetKind, asset_id: UUID) -> list[AssetEvent]:
    """A deleted asset is a no-op. Whether something still uses it is decided where the
    deletion is written, in its transaction (AssetInUseError, `Uses`)."""
    if state is not None and state.deleted and state.kind == kind:
        return []
    live(state, kind, asset_id)
    if kind == "environment":
        return [EnvironmentDeleted(asset_id=asset_id)]
    if kind == "compute":
        return [ComputeDeleted(asset_id=asset_id)]
    return [DataSourceDeleted(asset_id=asset_id)]


def check_name(meta: AssetMeta) -> None:
    """Every asset kind's name and description rules."""
    name_rules.check(meta.name, "/meta/name", refused=InvalidAssetError)
    if meta.description is not None and not 1 <= len(meta.description) <= DESCRIPTION_MAX:
        raise InvalidAssetError("/meta/description", f"must be 1 to {DESCRIPTION_MAX} characters")


def _check_meta(meta: AssetMeta, spec: AssetSpec) -> None:
    check_name(meta)
    if meta.private:
        raise InvalidAssetError("/meta/private", f"a {kind_of(spec)} cannot be private")
    types = meta.workload_supported_types
    if types is None:
        return
    if types.dist_framework is not None and not types.distributed:
        raise InvalidAssetError(
            "/meta/workloadSupportedTypes/distFramework", "needs distributed: true"
        )
    if types.distributed and types.dist_framework is None:
        raise InvalidAssetError(
            "/meta/workloadSupportedTypes/distFramework", "a distributed asset names its framework"
        )


def _check_spec(spec: AssetSpec, meta: AssetMeta) -> None:
    missing = unset(spec)
    if missing is not None:
        raise InvalidAssetError(pointer("/spec", missing[0]), missing[1])
    match spec:
        case EnvironmentSpec():
            _check_environment(spec)
        case ComputeSpec():
            check_compute(spec)
        case _:
            check_data_source(spec)


def _check_environment(spec: EnvironmentSpec) -> None:
    if not spec.image:
        raise InvalidAssetError("/spec/image", "an environment needs an image")
    seen: set[str] = set()
    for i, variable in enumerate(spec.environment_variables or ()):
        at = f"/spec/environmentVariables/{i}"
        sources = [
            s
            for s in (
                variable.value,
                variable.credential,
                variable.config_map,
                variable.pod_field_ref,
            )
            if s is not None
        ]
        if len(sources) != 1 and not variable.exclude:
            raise InvalidAssetError(
                at, "give exactly one of value, credential, configMap and podFieldRef"
            )
        if variable.name in seen:
            raise InvalidAssetError(f"{at}/name", f"{variable.name!r} is set twice")
        seen.add(variable.name)
    if spec.uid_gid_source != "custom":
        for field, value in (
            ("runAsUid", spec.run_as_uid),
            ("runAsGid", spec.run_as_gid),
            ("supplementalGroups", spec.supplemental_groups),
        ):
            if value is not None:
                raise InvalidAssetError(f"/spec/{field}", "needs uidGidSource: custom")
    else:  # the guide: with Custom, "you'll need to manually enter the UID, GID ..."
        for field, given in (("runAsUid", spec.run_as_uid), ("runAsGid", spec.run_as_gid)):
            if given is None:
                raise InvalidAssetError(f"/spec/{field}", "required with uidGidSource: custom")
            if given not in POSIX_IDS:
                raise InvalidAssetError(f"/spec/{field}", f"an id from 0 to {POSIX_IDS[-1]}")
        groups = spec.supplemental_groups
        if groups is not None and not SUPPLEMENTAL_GROUPS.match(groups):
            raise InvalidAssetError(
                "/spec/supplementalGroups", "group ids separated by commas, e.g. 2,3,5"
            )
        if groups is not None and ids_out_of_range(groups):
            raise InvalidAssetError(
                "/spec/supplementalGroups", f"group ids from 0 to {POSIX_IDS[-1]}"
            )
    if spec.seccomp_profile_type == "Localhost":
        raise InvalidAssetError("/spec/seccompProfileType", "Localhost profiles are not supported")
    if spec.tty and not spec.stdin:
        raise InvalidAssetError("/spec/tty", "a TTY needs stdin: true")
    _check_connections(spec)


def _check_connections(spec: EnvironmentSpec) -> None:
    names: set[str] = set()
    for i, connection in enumerate(spec.connections or ()):
        at = f"/spec/connections/{i}"
        if connection.name in names:
            raise InvalidAssetError(f"{at}/name", f"{connection.name!r} is used twice")
        names.add(connection.name)
        internal, external = connection.internal_tool_info, connection.external_tool_info
        if connection.is_external:
            if external is None or internal is not None:
                raise InvalidAssetError(at, "an external connection has externalToolInfo only")
            continue
        if internal is None or external is not None:
            raise InvalidAssetError(at, "an internal connection has internalToolInfo only")
        extras = {
            "nodePortInfo": (internal.node_port_info, "NodePort"),
            "externalUrlInfo": (internal.external_url_info, "ExternalUrl"),
            "servingPortInfo": (internal.serving_port_info, "ServingPort"),
        }
        for field, (info, connection_type) in extras.items():
            if info is not None and internal.connection_type != connection_type:
                raise InvalidAssetError(
                    f"{at}/internalToolInfo/{field}", f"only with connectionType {connection_type}"
                )


def check_compute(spec: ComputeSpec, at: str = "/spec") -> None:
    """The compute rules; `at` is where the compute fields sit in the request."""
    devices = spec.gpu_devices_request
    has_portion = spec.gpu_portion_request is not None or spec.gpu_portion_limit is not None
    has_memory = spec.gpu_memory_request is not None or spec.gpu_memory_limit is not None
    match spec.gpu_request_type:
        case "portion":
            if spec.gpu_portion_request is None:
                raise InvalidAssetError(f"{at}/gpuPortionRequest", "needed for a portion request")
            if has_memory:
                raise InvalidAssetError(f"{at}/gpuMemoryRequest", "not with gpuRequestType portion")
        case "memory":
            if spec.gpu_memory_request is None:
                raise InvalidAssetError(f"{at}/gpuMemoryRequest", "needed for a memory request")
            if has_portion:
                raise InvalidAssetError(f"{at}/gpuPortionRequest", "not with gpuRequestType memory")
            if devices != 1:
                raise InvalidAssetError(
                    f"{at}/gpuDevicesRequest", "a GPU memory request is for 1 device"
                )
        case None:
            if has_portion or has_memory:
                raise InvalidAssetError(f"{at}/gpuRequestType", "say portion or memory")
    if (has_portion or has_memory) and not devices:
        raise InvalidAssetError(f"{at}/gpuDevicesRequest", "a GPU fraction needs a device")
    # A fraction is some of a device (the guide's "% of device" is 1 to 100): none of it would
    # ask the scheduler for a GPU share of nothing.
    if spec.gpu_request_type == "portion" and spec.gpu_portion_request == 0:
        raise InvalidAssetError(f"{at}/gpuPortionRequest", "more than 0 of a device")
    memory = _quantity(spec.gpu_memory_request, f"{at}/gpuMemoryRequest")
    if spec.gpu_request_type == "memory" and memory == 0:
        raise InvalidAssetError(f"{at}/gpuMemoryRequest", "more than 0 of a device's memory")
    # Extended resources are "resource/quantity pairs": one without a quantity asks for nothing.
    for i, extended in enumerate(spec.extended_resources or ()):
        if extended.quantity is None and not extended.exclude:
            raise InvalidAssetError(f"{at}/extendedResources/{i}/quantity", "required")
    _at_least(spec.gpu_portion_limit, spec.gpu_portion_request, f"{at}/gpuPortion")
    _at_least(spec.cpu_core_limit, spec.cpu_core_request, f"{at}/cpuCore")
    for name, limit, request in (
        ("gpuMemory", spec.gpu_memory_limit, spec.gpu_memory_request),
        ("cpuMemory", spec.cpu_memory_limit, spec.cpu_memory_request),
    ):
        _at_least(
            _quantity(limit, f"{at}/{name}Limit"),
            _quantity(request, f"{at}/{name}Request"),
            f"{at}/{name}",
        )


def _quantity(value: str | None, name: str) -> float | None:
    if value is None:
        return None
    try:
        return float(quantities.parse(value))
    except quantities.InvalidQuantityError:
        raise InvalidAssetError(name, f"{value!r} is not a quantity") from None


def _at_least(limit: float | None, request: float | None, name: str) -> None:
    if limit is not None and request is not None and limit < request:
        raise InvalidAssetError(
            f"{name}Limit", f"the limit is below {name.rsplit('/', 1)[-1]}Request"
        )
