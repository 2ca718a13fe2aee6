"""What a new PVC may ask of its storage class (a template's volume, a PVC data source, a
submission's): a class its cluster has, used where the class's configuration allows, with access
modes, a volume mode and a size it supports; what it leaves out, the configuration's defaults."""

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Final, Literal, TypeVar

import msgspec

from domain import quantities
from domain.cluster_specs import (
    StorageClassCustomization,
    StorageClassPermissions,
    StorageClassRules,
)
from domain.specs import AccessModes, ClaimInfo, PvcSpec
from domain.storage_classes import NONE
from domain.template_specs import PvcVolume, ReplicaSpec

Use = Literal["workload", "asset"]
Issue = tuple[str, str]  # the field at fault, and why
Replica = TypeVar("Replica", bound=ReplicaSpec)
Volume = TypeVar("Volume", PvcVolume, PvcSpec)
# Run:ai's size units, as a Kubernetes quantity writes them.
UNITS: Final = {"M": "MB", "Mi": "MiB", "G": "GB", "Gi": "GiB", "T": "TB", "Ti": "TiB"}
# What `class_of` answers for a new PVC naming no class: Kubernetes binds it to the cluster's
# default class (`StorageFacts.default`).
DEFAULT: Final = ""
_MODES: Final = (
    ("read_write_once", "readWriteOnce"),
    ("read_only_many", "readOnlyMany"),
    ("read_write_many", "readWriteMany"),
)


class StorageFacts(msgspec.Struct, frozen=True, kw_only=True):
    """A cluster's registered classes (None: none registered, so no name is checked), the
    configurations of its classes, by class name, and its default class (None: none)."""

    classes: frozenset[str] | None = None
    rules: Mapping[str, StorageClassRules] = msgspec.field(default_factory=dict)
    default: str | None = None


def class_of(volume: PvcVolume | PvcSpec) -> str | None:
    """The class a volume makes a new PVC of: the one it names, DEFAULT when it names none;
    None when it makes none (an existing claim, `runai-none`)."""
    if volume.existing_pvc or volume.claim_info is None or getattr(volume, "exclude", False):
        return None
    name = volume.claim_info.storage_class
    return DEFAULT if name is None else None if name == NONE else name


def default_of(defaults: Iterable[str]) -> str | None:
    """The cluster's default among the classes marked so. Kubernetes takes the newest of
    several, which is not reported: the first by name stands in (docs/decisions/0037)."""
    return min(defaults, default=None)


def named_in(specs: Iterable[tuple[str, ReplicaSpec | None]]) -> set[str]:
    return {
        name
        for _, spec in specs
        if spec is not None and spec.storage is not None
        for volume in spec.storage.pvc or ()
        if (name := class_of(volume)) is not None
    }


def volume_checked(
    volume: Volume, at: str, facts: StorageFacts, use: Use
) -> tuple[Volume, list[Issue]]:
    """The volume with its class's defaults for what it leaves out, and what it asks that its
    class does not allow (`use`: in a workload, or as an asset). Naming no class, its class is
    the cluster's default, as Kubernetes binds it (none: nothing is checked)."""
    named = class_of(volume)
    name = facts.default if named == DEFAULT else named
    if name is None:
        return volume, []
    label = f"the default class {name!r}" if named == DEFAULT else repr(name)
    if named != DEFAULT and facts.classes is not None and name not in facts.classes:
        return volume, [
            (f"{at}/claimInfo/storageClass", f"the cluster has no storage class {name!r}")
        ]
    rules = facts.rules.get(name)
    if rules is None:
        return volume, []
    issues = _permitted(volume, at, label, rules.permissions or StorageClassPermissions(), use)
    assert volume.claim_info is not None  # class_of found one
    claim = _defaulted(volume.claim_info, rules.customization or StorageClassCustomization())
    issues += _fits(
        claim, f"{at}/claimInfo", label, rules.customization or StorageClassCustomization()
    )
    return msgspec.structs.replace(volume, claim_info=claim), issues


def spec_checked(
    spec: Replica | None, at: str, facts: StorageFacts, use: Use = "workload"
) -> tuple[Replica | None, list[Issue]]:
    """A replica spec's new volumes (`storage.pvc`), each `volume_checked`."""
    if spec is None or spec.storage is None or not spec.storage.pvc:
        return spec, []
    volumes, issues = [], []
    for i, volume in enumerate(spec.storage.pvc):
        checked, found = volume_checked(volume, f"{at}/storage/pvc/{i}", facts, use)
        volumes.append(checked)
        issues += found
    storage = msgspec.structs.replace(spec.storage, pvc=tuple(volumes))
    return msgspec.structs.replace(spec, storage=storage), issues


