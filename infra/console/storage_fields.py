"""Data & storage in the template form: the data sources a template loads (with their
per-template overrides), and what it configures once itself: EmptyDirs and new volumes (a claim
of its own, the guide's "Volume", of a class of its cluster's as its configuration allows)."""

from collections.abc import Sequence
from typing import Final

from domain.cluster_specs import (
    StorageClassCustomization,
    StorageClassPermissions,
    StorageClassRules,
)
from domain.storage_rules import Use
from infra.console.form_fields import NEW, Field, Group, numbered, spec_field
from infra.console.form_rows import Rows, rows_of
from infra.console.image_choices import Options
from projections.storage_class_catalogue import StorageClassRow

MEDIA: Final = (("", "Disk-backed storage"), ("Memory", "Memory-backed storage"))
# A new volume's access modes, each a member of the spec's claimInfo.accessModes.
ACCESS_MODES: Final = (("readWriteOnce", "Read-write by one node"),
                       ("readOnlyMany", "Read-only by many nodes"),
                       ("readWriteMany", "Read-write by many nodes"))  # fmt: skip
VOLUME_MODES: Final = (("", "Default (Filesystem)"), ("Filesystem", "Filesystem"),
                       ("Block", "Block"))  # fmt: skip
PERSISTENCY: Final = (("", "Persistent"), ("true", "Ephemeral"))
_EMPTY: Final = StorageClassRules()


def storage_fields(
    sources: Options,
    rows: Rows = NEW,
    at: str = "/spec",
    assets: str = "/assets",
    classes: Sequence[StorageClassRow] = (),
) -> tuple[Group, ...]:
    """Data sources to load (with their overrides) under `assets`, and one-time EmptyDirs and
    new volumes in the spec at `at` (the workers', or the master's), of `classes` (the cluster's:
    none, any class is typed)."""
    loaded = f"{assets}/datasources"
    empty_dir = f"{at}/storage/emptyDirVolume"
    empty_dirs = rows_of(rows, empty_dir)
    pvc = f"{at}/storage/pvc"
    volumes = rows_of(rows, pvc)
    return (
        *(
            Group(legend=f"Data source {i + 1}", fields=(
                spec_field(f"{loaded}/{i}/ref", "select", label="Data source",
                           options=(("", "None"), *sources)),
                spec_field(f"{loaded}/{i}/overrides/containerPath", label="Container path",
                           hint="Empty: the data source's own"),
                spec_field(f"{loaded}/{i}/overrides/subPath", label="ConfigMap sub-path",
                           hint="ConfigMap data sources only"),
            ))
            for i in range(rows_of(rows, loaded))
        ),
        *(
            Group(legend=numbered("EmptyDir (one-time)", i, empty_dirs), fields=(
                spec_field(f"{empty_dir}/{i}/sizeLimit", hint="e.g. 1G"),
                spec_field(f"{empty_dir}/{i}/path"),
                spec_field(f"{empty_dir}/{i}/medium", "select", options=MEDIA),
            ))
            for i in range(empty_dirs)
        ),
        *(
            Group(legend=numbered("Volume (one-time)", i, volumes),
                  fields=volume_fields(f"{pvc}/{i}", classes))
            for i in range(volumes)
        ),
    )  # fmt: skip


