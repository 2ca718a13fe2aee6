"""Storage classes: what a cluster reports of its StorageClasses (a stream per class, found from
the cluster and the name) and how its admins configure each (a stream per configuration). Also:
domain/storage_rules.py, services/storage_classes.py, infra/http/storage_classes.py."""

from collections.abc import Iterable
from decimal import Decimal
from typing import Final, TypeVar, assert_never
from uuid import UUID, uuid5

import msgspec

from domain import name_rules, quantities
from domain.cluster_specs import (
    OBJECT_NAME,
    StorageClassCustomization,
    StorageClassRules,
    StorageClassSpec,
)
from domain.errors import DomainError, InvalidHistoryError
from domain.events import (
    Event,
    StorageClassConfigurationCreated,
    StorageClassConfigurationDeleted,
    StorageClassConfigurationEvent,
    StorageClassConfigurationUpdated,
    StorageClassEvent,
    StorageClassRegistered,
    StorageClassRemoved,
)

Part = TypeVar("Part", bound=msgspec.Struct)
_STREAMS: Final = UUID("0b6f3c1e-5a2d-4e7b-8c9f-1d2e3f4a5b6c")
NAME: Final = name_rules.NameRule(
    253, OBJECT_NAME, "a Kubernetes object's name: lowercase letters, digits, '-' and '.'"
)
# Run:ai's class for a PVC bound to a volume made beforehand (static provisioning): no class.
NONE: Final = "runai-none"


class StorageClass(msgspec.Struct, frozen=True, kw_only=True):
    cluster_id: UUID
    name: str
    spec: StorageClassSpec
    removed: bool = False


class StorageClassConfiguration(msgspec.Struct, frozen=True, kw_only=True):
    id: UUID
    cluster_id: UUID
    name: str
    rules: StorageClassRules
    deleted: bool = False


class StorageClassNotFoundError(DomainError):
    slug = "storage-class-not-found"

    def __init__(self, cluster_id: UUID, name: str) -> None:
        super().__init__(f"cluster {cluster_id} has no storage class {name!r}")
        self.cluster_id = str(cluster_id)
        self.name = name


class ConfigurationNotFoundError(DomainError):
    slug = "storage-class-configuration-not-found"

    def __init__(self, configuration_id: UUID | str) -> None:
        super().__init__(f"storage class configuration {configuration_id} does not exist")
        self.configuration_id = str(configuration_id)


class InvalidStorageClassError(DomainError):
    slug = "invalid-storage-class"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


class InvalidConfigurationError(DomainError):
    slug = "invalid-storage-class-configuration"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


def stream_of(cluster_id: UUID, name: str) -> UUID:
    """The stream of a cluster's class: registering it again continues its history."""
    return uuid5(_STREAMS, f"{cluster_id}/{name}")


def class_namespace(cluster_id: UUID) -> str:
    """The names of a cluster's registered classes (none: no class name is checked there)."""
    return f"storageclass@cluster:{cluster_id}"


def configuration_namespace(cluster_id: UUID) -> str:
    """One configuration per class of a cluster: its stream holds the class's name here."""
    return f"storageclassconfig@cluster:{cluster_id}"


def evolve(state: StorageClass | None, event: StorageClassEvent) -> StorageClass:
    match event:
        case StorageClassRegistered():
            return StorageClass(cluster_id=event.cluster_id, name=event.name, spec=event.spec)
        case StorageClassRemoved():
            if state is None:
                raise InvalidHistoryError("storageclass.removed before it was registered")
            return msgspec.structs.replace(state, removed=True)
        case _:
            assert_never(event)


def fold(events: Iterable[Event]) -> StorageClass | None:
    state: StorageClass | None = None
    for event in events:
        if not isinstance(event, StorageClassRegistered | StorageClassRemoved):
            raise InvalidHistoryError(f"{type(event).__name__} in a storage class stream")
        state = evolve(state, event)
    return state


def register(
    state: StorageClass | None, cluster_id: UUID, name: str, spec: StorageClassSpec
) -> list[StorageClassEvent]:
    """The class as the cluster now reports it; reported unchanged, nothing."""
    name_rules.check(name, "/storageClassName", NAME, refused=InvalidStorageClassError)
    if state is not None and not state.removed and state.spec == spec:
        return []
    return [StorageClassRegistered(cluster_id=cluster_id, name=name, spec=spec)]


def remove(state: StorageClass | None, cluster_id: UUID, name: str) -> list[StorageClassEvent]:
    if state is None or state.removed:
        raise StorageClassNotFoundError(cluster_id, name)
    return [StorageClassRemoved(cluster_id=cluster_id, name=name)]


def evolve_configuration(
    state: StorageClassConfiguration | None, event: StorageClassConfigurationEvent
) -> StorageClassConfiguration:
    match event:
        case StorageClassConfigurationCreated():
            return StorageClassConfiguration(
                id=event.configuration_id,
                cluster_id=event.cluster_id,
                name=event.name,
                rules=event.rules,
            )
        case StorageClassConfigurationUpdated():
            return msgspec.structs.replace(_existing(state, event), rules=event.rules)
        case StorageClassConfigurationDeleted():
            return msgspec.structs.replace(_existing(state, event), deleted=True)
        case _:
            assert_never(event)


def _existing(state: StorageClassConfiguration | None, event: Event) -> StorageClassConfiguration:
    if state is None:
        raise InvalidHistoryError(f"{type(event).__name__} before the configuration was created")
    return state


