"""What a submission runs: the template's combined specs with the submission's own values laid
over them (the same precedence as assets under a template), checked by the template rules, the
same ones a template's `runnable` reports.
"""

from typing import TypeVar
from uuid import UUID

import msgspec

from domain.combined import DATA_VOLUME, Combined, master_copy, overlay, with_workload_wide
from domain.events import AssetVersion, WorkloadSnapshot
from domain.mandatory_fields import pointer, unset
from domain.template_rules import (
    WORKLOAD_WIDE,
    InvalidTemplateError,
    check_complete,
    check_master_copies,
    unset_values,
    without_client_defaults,
)
from domain.template_specs import (
    DataSourceLink,
    DataSourceOverrides,
    DistributedTemplateSpec,
    MasterSection,
    MasterTemplateSpec,
    TemplateAssets,
)
from domain.templates import TemplateBody
from domain.workloads import InvalidWorkloadError

_Spec = TypeVar("_Spec", DistributedTemplateSpec, MasterTemplateSpec)


class Overrides(msgspec.Struct, frozen=True, kw_only=True):
    """The submission's own `spec`, `masterSpecSameAsWorker` and `masterSpec`."""

    spec: DistributedTemplateSpec | None = None
    master_spec_same_as_worker: bool | None = None
    master_spec: MasterTemplateSpec | None = None


def snapshot_of(
    base: Combined,
    base_same_as_worker: bool,
    overrides: Overrides,
    *,
    template_id: UUID | None = None,
    template_version: int | None = None,
    asset_versions: tuple[AssetVersion, ...] = (),
) -> WorkloadSnapshot:
    """The resolved snapshot, or InvalidWorkloadError naming the request field at fault
    (including why the result could not run)."""
    try:
        check_master_copies(overrides.master_spec, "/masterSpec")
    except InvalidTemplateError as error:
        raise InvalidWorkloadError(error.field, str(error).split(": ", 1)[-1]) from None
    # An item laid over the template's replaces it whole (by name): it is complete on its own.
    for at, given in (("/spec", overrides.spec), ("/masterSpec", overrides.master_spec)):
        missing = None if given is None else unset(given, items_only=True)
        if missing is not None:
            raise InvalidWorkloadError(pointer(at, missing[0]), missing[1])
    worker = msgspec.to_builtins(base.spec)
    if overrides.spec is not None:
        overlay(worker, msgspec.to_builtins(without_client_defaults(overrides.spec)))
    spec = msgspec.convert(worker, DistributedTemplateSpec)
    same = (
        base_same_as_worker
        if overrides.master_spec_same_as_worker is None
        else overrides.master_spec_same_as_worker
    )
    master: MasterTemplateSpec | None = None
    if same:
        if overrides.master_spec is not None:
            raise InvalidWorkloadError(
                "/masterSpec", "not with masterSpecSameAsWorker: the master is the worker's copy"
            )
        master = master_copy(worker)
    else:
        own = msgspec.to_builtins(base.master) if base.master and not base_same_as_worker else {}
        if overrides.master_spec is not None:
            overlay(own, msgspec.to_builtins(overrides.master_spec))
        wide = with_workload_wide(own, worker) if own else None
        master = msgspec.convert(wide, MasterTemplateSpec) if wide else None
    try:
        check_complete(spec, master, same)
    except InvalidTemplateError as error:
        field = error.field.replace("/master/spec", "/masterSpec", 1)
        field = "/masterSpec" if field == "/master" else field
        raise InvalidWorkloadError(field, str(error).split(": ", 1)[-1]) from None
    problems = "; ".join(unset_values(spec, master, same))
    if problems:
        at = "/templateId" if template_id is not None else "/spec"
        raise InvalidWorkloadError(at, f"the workload cannot run: {problems}")
    return WorkloadSnapshot(
        template_id=template_id,
        template_version=template_version,
        asset_versions=asset_versions,
        spec=spec,
        master_spec_same_as_worker=same,
        master=master,
    )


def template_body_of(snapshot: WorkloadSnapshot) -> TemplateBody:
    """A template body that runs as the workload was submitted: its resolved specs, their data
    volumes mounted from the assets block (where a template mounts them), and the master without
    the whole workload's values (the worker spec holds those)."""
    spec, volumes = _mounted_apart(snapshot.spec)
    same = snapshot.master_spec_same_as_worker
    master = None
    if not same and snapshot.master is not None:
        own, master_volumes = _mounted_apart(snapshot.master)
        own = msgspec.structs.replace(own, **dict.fromkeys(WORKLOAD_WIDE))
        master = MasterSection(spec=own, assets=master_volumes)
    return TemplateBody(spec=spec, assets=volumes, master_spec_same_as_worker=same, master=master)


def _mounted_apart(spec: _Spec) -> tuple[_Spec, TemplateAssets | None]:
    """The spec without its mounted data volumes, and those as the assets block's links."""
    volumes = spec.storage.data_volume if spec.storage is not None else None
    links = tuple(
        DataSourceLink(
            id=v.id,
            kind=DATA_VOLUME,
            overrides=DataSourceOverrides(container_path=v.mount_path),
        )
        for v in volumes or ()
        if v.id is not None and not v.exclude
    )
    if spec.storage is None or not links:
        return spec, None
    kept = tuple(v for v in volumes or () if v.id is None or v.exclude) or None
    storage = msgspec.structs.replace(spec.storage, data_volume=kept)
    return msgspec.structs.replace(spec, storage=storage), TemplateAssets(datasources=links)