def _permitted(
    volume: PvcVolume | PvcSpec, at: str, label: str, allowed: StorageClassPermissions, use: Use
) -> list[Issue]:
    found = []
    if use == "workload" and allowed.allowed_for_workloads is False:
        found.append((f"{at}/claimInfo/storageClass", f"{label} is not for workloads' volumes"))
    if use == "asset" and allowed.allowed_for_assets is False:
        found.append((f"{at}/claimInfo/storageClass", f"{label} is not for data sources"))
    if volume.ephemeral and allowed.allowed_for_ephemeral_volumes is False:
        found.append((f"{at}/ephemeral", f"{label} makes no ephemeral volumes"))
    if not volume.ephemeral and allowed.allowed_for_persistent_volumes is False:
        found.append((f"{at}/ephemeral", f"{label} makes no persistent volumes"))
    if volume.data_sharing and allowed.allow_data_sharing is False:
        found.append((f"{at}/dataSharing", f"{label} shares no volumes"))
    return found


def _defaulted(claim: ClaimInfo, custom: StorageClassCustomization) -> ClaimInfo:
    changes: dict[str, object] = {}
    modes = custom.access_mode
    if claim.access_modes is None and modes is not None and modes.default is not None:
        given = {field: bool(getattr(modes.default, field)) for field, _ in _MODES}
        changes["access_modes"] = AccessModes(**given)
    volume = custom.volume_mode
    if claim.volume_mode is None and volume is not None and volume.default is not None:
        changes["volume_mode"] = volume.default
    size = custom.claim_size
    if claim.size is None and size is not None and size.default is not None:
        changes["size"] = size.default
    return msgspec.structs.replace(claim, **changes) if changes else claim


def _fits(claim: ClaimInfo, at: str, label: str, custom: StorageClassCustomization) -> list[Issue]:
    found: list[Issue] = []
    modes = custom.access_mode
    if modes is not None:
        if claim.access_modes is None and modes.required:
            found.append((f"{at}/accessModes", f"{label} needs an access mode"))
        supported = modes.supported_values
        for field, wire in _MODES if claim.access_modes is not None and supported else ():
            if getattr(claim.access_modes, field) and getattr(supported, field) is False:
                found.append((f"{at}/accessModes/{wire}", f"{label} does not support {wire}"))
    volume = custom.volume_mode
    if volume is not None:
        if claim.volume_mode is None and volume.required:
            found.append((f"{at}/volumeMode", f"{label} needs a volume mode"))
        supported_modes, mode = volume.supported_values, claim.volume_mode
        if mode is not None and getattr(supported_modes, mode.lower(), None) is False:
            found.append((f"{at}/volumeMode", f"{label} does not support {mode}"))
    if custom.claim_size is not None and claim.size is not None:
        found += _sized(claim.size, f"{at}/size", label, custom)
    return found


def _sized(size: str, at: str, label: str, custom: StorageClassCustomization) -> list[Issue]:
    rule = custom.claim_size
    assert rule is not None
    suffix = re.sub(r"^[+]?[0-9.]+", "", size)
    if rule.supported_units and UNITS.get(suffix) not in rule.supported_units:
        units = ", ".join(rule.supported_units)
        return [(at, f"{label} takes sizes in {units}")]
    value, low, high = (_value(q) for q in (size, rule.min, rule.max))
    if value is None:
        return []  # no quantity: the template's own rules refuse it
    if (low is not None and value < low) or (high is not None and value > high):
        return [(at, f"{label} takes sizes from {rule.min or 0} to {rule.max or 'any'}")]
    step, start = _value(rule.step), low if low is not None else Decimal(0)
    if step is not None and step > 0 and not quantities.is_multiple(value - start, step):
        return [(at, f"{label} takes sizes of {rule.min or 0} plus a multiple of {rule.step}")]
    return []


def _value(quantity: str | None) -> Decimal | None:
    try:
        return None if quantity is None else quantities.parse(quantity)
    except quantities.InvalidQuantityError:
        return None
