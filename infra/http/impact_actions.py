"""What a linked asset's update would change in the templates that link it, for a caller:
shared by the API's impact previews (infra/http/impact.py) and the console's."""

from typing import Any
from uuid import UUID

import msgspec

from infra.http.asset_schemas import (
    AssetUpdateMeta,
)
from infra.http.callers import Caller, actor, seen_scopes
from projections.queries import Reads, template_reads
from services.assets import check_update, require_visible
from services.ports.event_store import EventStore
from services.ports.name_lookups import Lookups
from services.templates import preview_asset_update


class Change(msgspec.Struct, frozen=True):
    field: str
    before: Any
    after: Any


class TemplateImpact(msgspec.Struct, frozen=True):
    id: str
    name: str
    changes: list[Change]


class ImpactReport(msgspec.Struct, frozen=True):
    templates: list[TemplateImpact]


async def impact_of(
    request: Caller,
    kind: str,
    asset_id: UUID,
    meta: AssetUpdateMeta,
    spec: Any,
    streams: EventStore,
    reads: Reads,
    names: Lookups,
) -> ImpactReport:
    """Which of the templates the caller may see this update would change, and how (the API's
    preview and the console's alike); an asset it may not see is not found, and values the
    update would refuse are refused here first, so no preview is shown of a save that fails."""
    await require_visible(kind, asset_id, actor(request), streams)  # else a 404, as a PUT's
    await check_update(asset_id, meta.name, meta.description, spec, streams=streams, names=names)
    seen = await seen_scopes(request)  # of the templates, only those it may see
    rows = await template_reads.using_asset(reads, asset_id, seen)
    dependents = [row.template for row in rows]
    impacts = await preview_asset_update(asset_id, spec, dependents, streams=streams)
    return ImpactReport(
        [
            TemplateImpact(
                str(impact.template_id),
                impact.name,
                [Change(c.field, c.before, c.after) for c in impact.changes],
            )
            for impact in impacts
        ]
    )