def volume_fields(
    at: str, classes: Sequence[StorageClassRow], use: Use = "workload"
) -> tuple[Field, ...]:
    """A new volume's fields. With the cluster's classes to choose from (those its `use` may
    use), a configured class's own fields show while it is chosen: only what it lets a volume
    choose, its defaults and bounds said; the others' (and None's) show all."""
    claim = f"{at}/claimInfo"
    path = spec_field(f"{at}/path")
    usable = [c for c in classes if not _denied(c, use)]
    if not usable:
        return (
            spec_field(f"{claim}/storageClass", hint="Empty: None"),
            *_claim_fields(at, StorageClassCustomization(), StorageClassPermissions()),
            path,
        )
    choice = spec_field(f"{claim}/storageClass", "select", options=(
        ("", "None"), *((c.name, f"{c.name} (default)" if c.spec.is_default else c.name)
                        for c in usable)))  # fmt: skip
    configured = [c for c in usable if c.rules is not None and c.rules != _EMPTY]
    plain = ("", *(c.name for c in usable if c not in configured))
    own: list[Field] = []
    for c in configured:
        rules = c.rules or _EMPTY
        fields = _claim_fields(
            at, rules.customization or StorageClassCustomization(),
            rules.permissions or StorageClassPermissions(),
        )  # fmt: skip
        own += [_shown_for(f, claim, (c.name,), c.name) for f in fields]
    every = _claim_fields(at, StorageClassCustomization(), StorageClassPermissions())
    return (choice, *(_shown_for(f, claim, plain, "") for f in every), *own, path)


def _claim_fields(
    at: str, custom: StorageClassCustomization, allowed: StorageClassPermissions
) -> list[Field]:
    claim = f"{at}/claimInfo"
    found = []
    modes = custom.access_mode
    supported = modes.supported_values if modes is not None else None
    offered = tuple((m, label) for m, label in ACCESS_MODES
                    if supported is None or getattr(supported, _snake(m)) is not False)  # fmt: skip
    if len(offered) > 1:
        found.append(spec_field(f"{claim}/accessModes", "multi", options=offered,
                                hint=_default_modes(custom)))  # fmt: skip
    found.append(spec_field(f"{claim}/size", hint=_size_hint(custom)))
    volume = custom.volume_mode
    kinds = volume.supported_values if volume is not None else None
    default = f"Default ({volume.default or 'Filesystem'})" if volume else VOLUME_MODES[0][1]
    volume_modes = (("", default), *((m, label) for m, label in VOLUME_MODES[1:]
                    if kinds is None or getattr(kinds, m.lower()) is not False))  # fmt: skip
    if len(volume_modes) > 2:  # a choice: else the one mode the class supports, unasked
        found.append(spec_field(f"{claim}/volumeMode", "select", options=volume_modes))
    lasting = tuple((value, label) for value, label in PERSISTENCY
                    if (allowed.allowed_for_ephemeral_volumes is not False or not value)
                    and (allowed.allowed_for_persistent_volumes is not False or value))  # fmt: skip
    found.append(spec_field(f"{at}/ephemeral", "select", options=lasting,
                            hint="Ephemeral: deleted whenever the workload stops"))  # fmt: skip
    return found


def _shown_for(field: Field, claim: str, values: tuple[str, ...], variant: str) -> Field:
    return Field(pointer=field.pointer, label=field.label, kind=field.kind, options=field.options,
                 hint=field.hint, when=f"{claim}/storageClass", when_values=values,
                 variant=variant.replace(".", "-"))  # fmt: skip


def _denied(row: StorageClassRow, use: Use) -> bool:
    allowed = row.rules.permissions if row.rules is not None else None
    if allowed is None:
        return False
    return (
        allowed.allowed_for_workloads if use == "workload" else allowed.allowed_for_assets
    ) is False


def _size_hint(custom: StorageClassCustomization) -> str:
    size = custom.claim_size
    if size is None:
        return "e.g. 10Gi"
    said = [f"from {size.min}" if size.min else "", f"to {size.max}" if size.max else "",
            f"in {', '.join(size.supported_units)}" if size.supported_units else "",
            f"in steps of {size.step}" if size.step else "",
            f"empty: {size.default}" if size.default else ""]  # fmt: skip
    return "; ".join(part for part in said if part) or "e.g. 10Gi"


def _default_modes(custom: StorageClassCustomization) -> str:
    default = custom.access_mode.default if custom.access_mode is not None else None
    chosen = [label for m, label in ACCESS_MODES if default and getattr(default, _snake(m))]
    return f"None chosen: {', '.join(chosen)}" if chosen else ""


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
