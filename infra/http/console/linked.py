"""The assets a person may load into a template, from the API's own asset reads (which apply
the caller's sight): environments, compute resources and data sources, with their values."""

from typing import Any
from uuid import UUID

import msgspec

from domain.combined import from_environment
from domain.specs import ComputeSpec, EnvironmentSpec
from infra.http.adapters import Adapters
from infra.http.assets import visible_rows
from infra.http.callers import Caller
from infra.http.data_sources import KINDS as DATA_SOURCE_KINDS
from projections.asset_catalogue import AssetFilter, AssetRow

LOADABLE = ("environment", "compute", *DATA_SOURCE_KINDS)


async def loadable(request: Caller, adapters: Adapters) -> list[AssetRow]:
    """Every environment, compute resource and data source the caller may see, by name."""
    return await visible_rows(request, LOADABLE, AssetFilter(), adapters.resources)


async def asset_names(request: Caller, adapters: Adapters) -> dict[UUID, str]:
    return {row.asset_id: row.meta.name for row in await loadable(request, adapters)}


def as_template_values(row: AssetRow) -> dict[str, Any]:
    """An environment's or compute resource's values in the template spec's shape: what a
    linked asset puts in the combined spec, and what "use without linking" copies."""
    if isinstance(row.spec, EnvironmentSpec):
        return from_environment(row.spec)
    if isinstance(row.spec, ComputeSpec):
        return {"compute": msgspec.to_builtins(row.spec)}
    return {}
