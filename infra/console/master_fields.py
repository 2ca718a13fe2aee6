"""The master's own setup, when it differs from the workers': every field of the workers' sections
that MasterTemplateSpec has, at `/master/spec`, and its data sources at `/master/assets`; none of
the workload-wide ones (docs/decisions/0030-console-forms.md)."""

from collections.abc import Mapping, Sequence
from typing import Final

from infra.console.form_fields import (
    NEW,
    Group,
    compute_fields,
    environment_fields,
    metadata_fields,
    scheduling_fields,
)
from infra.console.form_rows import Rows
from infra.console.image_choices import CUSTOM, Options
from infra.console.storage_fields import storage_fields
from projections.storage_class_catalogue import StorageClassRow

MASTER: Final = "/master/spec"


def master_fields(
    rows: Rows = NEW,
    *,
    images: Options = (CUSTOM,),
    registries: Options = (),
    held: Mapping[str, object] | None = None,
    gpu_limits: bool = False,
    sources: Options = (),
    pools: Options = (),
    classes: Sequence[StorageClassRow] = (),
) -> dict[str, tuple[Group, ...]]:
    """The master's sections, as the workers' are named (environment, compute, scheduling,
    storage, general)."""
    return {
        "environment": environment_fields(
            MASTER, rows, images=images, registries=registries, held=held
        ),
        "compute": compute_fields(MASTER, gpu_limits=gpu_limits, rows=rows),
        "scheduling": scheduling_fields(MASTER, rows, pools),
        "storage": storage_fields(sources, rows, MASTER, "/master/assets", classes),
        "general": metadata_fields(MASTER, rows),
    }
