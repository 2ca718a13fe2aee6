"""The template form's "Load from existing" pane: the environments and compute resources the scope
can use, as the API lists them to the caller, each summarised; it only fills the form's select
and link-or-copy choice, so the choice is decided exactly as when the select is used."""

import msgspec

from domain.specs import ComputeSpec, EnvironmentSpec
from infra.console.linked import usable_at
from infra.http.adapters import Adapters
from infra.http.asset_actions import visible_rows
from infra.http.callers import Caller
from projections.asset_catalogue import AssetRow


class PaneItem(msgspec.Struct, frozen=True):
    """One asset in the pane: its id (the select's value), its name and its summary."""

    value: str
    name: str
    summary: str


def _number(value: float) -> str:
    return f"{value:g}"


def _range(request: object, limit: object, unit: str = "") -> str | None:
    """A request and its limit as a person reads them ("2 to 4 cores"); None where neither is."""
    shown = [
        _number(v) if isinstance(v, (int, float)) else str(v)
        for v in (request, limit)
        if v is not None
    ]
    return f"{' to '.join(shown)}{unit}" if shown else None


def environment_summary(row: AssetRow) -> str:
    """An environment's image and the framework it is for."""
    spec, kinds = row.spec, row.meta.workload_supported_types
    image = spec.image if isinstance(spec, EnvironmentSpec) and spec.image else "no image"
    framework = kinds.dist_framework if kinds and kinds.dist_framework else "any"
    return f"Image {image} · Framework {framework}"


def compute_summary(row: AssetRow) -> str:
    """What a compute resource gives each pod: its GPUs, CPU and memory."""
    spec = row.spec
    if not isinstance(spec, ComputeSpec):
        return ""
    gpus = f"GPU devices per pod {spec.gpu_devices_request or 0}"
    if spec.gpu_request_type == "portion" and spec.gpu_portion_request is not None:
        gpus += f" (portion {_number(spec.gpu_portion_request)} each)"
    elif spec.gpu_request_type == "memory" and spec.gpu_memory_request:
        gpus += f" ({spec.gpu_memory_request} of GPU memory each)"
    cpu = _range(spec.cpu_core_request, spec.cpu_core_limit, " cores")
    memory = _range(spec.cpu_memory_request, spec.cpu_memory_limit)
    return " · ".join(
        part
        for part in (gpus, f"CPU {cpu}" if cpu else None, f"Memory {memory}" if memory else None)
        if part
    )


async def pane_items(
    request: Caller, adapters: Adapters, kind: str, scope_id: str | None
) -> dict[str, tuple[PaneItem, ...]]:
    """The pane's environments and compute resources for a template in this scope; none for a
    scope the form could not have sent."""
    wanted = usable_at(kind, scope_id)
    rows = (
        []
        if wanted is None
        else await visible_rows(request, ("environment", "compute"), wanted, adapters.reads)
    )
    return {
        "environment": tuple(
            PaneItem(str(r.asset_id), r.meta.name, environment_summary(r))
            for r in rows
            if r.kind == "environment"
        ),
        "compute": tuple(
            PaneItem(str(r.asset_id), r.meta.name, compute_summary(r))
            for r in rows
            if r.kind == "compute"
        ),
    }
