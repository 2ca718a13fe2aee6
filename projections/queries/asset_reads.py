"""Assets from their catalogue: those of some kinds a filter selects, one by id, and the
templates each is used by."""

from collections.abc import Set
from uuid import UUID

from domain.values import ScopeRef
from projections import asset_catalogue, template_catalogue
from projections.asset_catalogue import AssetFilter, AssetRow
from projections.queries import Reads, Viewer

Usage = dict[UUID, list[tuple[UUID, str]]]


async def usage(reads: Reads, asset_ids: list[UUID], seen: Set[ScopeRef]) -> Usage:
    """For each asset, the templates the caller may see that use it, as (id, name)."""
    async with reads.connection() as conn:
        return await template_catalogue.templates_using(conn, asset_ids, seen)


async def selected(
    reads: Reads, kinds: tuple[str, ...], wanted: AssetFilter, viewer: Viewer
) -> list[AssetRow]:
    """The assets of these kinds the filter selects and the caller may see, by name."""
    async with reads.connection() as conn:
        rows = [
            r for kind in kinds for r in await asset_catalogue.list_assets(conn, kind, wanted.name)
        ]
    chosen = asset_catalogue.select(rows, wanted, viewer.lineages)
    return sorted(
        (row for row in chosen if row.meta.scope_ref in viewer.seen),
        key=lambda r: (r.meta.name, r.kind),
    )


async def one(reads: Reads, kind: str, asset_id: UUID) -> AssetRow | None:
    async with reads.connection() as conn:
        return await asset_catalogue.get_asset(conn, kind, asset_id)


def visible(row: AssetRow, seen: Set[ScopeRef]) -> bool:
    return row.meta.scope_ref in seen
