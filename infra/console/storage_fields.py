"""Data & storage in the template form: the data sources a template loads (with their
per-template overrides), and what it configures once itself: EmptyDirs and new volumes (a claim
of its own, the guide's "Volume")."""

from typing import Final

from infra.console.form_fields import NEW, Group, numbered, spec_field
from infra.console.form_rows import Rows, rows_of
from infra.console.image_choices import Options

MEDIA: Final = (("", "Disk-backed storage"), ("Memory", "Memory-backed storage"))
# A new volume's access modes, each a member of the spec's claimInfo.accessModes.
ACCESS_MODES: Final = (("readWriteOnce", "Read-write by one node"),
                       ("readOnlyMany", "Read-only by many nodes"),
                       ("readWriteMany", "Read-write by many nodes"))  # fmt: skip
VOLUME_MODES: Final = (("", "Default (Filesystem)"), ("Filesystem", "Filesystem"),
                       ("Block", "Block"))  # fmt: skip
PERSISTENCY: Final = (("", "Persistent"), ("true", "Ephemeral"))


def storage_fields(
    sources: Options, rows: Rows = NEW, at: str = "/spec", assets: str = "/assets"
) -> tuple[Group, ...]:
    """Data sources to load (with their overrides) under `assets`, and one-time EmptyDirs and
    new volumes in the spec at `at` (the workers', or the master's)."""
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
            Group(legend=numbered("Volume (one-time)", i, volumes), fields=(
                spec_field(f"{claim}/storageClass", hint="Empty: None"),
                spec_field(f"{claim}/accessModes", "multi", options=ACCESS_MODES),
                spec_field(f"{claim}/size", hint="e.g. 10Gi"),
                spec_field(f"{claim}/volumeMode", "select", options=VOLUME_MODES),
                spec_field(f"{pvc}/{i}/path"),
                spec_field(f"{pvc}/{i}/ephemeral", "select", options=PERSISTENCY,
                           hint="Ephemeral: deleted whenever the workload stops"),
            ))
            for i in range(volumes)
            for claim in (f"{pvc}/{i}/claimInfo",)
        ),
    )  # fmt: skip