_CONFIGURATION_EVENTS: Final = (
    StorageClassConfigurationCreated,
    StorageClassConfigurationUpdated,
    StorageClassConfigurationDeleted,
)


def fold_configuration(events: Iterable[Event]) -> StorageClassConfiguration | None:
    state: StorageClassConfiguration | None = None
    for event in events:
        if not isinstance(event, _CONFIGURATION_EVENTS):
            raise InvalidHistoryError(f"{type(event).__name__} in a configuration stream")
        state = evolve_configuration(state, event)
    return state


def live(
    state: StorageClassConfiguration | None, configuration_id: UUID
) -> StorageClassConfiguration:
    if state is None or state.deleted:
        raise ConfigurationNotFoundError(configuration_id)
    return state


def configure(
    state: StorageClassConfiguration | None,
    configuration_id: UUID,
    *,
    cluster_id: UUID,
    name: str,
    rules: StorageClassRules,
) -> list[StorageClassConfigurationEvent]:
    if state is not None:
        raise InvalidConfigurationError("/name", "a configuration of this id exists already")
    check_rules(rules)
    return [
        StorageClassConfigurationCreated(
            configuration_id=configuration_id, cluster_id=cluster_id, name=name, rules=rules
        )
    ]


def reconfigure(
    state: StorageClassConfiguration | None, configuration_id: UUID, rules: StorageClassRules
) -> list[StorageClassConfigurationEvent]:
    """The rules replaced; unchanged, nothing."""
    current = live(state, configuration_id)
    check_rules(rules)
    if current.rules == rules:
        return []
    return [StorageClassConfigurationUpdated(configuration_id=configuration_id, rules=rules)]


def delete_configuration(
    state: StorageClassConfiguration | None, configuration_id: UUID
) -> list[StorageClassConfigurationEvent]:
    live(state, configuration_id)
    return [StorageClassConfigurationDeleted(configuration_id=configuration_id)]


def patched(
    current: StorageClassRules, patch: StorageClassRules, remove_attributes: Iterable[str]
) -> StorageClassRules:
    """Run:ai's PATCH: what is given replaces the current rules member by member, into each
    part; attributes given replace those of their keys, `remove_attributes` drop some."""
    permissions = _merged(current.permissions, patch.permissions)
    customization = _merged(current.customization, patch.customization)
    if customization is not None:
        kept = {
            a.key: a for a in (current.customization and current.customization.attributes) or ()
        }
        kept.update(
            {a.key: a for a in (patch.customization and patch.customization.attributes) or ()}
        )
        for key in remove_attributes:
            kept.pop(key, None)
        customization = msgspec.structs.replace(
            customization, attributes=tuple(kept.values()) or None
        )
    return StorageClassRules(permissions=permissions, customization=customization)


def _merged(current: Part | None, given: Part | None) -> Part | None:
    """`given` over `current`, member by member and into each part (a member not given stays)."""
    if given is None or current is None:
        return given if given is not None else current
    changed = {}
    for field, value in msgspec.structs.asdict(given).items():
        if value is None:
            continue
        now = getattr(current, field)
        both = isinstance(value, msgspec.Struct) and isinstance(now, msgspec.Struct)
        changed[field] = _merged(now, value) if both else value
    return msgspec.structs.replace(current, **changed)


def check_rules(rules: StorageClassRules) -> None:
    """What a configuration may say: a size range that holds its default, on its step, defaults
    among the supported values."""
    custom = rules.customization or StorageClassCustomization()
    at = "/customization"
    size = custom.claim_size
    if size is not None:
        low, high = _bytes(size.min, f"{at}/claimSize/min"), _bytes(size.max, f"{at}/claimSize/max")
        if low is not None and high is not None and low > high:
            raise InvalidConfigurationError(f"{at}/claimSize/min", "above the maximum")
        default = _bytes(size.default, f"{at}/claimSize/default")
        if default is not None and (
            (low is not None and default < low) or (high is not None and default > high)
        ):
            raise InvalidConfigurationError(f"{at}/claimSize/default", "outside min and max")
        step = _bytes(size.step, f"{at}/claimSize/step")
        if step is not None and step <= 0:
            raise InvalidConfigurationError(f"{at}/claimSize/step", "not above zero")
        start = low if low is not None else Decimal(0)
        if step and default is not None and not quantities.is_multiple(default - start, step):
            raise InvalidConfigurationError(
                f"{at}/claimSize/default", "not min (or 0) plus a multiple of the step"
            )
    modes = custom.access_mode
    if modes is not None and modes.default is not None and modes.supported_values is not None:
        for field in msgspec.structs.fields(modes.default):
            if (
                getattr(modes.default, field.name)
                and getattr(modes.supported_values, field.name) is False
            ):
                raise InvalidConfigurationError(
                    f"{at}/accessMode/default/{field.encode_name}", "not a supported value"
                )
    volume = custom.volume_mode
    supported = None if volume is None else volume.supported_values
    mode = None if volume is None else volume.default
    if supported is not None and mode is not None and getattr(supported, mode.lower()) is False:
        raise InvalidConfigurationError(f"{at}/volumeMode/default", "not a supported value")


def _bytes(quantity: str | None, field: str) -> Decimal | None:
    try:
        return None if quantity is None else quantities.parse(quantity)
    except quantities.InvalidQuantityError:
        raise InvalidConfigurationError(field, f"{quantity!r} is no quantity") from None
