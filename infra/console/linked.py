"""The assets a person may load into a template, from the API's own asset reads (which apply
the caller's sight): environments, compute resources and data sources, with their values; and
the registries a template's scope can pick its image from."""

from collections.abc import Mapping
from typing import Any
from uuid import UUID

import msgspec

from domain import registries
from domain.assets import AssetNotFoundError
from domain.combined import from_environment
from domain.specs import ComputeSpec, EnvironmentSpec
from domain.values import AssetKind
from infra.http.adapters import Adapters
from infra.http.asset_actions import one_now, one_visible, visible_rows
from infra.http.callers import Caller
from infra.http.data_source_specs import KINDS as DATA_SOURCE_KINDS
from infra.http.numerals import natural
from projections.asset_catalogue import AssetFilter, AssetRow

LOADABLE = ("environment", "compute", *DATA_SOURCE_KINDS)


def usable_at(kind: str, scope_id: str | None) -> AssetFilter | None:
    """The API's list filter for the assets usable in this scope (its own and its ancestors');
    None for a scope the form could not have sent."""
    try:
        if kind == "tenant":
            return AssetFilter(scope="tenant")
        if kind == "cluster" and scope_id:
            return AssetFilter(cluster_id=UUID(scope_id))
        if kind == "department" and scope_id:
            return AssetFilter(department_id=scope_id)
        if kind == "project" and scope_id and (number := natural(scope_id)) is not None:
            return AssetFilter(project_id=number)
    except ValueError:
        pass
    return None


async def usable_registries(
    request: Caller, adapters: Adapters, kind: str, scope_id: str | None
) -> tuple[tuple[str, str], ...]:
    """The registries, by id and name, a template in this scope may pick its image from (the
    domain refuses any other) among those the caller sees, as the API's list answers them."""
    wanted = usable_at(kind, scope_id)
    if wanted is None:
        return ()
    rows = await visible_rows(request, (registries.KIND,), wanted, adapters.reads)
    return tuple((str(r.asset_id), r.meta.name) for r in rows)


async def registry_name(request: Caller, adapters: Adapters, registry_id: UUID) -> str:
    """A registry's name, read as the API's GET of one registry reads it; one the caller may
    not see (or one since deleted) is said so, with its id, as the API answers both alike."""
    try:
        row = await one_visible(request, registries.KIND, registry_id, adapters.reads)
    except AssetNotFoundError:
        return f"Not visible to you ({registry_id})"
    return row.meta.name


async def loadable(request: Caller, adapters: Adapters) -> list[AssetRow]:
    """Every environment, compute resource and data source the caller may see, by name."""
    return await visible_rows(request, LOADABLE, AssetFilter(), adapters.reads)


async def asset_names(request: Caller, adapters: Adapters) -> dict[UUID, str]:
    return {row.asset_id: row.meta.name for row in await loadable(request, adapters)}


async def copied_now(
    request: Caller, adapters: Adapters, chosen: Mapping[str, AssetKind]
) -> dict[str, AssetRow]:
    """The environments and compute resources saved as copies (`chosen`: id by kind), as their
    streams have them now, never the catalogue's copy, which may trail; one the caller may not
    see is left out, for the save to refuse as the link it then is."""
    found: dict[str, AssetRow] = {}
    for asset_id, kind in chosen.items():
        try:
            found[asset_id] = await one_now(request, kind, UUID(asset_id), adapters.streams)
        except (ValueError, AssetNotFoundError):
            continue
    return found


def as_template_values(row: AssetRow) -> dict[str, Any]:
    """An environment's or compute resource's values in the template spec's shape: what a
    linked asset puts in the combined spec, and what "use without linking" copies."""
    if isinstance(row.spec, EnvironmentSpec):
        return from_environment(row.spec)
    if isinstance(row.spec, ComputeSpec):
        return {"compute": msgspec.to_builtins(row.spec)}
    return {}
